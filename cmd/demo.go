package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/internal/demo"
)

type demoOptions struct {
	keep string
}

func newDemoCmd(g *globalOptions) *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo [--keep DIR]",
		Short: "Build a small project with five tasks and gate each: pass, fail, block, error, and a rewritten test caught",
		Long: `Build a throw-away project — a shell greeter in a real git repository (one commit per
task) and a .geas mission with five tasks, one per verdict and one whose builder rewrote a failing
test to print ok — gate each task once (recorded runs, as geas gate does), and explain why each got
its verdict. Needs no network, no git binary and no
git configuration; only sh, which eval commands always need.

The project lives in a temporary directory that is removed at the end, unless --keep DIR names
a directory (new or empty) to build it in, so you can read the files and run geas on them.

Exits 0 when the five verdicts are exactly pass, fail, block, error and fail, 1 otherwise.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), g, o)
		},
	}
	c.Flags().StringVar(&o.keep, "keep", "", "build the project in `DIR` (must not exist or be empty) and keep it")
	return c
}

// demoOutcome is a task's line of the --format json report.
type demoOutcome struct {
	Task     string       `json:"task"`
	Want     string       `json:"expected"`
	Verdict  string       `json:"verdict"`
	ExitCode int          `json:"exit_code"`
	Causes   []gate.Cause `json:"causes"`
}

func runDemo(ctx context.Context, g *globalOptions, o demoOptions) error {
	tasks, err := demo.Tasks()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return runDemoTasks(ctx, g, o, tasks)
}

// demoRun is a task of the demo as it was gated: its commit and the gate's result.
type demoRun struct {
	task demo.Task
	head string
	res  *gate.Result
}

// runDemoTasks builds the demo project with tasks, gates each and explains the verdicts. It fails
// (exit 1) when a task does not get the verdict it was built for.
func runDemoTasks(ctx context.Context, g *globalOptions, o demoOptions, tasks []demo.Task) error {
	dir, cleanup, err := demoDir(o.keep)
	if err != nil {
		return err
	}
	defer cleanup()

	runs, err := gateDemoTasks(ctx, g, dir, tasks)
	if err != nil {
		return err
	}
	var outcomes []demoOutcome
	var wrong []string
	for _, r := range runs {
		got := string(r.res.Verdict)
		if got != r.task.Want {
			wrong = append(wrong, fmt.Sprintf("%s got %s, want %s", r.task.ID, got, r.task.Want))
		}
		outcomes = append(outcomes, demoOutcome{Task: r.task.ID, Want: r.task.Want, Verdict: got, ExitCode: r.res.Verdict.ExitCode(), Causes: r.res.Causes})
	}

	ok := len(wrong) == 0
	if g.format == formatJSON {
		kept := ""
		if o.keep != "" {
			kept = dir
		}
		if err := writeJSON(g.stdout, map[string]any{"ok": ok, "kept": kept, "mission_id": demo.Mission, "tasks": outcomes}); err != nil {
			return err
		}
	} else {
		writeDemoText(g.stdout, dir, o.keep != "", runs)
	}
	if !ok {
		// With --format json the document above already says ok: false; a second one would not parse.
		return &exitError{code: ExitRefused, err: fmt.Errorf("demo is broken: %s", strings.Join(wrong, "; ")), silent: g.format == formatJSON}
	}
	return nil
}

// gateDemoTasks builds the demo project in dir and gates each task once, recorded, as geas gate
// does. A verdict is about one commit, and the working tree must be that commit (SPEC §2.7): each
// task is committed, then gated with its commit checked out, as a user would do.
func gateDemoTasks(ctx context.Context, g *globalOptions, dir string, tasks []demo.Task) ([]demoRun, error) {
	p, err := demo.Start(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	dg := *g
	dg.dir = dir
	var runs []demoRun
	for _, t := range tasks {
		head, err := p.Add(t)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		ref, err := dg.openTask(demo.Mission, t.ID)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		res, err := gate.Run(ctx, ref.ref(), gate.Options{})
		ref.Close()
		if err != nil {
			return nil, &exitError{code: ExitError, err: fmt.Errorf("demo: gate %s: %w", t.ID, err)}
		}
		runs = append(runs, demoRun{task: t, head: head, res: res})
	}
	return runs, nil
}

// writeDemoText explains the runs in text: each task's verdict, its story and causes, and what the
// run recorded; then where the project is, or how to keep it.
func writeDemoText(w io.Writer, dir string, kept bool, runs []demoRun) {
	where := "a temporary directory that is removed at the end"
	if kept {
		where = dir
	}
	fmt.Fprintln(w, demoWrap("", "", fmt.Sprintf("geas demo: mission %q, five tasks on a shell greeter in a git repository (one commit per task), built in %s. Each task is gated once and recorded, as geas gate does.", demo.Mission, where)))
	for i, r := range runs {
		fmt.Fprintf(w, "\n%d. %s: %s (exit %d) - %s\n", i+1, r.task.ID, strings.ToUpper(string(r.res.Verdict)), r.res.Verdict.ExitCode(), r.task.Title)
		fmt.Fprintln(w, demoWrap("   ", "   ", r.task.Story))
		for _, c := range r.res.Causes {
			fmt.Fprintln(w, demoWrap("   cause: ", "          ", fmt.Sprintf("%s (%s) %q", c.Code, c.Check, c.Detail)))
		}
		fmt.Fprintln(w, "   "+demoOutcomeLine(r.res))
	}
	fmt.Fprintln(w)
	if kept {
		fmt.Fprintf(w, "The project is in %s. Each run is recorded in .geas/missions/%s/tasks/*/record.json.\n"+
			"A verdict is about one commit, and the working tree is now the last task's: to gate %s again,\n"+
			"check its commit out first: git -C %s checkout -q %s && geas -C %s gate --task %s\n",
			dir, demo.Mission, runs[1].task.ID, dir, runs[1].head, dir, runs[1].task.ID)
	} else {
		fmt.Fprintf(w, "Run geas demo --keep DIR to keep the project and read its contracts, evidence, records and\neval logs, or gate its tasks yourself.\n")
	}
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
func demoOutcomeLine(res *gate.Result) string {
	line := fmt.Sprintf("%d of %d blocking checks passed; retry budget %s -> %s", res.Summary.Passed, res.Summary.Total, gate.BudgetText(res.RetryBudgetBefore), gate.BudgetText(res.RetryBudgetAfter))
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
