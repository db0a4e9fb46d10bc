package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

type demoOptions struct {
	keep string
}

func newDemoCmd(g *globalOptions) *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo [--keep DIR]",
		Short: "Build a small project with four tasks and gate each: pass, fail, block and error",
		Long: `Build a throw-away project — a shell greeter in a real git repository (one commit per
task) and a .geas mission with four tasks, one per verdict — gate each task once (recorded runs,
as geas gate does), and explain why each got its verdict. Needs no network, no git binary and no
git configuration; only sh, which eval commands always need.

The project lives in a temporary directory that is removed at the end, unless --keep DIR names
a directory (new or empty) to build it in, so you can read the files and run geas on them.

Exits 0 when the four verdicts are exactly pass, fail, block and error, 1 otherwise.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), g, o)
		},
	}
	c.Flags().StringVar(&o.keep, "keep", "", "build the project in `DIR` (must not exist or be empty) and keep it")
	return c
}

// demoTask is one task of the demo mission and what it shows.
type demoTask struct {
	id, title string
	want      string // the verdict the task is built to get
	story     string // why it gets it, before the gate's own words
	commit    evidence.DemoCommit
	contract  func(base string) map[string]any
	evidence  map[string]map[string]any
}

// demoOutcome is a task's line of the --format json report.
type demoOutcome struct {
	Task     string        `json:"task"`
	Want     string        `json:"expected"`
	Verdict  string        `json:"verdict"`
	ExitCode int           `json:"exit_code"`
	Causes   []tiers.Cause `json:"causes"`
}

func runDemo(ctx context.Context, g *globalOptions, o demoOptions) error {
	return runDemoTasks(ctx, g, o, demoTasks())
}

// runDemoTasks builds the demo project with tasks, gates each and explains the verdicts. It fails
// (exit 1) when a task does not get the verdict it was built for.
func runDemoTasks(ctx context.Context, g *globalOptions, o demoOptions, tasks []demoTask) error {
	dir, cleanup, err := demoDir(o.keep)
	if err != nil {
		return err
	}
	defer cleanup()

	repo, err := evidence.InitDemoRepo(dir)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	base, err := repo.Commit(evidence.DemoCommit{Message: "greeter: greet by name", Files: demoBaseFiles})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := writeDemoCommon(dir); err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	dg := *g
	dg.dir = dir
	var outcomes []demoOutcome
	var results []*tiers.Result
	var wrong []string
	var heads []string // each task's commit, in order
	for _, t := range tasks {
		// A verdict is about one commit, and the working tree must be that commit (SPEC §2.7):
		// each task is committed, then gated with its commit checked out, as a user would do.
		head, err := repo.Commit(t.commit)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := writeDemoTask(dir, t, base, head); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		base = head
		heads = append(heads, head)
		ref, err := dg.openTask(demoMission, t.id)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		res, err := gate.Run(ctx, ref.ref(), gate.Options{})
		ref.Close()
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("demo: gate %s: %w", t.id, err)}
		}
		got := string(res.Verdict)
		if got != t.want {
			wrong = append(wrong, fmt.Sprintf("%s got %s, want %s", t.id, got, t.want))
		}
		outcomes = append(outcomes, demoOutcome{Task: t.id, Want: t.want, Verdict: got, ExitCode: res.Verdict.ExitCode(), Causes: res.Causes})
		results = append(results, res)
	}

	ok := len(wrong) == 0
	if g.format == formatJSON {
		kept := ""
		if o.keep != "" {
			kept = dir
		}
		if err := writeJSON(g.stdout, map[string]any{"ok": ok, "kept": kept, "mission_id": demoMission, "tasks": outcomes}); err != nil {
			return err
		}
	} else {
		w := g.stdout
		where := "a temporary directory that is removed at the end"
		if o.keep != "" {
			where = dir
		}
		fmt.Fprintln(w, demoWrap("", "", fmt.Sprintf("geas demo: mission %q, four tasks on a shell greeter in a git repository (one commit per task), built in %s. Each task is gated once and recorded, as geas gate does.", demoMission, where)))
		for i, oc := range outcomes {
			fmt.Fprintf(w, "\n%d. %s: %s (exit %d) - %s\n", i+1, oc.Task, strings.ToUpper(oc.Verdict), oc.ExitCode, tasks[i].title)
			fmt.Fprintln(w, demoWrap("   ", "   ", tasks[i].story))
			for _, c := range oc.Causes {
				fmt.Fprintln(w, demoWrap("   cause: ", "          ", fmt.Sprintf("%s (%s) %q", c.Code, c.Check, c.Detail)))
			}
			fmt.Fprintln(w, "   "+demoOutcomeLine(results[i]))
		}
		fmt.Fprintln(w)
		if o.keep != "" {
			fmt.Fprintf(w, "The project is in %s. Each run is recorded in .geas/missions/%s/tasks/*/record.json.\n"+
				"A verdict is about one commit, and the working tree is now the last task's: to gate %s again,\n"+
				"check its commit out first: git -C %s checkout -q %s && geas -C %s gate --task %s\n",
				dir, demoMission, tasks[1].id, dir, heads[1], dir, tasks[1].id)
		} else {
			fmt.Fprintf(w, "Run geas demo --keep DIR to keep the project and read its contracts, evidence, records and\neval logs, or gate its tasks yourself.\n")
		}
	}
	if !ok {
		// With --format json the document above already says ok: false; a second one would not parse.
		return &exitError{code: ExitRefused, err: fmt.Errorf("demo is broken: %s", strings.Join(wrong, "; ")), silent: g.format == formatJSON}
	}
	return nil
}

// demoDir is the directory the demo builds in: DIR of --keep (created, or existing and empty), or a
// temporary directory that cleanup removes.
func demoDir(keep string) (dir string, cleanup func(), err error) {
	if keep == "" {
		dir, err := os.MkdirTemp("", "geas-demo-")
		if err != nil {
			return "", nil, err
		}
		return dir, func() { _ = os.RemoveAll(dir) }, nil
	}
	abs, err := filepath.Abs(keep)
	if err != nil {
		return "", nil, usagef("--keep %s: %v", keep, err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", nil, err
		}
	case err != nil:
		return "", nil, usagef("--keep %s: %v", keep, err)
	case len(entries) > 0:
		return "", nil, usagef("--keep %s: directory is not empty", keep)
	}
	return abs, func() {}, nil
}

// demoOutcomeLine is what the run recorded: budget, transition and next action.
func demoOutcomeLine(res *tiers.Result) string {
	line := fmt.Sprintf("%d of %d blocking checks passed; retry budget %s -> %s", res.Summary.Passed, res.Summary.Total, tiers.BudgetText(res.RetryBudgetBefore), tiers.BudgetText(res.RetryBudgetAfter))
	if t := res.Transition; t != nil {
		line += fmt.Sprintf("; task moved %s -> %s", t.From, t.To)
	}
	return line + "; next: " + res.NextAction
}

// demoWrap wraps text at 100 columns: first starts the first line, indent the others.
func demoWrap(first, indent, text string) string {
	const width = 100
	var b strings.Builder
	line := first
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line)
	return b.String()
}

const demoMission = "demo"

// demoBaseFiles is the first commit: the greeter before any task.
var demoBaseFiles = map[string]string{
	".gitignore": ".geas/\n",
	"README.md":  "# greeter\n\n`sh greet.sh NAME` greets NAME.\n",
	"greet.sh":   "#!/bin/sh\necho \"Hello, ${1:-world}!\"\n",
	"test/greet_test.sh": `#!/bin/sh
