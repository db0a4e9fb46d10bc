package cmd

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepScript returns the run: | script of the (first) step whose id is id in the workflow or
// action file, with its indentation removed.
func stepScript(t *testing.T, file, id string) string {
	t.Helper()
	return stepScripts(t, file, id)[0]
}

// stepScripts returns the run: | script of every step whose id is id (one a job), in file order.
func stepScripts(t *testing.T, file, id string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, file))
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var scripts []string
	for start, l := range lines {
		if strings.TrimSpace(l) != "id: "+id {
			continue
		}
		found := false
		for i := start; i < len(lines) && !found; i++ {
			if strings.TrimSpace(lines[i]) != "run: |" {
				continue
			}
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " ")) + 2
			var script []string
			for _, l := range lines[i+1:] {
				if strings.TrimSpace(l) != "" && len(l)-len(strings.TrimLeft(l, " ")) < indent {
					break
				}
				script = append(script, strings.TrimPrefix(l, strings.Repeat(" ", indent)))
			}
			scripts, found = append(scripts, strings.Join(script, "\n")), true
		}
		require.True(t, found, "%s: step %s has no run: | script", file, id)
	}
	require.NotEmpty(t, scripts, "%s has a step with id %s", file, id)
	return scripts
}

// TestGateMissionAggregateFailsClosed runs the aggregate job's script of the reusable workflow
// (.github/workflows/gate-mission.yml) with bash and jq over made-up results: it succeeds only
// when the plan succeeded and every counted task reported a pass with exit 0 under its own name;
// a task job that failed, was cancelled or was skipped, a task that never reported (or got no
// job), a result copied from another task, a verdict that is not pass, and a mission with nothing
// to count all fail it.
func TestGateMissionAggregateFailsClosed(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the aggregate script needs it (GitHub's runners have it)", tool)
		}
	}
	script := stepScript(t, ".github/workflows/gate-mission.yml", "check")
	type result struct {
		task, verdict string
		exit          int
	}
	pass := func(task string) result { return result{task, "pass", 0} }
	for _, tc := range []struct {
		name                  string
		plan, tasks, eligible string
		counted               []string
		results               map[string]result // artifact name suffix ("": extracted flat) -> content
		ok                    bool
		why                   string
	}{
		{name: "every task passed", plan: "success", tasks: "success", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"t1": pass("t1"), "t2": pass("t2")}, ok: true},
		{name: "a task never reported", plan: "success", tasks: "success", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"t1": pass("t1")}, why: "t2: no result was reported"},
		{name: "a task failed", plan: "success", tasks: "failure", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"t1": pass("t1"), "t2": {"t2", "fail", 1}}, why: "t2: reported t2 fail, exit t2 1"},
		{name: "a block with exit 0 written by hand", plan: "success", tasks: "success", eligible: "1", counted: []string{"t1"},
			results: map[string]result{"t1": {"t1", "block", 0}}, why: "t1: reported t1 block"},
		{name: "a pass copied from another task", plan: "success", tasks: "success", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"t1": pass("t1"), "t2": pass("t1")}, why: "t2: reported t1 pass"},
		{name: "the task jobs were skipped", plan: "success", tasks: "skipped", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"t1": pass("t1"), "t2": pass("t2")}, why: "the task jobs' result is skipped"},
		{name: "the task jobs were cancelled", plan: "success", tasks: "cancelled", eligible: "1", counted: []string{"t1"},
			results: map[string]result{"t1": pass("t1")}, why: "the task jobs' result is cancelled"},
		{name: "the plan failed", plan: "failure", tasks: "skipped", eligible: "", counted: nil, why: "the plan job's result is failure"},
		{name: "nothing to count", plan: "success", tasks: "skipped", eligible: "0", counted: []string{}, why: "no task to count"},
		{name: "a task not ready got no job", plan: "success", tasks: "skipped", eligible: "0", counted: []string{"t3"},
			why: "t3: no result was reported"},
		{name: "a pass with a non-zero exit code", plan: "success", tasks: "success", eligible: "1", counted: []string{"t1"},
			results: map[string]result{"t1": {"t1", "pass", 3}}, why: "t1: reported t1 pass, exit t1 3"},
		{name: "a lone artifact extracted flat", plan: "success", tasks: "success", eligible: "1", counted: []string{"t1"},
			results: map[string]result{"": pass("t1")}, ok: true},
		{name: "a lone flat artifact of another task", plan: "success", tasks: "success", eligible: "1", counted: []string{"t1"},
			results: map[string]result{"": pass("t2")}, why: "t1: reported t2 pass"},
		{name: "a flat artifact besides two counted tasks", plan: "success", tasks: "success", eligible: "2", counted: []string{"t1", "t2"},
			results: map[string]result{"": pass("t1"), "t2": pass("t2")}, why: "t1: no result was reported"},
		{name: "a counted task besides the passing ones", plan: "success", tasks: "success", eligible: "1", counted: []string{"t1", "t3"},
			results: map[string]result{"t1": pass("t1")}, why: "t3: no result was reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, r := range tc.results {
				art := filepath.Join(dir, "results", "geas-result-"+name)
				if name == "" { // extracted flat into results/, as download-artifact may do with one artifact
					art = filepath.Join(dir, "results")
				}
				require.NoError(t, os.MkdirAll(art, 0o755))
				exitDoc, _ := json.Marshal(map[string]any{"task_id": r.task, "exit_code": r.exit})
				gateDoc, _ := json.Marshal(map[string]any{"task_id": r.task, "verdict": r.verdict})
				require.NoError(t, os.WriteFile(filepath.Join(art, "exit.json"), exitDoc, 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(art, "gate.json"), gateDoc, 0o644))
			}
			counted, _ := json.Marshal(tc.counted)
			if tc.counted == nil {
				counted = nil // the plan failed: its outputs are empty
			}
			output := filepath.Join(dir, "github_output")
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PLAN_RESULT="+tc.plan, "TASK_RESULT="+tc.tasks, "ELIGIBLE_COUNT="+tc.eligible,
				"COUNTED="+string(counted), "GITHUB_OUTPUT="+output)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			written, rerr := os.ReadFile(output)
			require.NoError(t, rerr)
			success := regexp.MustCompile(`(?m)^success=(\w+)$`).FindAllStringSubmatch(string(written), -1)
			require.NotEmpty(t, success, "the script always writes success")
			last := success[len(success)-1][1]
			if tc.ok {
				require.NoError(t, err, "%s", out.String())
				assert.Equal(t, "true", last)
				return
			}
			require.Error(t, err, "the aggregate must fail:\n%s", out.String())
			assert.Equal(t, "false", last)
			assert.Contains(t, out.String(), "::error title=geas gate mission::")
			assert.Contains(t, out.String(), tc.why)
		})
	}
}

