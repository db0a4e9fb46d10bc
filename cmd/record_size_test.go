package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// TestTheGateNeverWritesWhatItCannotRead (SPEC §2 invariant 9, §7.1, §7.3): a run with 100,000
// acceptance criteria that nobody verified would quote far more than record.json's 4 MiB limit.
// Its checks are bounded (the criteria past the bound summed in one check that blocks as they
// would), so it is recorded as what it found — block, criterion_unverified, exit 2, no retry
// spent — never turned into an error, and record.json stays within what every reader reads: task
// show, budget grant and the next gate run all read the task.
func TestTheGateNeverWritesWhatItCannotRead(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 criteria: skipped in -short mode")
	}
	dir := gitProject(t)
	const n = 100_000
	editContract(t, dir, func(c map[string]any) {
		criteria := make([]any, n)
		for i := range criteria {
			criteria[i] = fmt.Sprintf("c%d", i)
		}
		c["acceptance_criteria"] = criteria
		c["eval_commands"] = []any{"true"}
	})
	fi, err := os.Stat(filepath.Join(dir, taskDir, "contract.json"))
	require.NoError(t, err)
	require.Less(t, fi.Size(), int64(4<<20), "the contract itself is within its limit")

	for run := 1; run <= 2; run++ {
		code, res := gateTask(t, dir)
		assert.Equal(t, 2, code, "run %d: the exit code is the recorded verdict, block", run)
		assert.Equal(t, "block", res["verdict"], "run %d", run)
		causes, _ := res["causes"].([]any)
		require.NotEmpty(t, causes, "run %d", run)
		var codes []any
		for _, c := range causes {
			codes = append(codes, c.(map[string]any)["code"])
		}
		assert.NotContains(t, codes, "result_too_large", "run %d", run)
		assert.Contains(t, codes, "criterion_unverified", "run %d", run)
		// The example's tester binds one criterion; the other 99,999 are unverified, and those
		// past the bound are counted in one check.
		assert.Contains(t, fmt.Sprint(causes), "criterion_unverified ×", "run %d: the summed check counts them", run)
		assert.Equal(t, res["retry_budget_before"], res["retry_budget_after"], "run %d: a block spends no retry", run)
		checks, _ := res["checks"].([]any)
		assert.LessOrEqual(t, len(checks), 200, "run %d: the checks are bounded", run)

		st, err := os.Stat(filepath.Join(dir, taskDir, "record.json"))
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Size(), int64(record.DefaultMaxBytes), "run %d: record.json is within the read limit", run)
		rec := loadRecord(t, dir)
		raw, ok := rec.GateResult()
		require.True(t, ok, "run %d: the result is recorded", run)
		var stored map[string]any
		require.NoError(t, json.Unmarshal(raw, &stored))
		assert.Equal(t, "block", stored["verdict"])
		runs := 0
		for _, e := range rec.History() {
			if e.Kind == record.KindGateRun {
				runs++
			}
		}
		assert.Equal(t, run, runs, "run %d: each run is in the history", run)

		out, err := exec.Command("geas", "-C", dir, "--format", "json", "task", "show", "--task", "t1").CombinedOutput()
		require.NoError(t, err, "task show reads the task: %s", out)
		assert.Contains(t, string(out), `"last_verdict": "block"`)
		out, err = exec.Command("geas", "-C", dir, "task", "budget", "grant", "--task", "t1", "--retries", "1",
			"--by", "orchestration-authority", "--reason", "test: the record is still readable").CombinedOutput()
		require.NoError(t, err, "budget grant reads and writes the task: %s", out)
		assert.NotContains(t, string(out), "record_invalid")
		// Each run and each grant is one entry.
		out, err = exec.Command("geas", "-C", dir, "--format", "json", "gate", "verify", "--all").CombinedOutput()
		require.NoError(t, err, "verify --all reads the task: %s", out)
		assert.Regexp(t, `"task_id": "t1",\s+"reason": "state integrated, not verified or passed; its history verifies: `+fmt.Sprint(2*run)+` entries verify`, string(out),
			"verify --all reads the record and checks its history")
		assert.NotContains(t, string(out), "record_invalid")
	}
}

// TestAFullHistoryRecordsNothing (SPEC §10, history_full): a run whose entry would take the gate
// history past max_history_bytes is an error (exit 3) that writes nothing: record.json and the
// event log are byte for byte what they were.
func TestAFullHistoryRecordsNothing(t *testing.T) {
	dir := hostileBase(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "gate-policy.json"), []byte(`{"max_history_bytes": 2048}`), 0o644))
	// A missing review blocks every run, and a block is recorded without spending a retry.
	require.NoError(t, os.Remove(filepath.Join(dir, taskDir, "evidence", "qa-engineer.json")))
	code, res := gateTask(t, dir)
	require.Equal(t, 2, code, "the first run fits: %v", res["causes"])
	events := filepath.Join(dir, ".geas", "state", "events.jsonl")
	var rec, ev []byte
	for run := 2; run <= 6; run++ {
		beforeRec, err := os.ReadFile(filepath.Join(dir, taskDir, "record.json"))
		require.NoError(t, err)
		beforeEv, err := os.ReadFile(events)
		require.NoError(t, err)
		code, res = gateTask(t, dir)
		if res["verdict"] == "error" {
			rec, ev = beforeRec, beforeEv
			break
		}
	}
	require.NotNil(t, rec, "the history filled up within six runs")
	assert.Equal(t, 3, code)
	causes, _ := res["causes"].([]any)
	require.NotEmpty(t, causes)
	first, _ := causes[0].(map[string]any)
	assert.Equal(t, "history_full", first["code"])
	assert.Regexp(t, `the gate history holds \d+ bytes and this run's entry adds \d+, over its limit of 2048 bytes: nothing was appended`, first["detail"])
	assert.Nil(t, res["retry_budget_after"], "no budget is recorded")
	afterRec, err := os.ReadFile(filepath.Join(dir, taskDir, "record.json"))
	require.NoError(t, err)
	afterEv, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.Equal(t, string(rec), string(afterRec), "record.json is untouched")
	assert.Equal(t, string(ev), string(afterEv), "no event of an unrecorded run")
	assert.True(t, strings.Contains(fmt.Sprint(res["notes"]), "nothing was recorded"))
}