got=$(sh greet.sh Ada)
[ "$got" = "Hello, Ada!" ] || { echo "FAIL greet: got '$got', want 'Hello, Ada!'"; exit 1; }
echo "ok greet"
`,
}

// demoTasks are the four tasks, in the order of their commits.
func demoTasks() []demoTask {
	return []demoTask{
		{
			id: "shout", title: "Add --shout", want: "pass",
			story: "Done, and shown to be done by someone other than its builder: the gate ran the tests itself, a regex detector found --shout in the README, the qa-engineer verified AC1, and both reviewers scored the rubric above its thresholds.",
			commit: evidence.DemoCommit{Message: "greeter: --shout", Files: map[string]string{
				"greet.sh":  "#!/bin/sh\nif [ \"$1\" = --shout ]; then\n  shift\n  echo \"HELLO, ${1:-world}!\" | tr '[:lower:]' '[:upper:]'\n  exit\nfi\necho \"Hello, ${1:-world}!\"\n",
				"README.md": "# greeter\n\n`sh greet.sh NAME` greets NAME; `sh greet.sh --shout NAME` shouts.\n",
				"test/shout_test.sh": `#!/bin/sh
got=$(sh greet.sh --shout Ada)
[ "$got" = "HELLO, ADA!" ] || { echo "FAIL shout: got '$got', want 'HELLO, ADA!'"; exit 1; }
echo "ok shout"
`,
			}},
			contract: func(base string) map[string]any {
				return demoContract("shout", "Add --shout", base, []any{"sh test/shout_test.sh"},
					[]any{"AC1 --shout prints the greeting in capitals",
						map[string]any{"id": "readme", "criterion": "The README documents --shout",
							"check": map[string]any{"type": "regex_match", "artifact": "README.md", "pattern": "--shout"}}},
					[]string{"greet.sh", "test/", "README.md"})
			},
			evidence: demoReviews("shout", []string{"greet.sh", "README.md", "test/shout_test.sh"}, "pass", 4, 4),
		},
		{
			id: "farewell", title: "Add a farewell", want: "fail",
			story: "The tester's evidence says the tests pass, but the gate runs them itself and farewell_test.sh exits 1: the fresh run is the truth. A fail spends one retry.",
			commit: evidence.DemoCommit{Message: "greeter: farewell", Files: map[string]string{
				"farewell.sh": "#!/bin/sh\necho \"Goodby, ${1:-world}!\"\n",
				"test/farewell_test.sh": `#!/bin/sh