// TestGateMissionWorkflowShape: the parts of the reusable workflow that make it fail closed, and
// that actionlint cannot judge, are there: the plan lists with geas gate --all --list, the task
// jobs do not cancel each other, the aggregate always runs, after both.
func TestGateMissionWorkflowShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "gate-mission.yml"))
	require.NoError(t, err)
	wf := string(b)
	for _, want := range []string{
		"  workflow_call:\n",
		"args=(gate --all --list)",
		"      fail-fast: false\n",
		"        task: ${{ fromJSON(needs.plan.outputs.eligible) }}\n",
		"  aggregate:\n    needs: [plan, task]\n    if: always()\n",
		"name: geas-result-${{ matrix.task }}",
		"        id: check\n        if: always()",
	} {
		assert.Contains(t, wf, want)
	}
	action, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	require.NoError(t, err)
	for _, want := range []string{"using: composite", `exit "$code"`, "-o \"junit=$out/junit.xml\" -o \"sarif=$out/gate.sarif\""} {
		assert.Contains(t, string(action), want)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", "ci.yml"))
	require.NoError(t, err)
	assert.Contains(t, string(ci), "\n  merge_group:", "the required checks also run in a merge queue")
}

// TestWorkflowsUseNode24ActionMajors: every action the workflows and action.yml use is at a
// major that runs on Node 24 (the Node 20 majors are deprecated on GitHub's runners), and SARIF
// goes to code scanning through codeql-action v4 (v3 is deprecated).
func TestWorkflowsUseNode24ActionMajors(t *testing.T) {
	least := map[string]int{"actions/checkout": 6, "actions/setup-go": 6, "actions/upload-artifact": 7,
		"actions/download-artifact": 8, "github/codeql-action/upload-sarif": 4}
	uses := regexp.MustCompile(`uses: ([\w./-]+)@v(\d+)`)
	seen := map[string]bool{}
	for _, f := range []string{"action.yml", ".github/workflows/ci.yml", ".github/workflows/gate-mission.yml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		require.NoError(t, err)
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			want, ok := least[m[1]]
			require.True(t, ok, "%s uses %s: add it to this test with its first Node 24 major", f, m[1])
			major, _ := strconv.Atoi(m[2])
			assert.GreaterOrEqual(t, major, want, "%s: %s@v%d", f, m[1], major)
			seen[m[1]] = true
		}
	}
	assert.Len(t, seen, len(least), "every action of the list is used: %v", seen)
}

