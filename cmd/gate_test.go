package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// gitProject is the example project with the greeter sources committed to a fresh git repository,
// so the example task passes the gate once its eval commands succeed.
func gitProject(t *testing.T) string {
	t.Helper()
	dir := copyExample(t)
	require.NoError(t, commitGreeter(dir, []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@geas.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@geas.invalid"}))
	return dir
}

const taskDir = ".geas/missions/m1/tasks/t1"

// editContract applies f to the example task's contract.
// newAttempt changes the qa-engineer's evidence summary, so that the next gate run is a new
// attempt (SPEC §7.1: an unchanged one after a fail is repeated and spends nothing).
func newAttempt(t *testing.T, dir string, n int) {
	t.Helper()
	p := filepath.Join(dir, taskDir, "evidence", "qa-engineer.json")
	var e map[string]any
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &e))
	e["summary"] = fmt.Sprintf("attempt %d", n)
	b, err = json.MarshalIndent(e, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

func editContract(t *testing.T, dir string, f func(c map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, taskDir, "contract.json")
	var c map[string]any
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &c))
	f(c)
	b, err = json.MarshalIndent(c, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// withdrawQA makes the example task's qa-engineer report AC1 as failing: fresh evidence that takes
// a pass back (a re-check judges the commit the pass named, so the working tree cannot).
func withdrawQA(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, taskDir, "evidence", "qa-engineer.json")
	var e map[string]any
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &e))
	e["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "withdrawn"}}
	b, err = json.MarshalIndent(e, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// approve pins the example task's current rules as an authority (geas task approve).
func approve(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("geas", "-C", dir, "task", "approve", "--task", "t1", "--by", "orchestration-authority", "--reason", "test: new rules").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// gateTask runs geas gate on the example task and returns the exit code and the JSON result.
func gateTask(t *testing.T, dir string) (int, map[string]any) {
	t.Helper()
	cmd := exec.Command("geas", "-C", dir, "--format", "json", "gate", "--task", "t1")
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "output %s", out)
	return code, res
}

func loadRecord(t *testing.T, dir string) *record.Record {
	t.Helper()
	p := filepath.Join(dir, taskDir, "record.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	_ = b
	rec, err := record.LoadPath(p)
	require.NoError(t, err)
	return rec
}

// TestBudgetSequenceEscalates: with budget 3, the runs fail, fail, block, error, fail record
// budgets 3→2, 2→1, 1→1, 1→1, 1→0; the task ends escalated with one pending decision record
// naming the escalation policy, and the events match.
func TestBudgetSequenceEscalates(t *testing.T) {
	dir := gitProject(t)
	qa := filepath.Join(dir, taskDir, "evidence", "qa-engineer.json")
	qaBytes, err := os.ReadFile(qa)
	require.NoError(t, err)
	failing := func(c map[string]any) {
		c["eval_commands"] = []any{"exit 1"}
		c["escalation_policy"] = "product-authority-decision"
	}
	editContract(t, dir, failing)

	steps := []struct {
		name           string
		prepare        func()
		verdict        string
		code           int
		before, after  int
		wantNextAction string
	}{
		{"fail", func() {}, "fail", 1, 3, 2, "fix"},
		{"fail again", func() { newAttempt(t, dir, 2) }, "fail", 1, 2, 1, "fix"},
		{"block: the qa review is missing", func() { require.NoError(t, os.Remove(qa)) }, "block", 2, 1, 1, "resolve_block"},
		{"error: an eval command cannot start", func() {
			require.NoError(t, os.WriteFile(qa, qaBytes, 0o644))
			editContract(t, dir, func(c map[string]any) {
				c["eval_commands"] = []any{map[string]any{"run": "true", "workdir": "no-such-dir"}}
			})
			approve(t, dir) // the new rules are an authority's (SPEC §4.4)
		}, "error", 3, 1, 1, "investigate_error"},
		{"fail spends the last retry", func() { editContract(t, dir, failing); approve(t, dir) }, "fail", 1, 1, 0, "escalate"},
	}
	for i, s := range steps {
		s.prepare()
		code, res := gateTask(t, dir)
		assert.Equal(t, s.code, code, "step %d %s: exit code", i+1, s.name)
		assert.Equal(t, s.verdict, res["verdict"], "step %d %s", i+1, s.name)
		assert.EqualValues(t, s.before, res["retry_budget_before"], "step %d %s", i+1, s.name)
		assert.EqualValues(t, s.after, res["retry_budget_after"], "step %d %s", i+1, s.name)
		assert.Equal(t, s.wantNextAction, res["next_action"], "step %d %s", i+1, s.name)
	}

	rec := loadRecord(t, dir)
	require.NoError(t, record.VerifyChain(rec.History()))
	var hist []record.HistoryEntry
	for _, e := range rec.History() {
		if e.Kind != record.KindApproval {
			hist = append(hist, e)
		}
	}
	require.Len(t, hist, 5)
	for i, want := range [][2]int{{3, 2}, {2, 1}, {1, 1}, {1, 1}, {1, 0}} {
		assert.Equal(t, want[0], *hist[i].RetryBudgetBefore, "entry %d", i+1)
		assert.Equal(t, want[1], *hist[i].RetryBudgetAfter, "entry %d", i+1)
	}

	var c struct{ Status string }
	b, err := os.ReadFile(filepath.Join(dir, taskDir, "contract.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &c))
	assert.Equal(t, "escalated", c.Status)

	pending, err := filepath.Glob(filepath.Join(dir, ".geas/missions/m1/decisions/pending/*.json"))
	require.NoError(t, err)
	require.Len(t, pending, 1)
	var dec map[string]any
	b, err = os.ReadFile(pending[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &dec))
	assert.Equal(t, "product-authority-decision", dec["escalation_policy"])
	assert.Equal(t, "pending", dec["status"])
	assert.Equal(t, "t1", dec["task_id"])
	require.Len(t, dec["budget_history"], 5, "every run, the escalating one last")
	lastStep := dec["budget_history"].([]any)[4].(map[string]any)
	assert.EqualValues(t, 1, lastStep["retry_budget_before"])
	assert.EqualValues(t, 0, lastStep["retry_budget_after"])

	counts := map[string]int{}
	f, err := os.Open(filepath.Join(dir, ".geas/state/events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var last map[string]any
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		counts[ev["event_type"].(string)]++
		last = ev
	}
	assert.Equal(t, 5, counts["gate_result"])
	assert.Equal(t, 1, counts["task_transition"])
	assert.Equal(t, 1, counts["escalation"])
	assert.Equal(t, "escalation", last["event_type"])
}

// TestConcurrentGateRunsNeverLoseADecrement: 12 concurrent runs of a failing task with budget 100
// end with one chained history entry and one retry spent per run that judged (the others are the
// same attempt as a recorded fail, and repeat it: SPEC §7.1).
func TestConcurrentGateRunsNeverLoseADecrement(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) {
		c["retry_budget"] = 100
		c["eval_commands"] = []any{"exit 1"}
	})
	const n = 12
	var wg sync.WaitGroup
	codes := make([]int, n)
	repeated := make([]bool, n) // the same attempt as a recorded fail: nothing recorded (SPEC §7.1)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command("geas", "-C", dir, "--format", "json", "gate", "--task", "t1").Output()
			repeated[i] = bytes.Contains(out, []byte(`"repeat_of"`))
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
			}
		}()
	}
	wg.Wait()
	for i, c := range codes {
		assert.Equal(t, 1, c, "run %d should fail", i)
	}
	judged := n
	for _, r := range repeated {
		if r {
			judged--
		}
	}
	rec := loadRecord(t, dir)
	hist := rec.History()
	require.Positive(t, judged)
	require.Len(t, hist, judged, "one entry per run that judged")
	require.NoError(t, record.VerifyChain(hist))
	assert.Equal(t, 100-judged, record.BudgetLeft(100, rec))
	seen := map[string]bool{}
	for i, e := range hist {
		assert.Equal(t, 100-i, *e.RetryBudgetBefore)
		assert.Equal(t, 99-i, *e.RetryBudgetAfter)
		assert.False(t, seen[e.RunID], "run id %s reused", e.RunID)
		seen[e.RunID] = true
	}
	last, _, ok := record.LastRun(rec)
	require.True(t, ok)
	raw, _ := rec.GateResult()
	assert.True(t, strings.Contains(string(raw), last.Hash), "gate_result carries the chain head's hash")
}