got=$(sh farewell.sh Ada)
[ "$got" = "Goodbye, Ada!" ] || { echo "FAIL farewell: got '$got', want 'Goodbye, Ada!'"; exit 1; }
echo "ok farewell"
`,
			}},
			contract: func(base string) map[string]any {
				return demoContract("farewell", "Add a farewell", base, []any{"sh test/greet_test.sh", "sh test/farewell_test.sh"},
					[]any{"AC1 farewell.sh says goodbye by name"}, []string{"farewell.sh", "test/"})
			},
			evidence: demoReviews("farewell", []string{"farewell.sh", "test/farewell_test.sh"}, "pass", 4, 4),
		},
		{
			id: "french", title: "Greet in French", want: "block",
			story: "The contract requires a design-authority review and none was written: something required is missing, so the gate stops at tier 0, judges nothing and spends no retry.",
			commit: evidence.DemoCommit{Message: "greeter: --fr", Files: map[string]string{
				"greet.sh": "#!/bin/sh\nif [ \"$1\" = --shout ]; then\n  shift\n  echo \"HELLO, ${1:-world}!\" | tr '[:lower:]' '[:upper:]'\n  exit\nfi\nif [ \"$1\" = --fr ]; then\n  shift\n  echo \"Bonjour, ${1:-le monde} !\"\n  exit\nfi\necho \"Hello, ${1:-world}!\"\n",
			}},
			contract: func(base string) map[string]any {
				return demoContract("french", "Greet in French", base, []any{"sh test/greet_test.sh"},
					[]any{"AC1 --fr greets in French"}, []string{"greet.sh"})
			},
			evidence: func() map[string]map[string]any {
				ev := demoReviews("french", []string{"greet.sh"}, "pass", 4, 4)
				delete(ev, "design-authority")
				return ev
			}(),
		},
		{
			id: "benchmark", title: "Time the greeter", want: "error",
			story: "The contract runs its eval command in benchmarks/, which does not exist (the script is in scripts/): the command cannot start, so the gate could not decide and says so rather than guess. No retry spent.",
			commit: evidence.DemoCommit{Message: "scripts: bench.sh", Files: map[string]string{
				"scripts/bench.sh": "#!/bin/sh\ni=0\nwhile [ $i -lt 100 ]; do sh greet.sh Ada >/dev/null; i=$((i+1)); done\necho \"100 greetings\"\n",
			}},
			contract: func(base string) map[string]any {
				return demoContract("benchmark", "Time the greeter", base, []any{map[string]any{"run": "sh bench.sh", "workdir": "benchmarks"}},
					[]any{"AC1 the benchmark greets 100 times"}, []string{"scripts/"})
			},
			evidence: demoReviews("benchmark", []string{"scripts/bench.sh"}, "pass", 4, 4),
		},
	}
}

// demoContract is an implementation_change contract built by a software-engineer, reviewed by a
// design-authority (code_quality) and a qa-engineer (criteria, core_interaction).
func demoContract(id, title, base string, evals, criteria []any, surfaces []string) map[string]any {
	return map[string]any{
		"version": "1.0", "artifact_type": "task_contract", "artifact_id": "tc-" + id,
		"producer_type": "orchestration-authority", "created_at": "2026-01-01T09:00:00Z",
		"task_id": id, "title": title, "goal": title, "task_kind": "implementation",
		"risk_level": "normal", "gate_profile": "implementation_change", "vote_round_policy": "auto",
		"acceptance_criteria": criteria,
		"eval_commands":       evals,
		"eval_timeout":        "1m",
		"rubric": map[string]any{"dimensions": []any{
			map[string]any{"name": "core_interaction", "threshold": 3},
			map[string]any{"name": "code_quality", "threshold": 3},
		}},
		"retry_budget": 3,
		"scope":        map[string]any{"surfaces": surfaces},
		"routing": map[string]any{
			"primary_worker_type":     "software-engineer",
			"required_reviewer_types": []any{"design-authority", "qa-engineer"},
		},
		"base_snapshot": base,
		"status":        "integrated",
	}
}

// demoReviews is the evidence of a task: the implementer's, a qa-engineer who verified AC1 and
// scored core_interaction, and a design-authority who scored code_quality, each on a different
// provider.
func demoReviews(task string, files []string, testerVerdict string, core, quality int) map[string]map[string]any {
	return map[string]map[string]any{
		"software-engineer": {
			"version": "1.0", "agent": "software-engineer", "task_id": task, "role": "implementer",
			"summary": "Implemented " + task, "files_changed": files, "provider_id": "provider-a",
			"criteria_results": []any{map[string]any{"criterion": "AC1", "passed": true, "details": "works on my machine"}},
		},
		"qa-engineer": {
			"version": "1.0", "agent": "qa-engineer", "task_id": task, "role": "tester",
			"summary": "Ran the tests and tried it by hand", "verdict": testerVerdict,
			"criteria_results": []any{map[string]any{"criterion": "AC1", "passed": true, "details": "checked by hand"}},
			"rubric_scores":    []any{map[string]any{"dimension": "core_interaction", "score": core}},
			"provider_id":      "provider-b",
		},
		"design-authority": {
			"version": "1.0", "agent": "design-authority", "task_id": task, "role": "reviewer",
			"summary": "Small and readable", "verdict": "approved", "concerns": []any{},
			"rubric_scores": []any{map[string]any{"dimension": "code_quality", "score": quality}},
			"provider_id":   "provider-c",
		},
	}
}

// writeDemoFile writes v as indented JSON to .geas/name in the demo project dir.
func writeDemoFile(dir, name string, v any) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	rel := filepath.FromSlash(".geas/" + name)
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	return root.WriteFile(rel, append(b, '\n'), 0o644)
}

// writeDemoCommon writes what the whole mission shares: run.json and the debt register.
func writeDemoCommon(dir string) error {
	if err := writeDemoFile(dir, "state/run.json", map[string]any{"mission_id": demoMission}); err != nil {
		return err
	}
	return writeDemoFile(dir, "missions/"+demoMission+"/evolution/debt-register.json", map[string]any{
		"version": "1.0", "artifact_type": "debt_register", "artifact_id": "debt-" + demoMission,
		"producer_type": "design-authority", "scope": "mission", "items": []any{},
	})
}

// writeDemoTask writes a task's contract, record and evidence: its base is the commit before its
// own, its integration head its own commit.
func writeDemoTask(dir string, t demoTask, base, head string) error {
	td := "missions/" + demoMission + "/tasks/" + t.id + "/"
	if err := writeDemoFile(dir, td+"contract.json", t.contract(base)); err != nil {
		return err
	}
	rec := map[string]any{
		"version": "1.0", "task_id": t.id, "created_at": "2026-01-01T09:00:00Z",
		"self_check": map[string]any{
			"confidence": 4, "known_risks": []any{}, "untested_paths": []any{}, "summary": t.title + ": done",
		},
	}
	if err := writeDemoFile(dir, td+"record.json", rec); err != nil {
		return err
	}
	// Beside record.json, as geas task integrate writes it (SPEC §3).
	if err := writeDemoFile(dir, td+record.IntegrationFile, map[string]any{"status": "merged", "branch": "main", "commit": head}); err != nil {
		return err
	}
	for name, ev := range t.evidence {
		if err := writeDemoFile(dir, td+"evidence/"+name+".json", ev); err != nil {
			return err
		}
	}
	return nil
}