// TestActionGateStep runs action.yml's gate step with bash, as the runner would, on the example
// project with the geas of this test binary on PATH: the exit code is passed through, the
// outputs name it and the verdict, the reports land in $RUNNER_TEMP/geas-gate (never in the
// working tree), and the job summary is geas's own with github and the text report otherwise; a
// task and all together, or neither, is refused with exit 64.
func TestActionGateStep(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the action's step needs it (GitHub's runners have it)", tool)
		}
	}
	geasBin, err := exec.LookPath("geas")
	if err != nil {
		t.Skip("no geas on PATH (testscript.Main puts this test binary there as geas)")
	}
	script := stepScript(t, "action.yml", "gate")
	for _, tc := range []struct {
		name, task, all, format string
		exit                    int
		verdict                 string
		summary                 string
	}{
		{name: "pass", task: "t2", all: "false", format: "github", exit: 0, verdict: "pass", summary: "## geas gate t2: ✅ PASS"},
		{name: "error", task: "t1", all: "false", format: "text", exit: 3, verdict: "error", summary: "### geas gate\n```text\ngeas gate gate-"},
		{name: "all", task: "", all: "true", format: "json", exit: 3, summary: "overall: FAILURE"},
		{name: "both", task: "t1", all: "true", format: "github", exit: 64},
		{name: "neither", task: "", all: "false", format: "github", exit: 64},
		{name: "a bad format", task: "t2", all: "false", format: "yaml", exit: 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project, temp := t.TempDir(), t.TempDir()
			require.NoError(t, copyTree(exampleDir(t), project))
			output, summary := filepath.Join(temp, "output"), filepath.Join(temp, "summary.md")
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = project
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(geasBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"TASK="+tc.task, "ALL="+tc.all, "MISSION=", "FORMAT="+tc.format, "DRY_RUN=true",
				"RUNNER_TEMP="+temp, "GITHUB_OUTPUT="+output, "GITHUB_STEP_SUMMARY="+summary)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.exit, code, "%s", out.String())
			written, err := os.ReadFile(output)
			require.NoError(t, err)
			assert.Contains(t, string(written), "exit-code="+strconv.Itoa(tc.exit)+"\n")
			if tc.exit == 64 {
				assert.NotContains(t, string(written), "junit=", "no report after a usage error")
				return
			}
			assert.Contains(t, string(written), "junit="+filepath.Join(temp, "geas-gate", "junit.xml")+"\n")
			assert.Contains(t, string(written), "sarif="+filepath.Join(temp, "geas-gate", "gate.sarif")+"\n")
			if tc.verdict != "" {
				assert.Contains(t, string(written), "verdict="+tc.verdict+"\n")
			}
			for _, f := range []string{"junit.xml", "gate.sarif", "gate.txt", "gate.json"} {
				assert.FileExists(t, filepath.Join(temp, "geas-gate", f))
			}
			s, err := os.ReadFile(summary)
			require.NoError(t, err)
			assert.Contains(t, string(s), tc.summary)
			_, err = os.Stat(filepath.Join(project, "geas-gate"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "nothing is written into the working tree")
		})
	}
}

// TestGateMissionInstallFallsBackToSource runs the reusable workflow's install step with bash over
// a fake go (whose module proxy serves nothing unless told to) and a local geas repository: a
// version the proxy serves is installed from it and nothing is fetched; one it cannot serve (a
// tag, a commit, latest) is built from the repository at that ref; a ref that is not there, or
// that would read as an option, fails the step. Both jobs install with the same script.
func TestGateMissionInstallFallsBackToSource(t *testing.T) {
	for _, tool := range []string{"bash", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the install step needs it (GitHub's runners have it)", tool)
		}
	}
	scripts := stepScripts(t, ".github/workflows/gate-mission.yml", "install")
	require.Len(t, scripts, 2, "the plan and the task job install geas")
	assert.Equal(t, scripts[0], scripts[1], "the plan and the task job install geas the same way")
	script := scripts[0]

	base := t.TempDir()
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = filepath.Join(base, "geas"), gitEnv
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	main := filepath.Join(base, "geas", "cmd", "geas", "main.go")
	require.NoError(t, os.MkdirAll(filepath.Dir(main), 0o755))
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(main, []byte("release one\n"), 0o644))
	git("add", ".")
	git("commit", "-q", "-m", "one")
	git("tag", "v1.0.0")
	one := git("rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(main, []byte("the default branch\n"), 0o644))
	git("commit", "-q", "-am", "two")

	bin := filepath.Join(base, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	fakeGo := `#!/bin/sh
echo "go $*" >> "$GO_LOG"
case "$1 $2" in
  "env GOPATH") echo /fake/gopath ;;
  "install ./cmd/geas") cat cmd/geas/main.go >> "$GO_LOG" ;;
  install*) [ "$PROXY" = serves ] || { echo "go: module not found" >&2; exit 1; } ;;
esac
`
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755))

	for _, tc := range []struct {
		name, version, proxy string
		built                string // the source built; "" when none is
		ok                   bool
	}{
		{name: "the proxy serves the version", version: "v1.0.0", proxy: "serves", ok: true},
		{name: "a tag the proxy cannot serve", version: "v1.0.0", built: "release one", ok: true},
		{name: "a commit the proxy cannot serve", version: one, built: "release one", ok: true},
		{name: "latest the proxy cannot serve", version: "latest", built: "the default branch", ok: true},
		{name: "a ref that is not there", version: "v9.9.9"},
		{name: "a ref that reads as an option", version: "--upload-pack=touch /tmp/x"},
		{name: "no version", version: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			goLog, ghPath := filepath.Join(dir, "go.log"), filepath.Join(dir, "github_path")
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(gitEnv, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GO_LOG="+goLog,
				"PROXY="+tc.proxy, "GEAS_VERSION="+tc.version, "GEAS_SOURCE=file://"+filepath.Join(base, "geas"),
				"RUNNER_TEMP="+dir, "GITHUB_PATH="+ghPath)
			out, err := cmd.CombinedOutput()
			log, _ := os.ReadFile(goLog)
			if !tc.ok {
				require.Error(t, err, "the step must fail:\n%s", out)
				assert.NotContains(t, string(log), "install ./cmd/geas", "nothing is built")
				return
			}
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(log), "go install github.com/geas-dev/geas/cmd/geas@"+tc.version+"\n", "the proxy is asked first")
			if tc.built == "" {
				assert.NotContains(t, string(log), "install ./cmd/geas", "a version the proxy serves is not built from source")
			} else {
				assert.Contains(t, string(log), "go install ./cmd/geas\n"+tc.built+"\n")
				assert.Contains(t, string(out), "::notice title=geas gate mission::the module proxy has no geas")
			}
			p, err := os.ReadFile(ghPath)
			require.NoError(t, err)
			assert.Equal(t, "/fake/gopath/bin\n", string(p))
		})
	}
}
