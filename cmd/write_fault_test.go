package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// TestTheExitCodeIsTheRecordedVerdict (SPEC §7.3): an events append that fails
// after the commit point (ENOSPC from the test hook) does not turn a recorded fail into an
// error: the exit code is the verdict recorded, the output says what was not written, and the
// next command on the task logs the missing events.
func TestTheExitCodeIsTheRecordedVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget int
		events []string // the events the next command must add for gate-1
	}{
		{"a fail with retries left", 3, []string{"gate_result"}},
		{"a fail that spends the last retry", 1, []string{"gate_result", "task_transition", "escalation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitProject(t)
			editContract(t, dir, func(c map[string]any) {
				c["retry_budget"] = tc.budget
				c["eval_commands"] = []any{"exit 1"}
			})
			code, out := runGeas(t, dir, []string{envFailAt + "=append state/events.jsonl"}, "gate", "--task", "t1")
			assert.Equal(t, 1, code, "the recorded verdict is fail: %s", out)
			assert.Contains(t, out, "verdict: FAIL")
			assert.Contains(t, out, "an event was not logged")
			assert.Contains(t, out, "no space left on device")
			st := readDurState(t, dir)
			require.Len(t, st.History, 1, "the run is recorded")
			assert.Contains(t, st.History[0], "gate-1 fail")
			assert.Empty(t, st.Events, "no event could be logged")
			if tc.budget == 1 {
				assert.Equal(t, "escalated", st.Status, "the escalation is not lost")
				assert.Equal(t, []string{"esc-t1-gate-1.json"}, st.Decisions)
			}

			// The next command completes the events, once.
			code, out = runGeas(t, dir, nil, durFollowUp...)
			require.Equal(t, 0, code, out)
			assert.Contains(t, out, "logged the gate_result event of gate-1")
			st = readDurState(t, dir)
			var got []string
			for _, e := range st.Events {
				got = append(got, strings.Fields(e)[0])
			}
			assert.Equal(t, tc.events, got)
			code, out = runGeas(t, dir, nil, durFollowUp...)
			require.Equal(t, 0, code, out)
			assert.Equal(t, st, readDurState(t, dir))

			// The next gate run counts from the recorded run: no retry is handed back.
			code, out = runGeas(t, dir, nil, "gate", "--task", "t1")
			if tc.budget == 1 {
				assert.Equal(t, 3, code, "an escalated task is not gated again: %s", out)
				assert.Contains(t, out, "state is escalated")
			} else {
				assert.Equal(t, 1, code, out)
				assert.Contains(t, out, "retry budget: 2 -> 1")
			}
		})
	}

	t.Run("events.jsonl made a directory", func(t *testing.T) {
		dir := gitProject(t)
		editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"exit 1"} })
		events := filepath.Join(dir, ".geas", "state", "events.jsonl")
		require.NoError(t, os.MkdirAll(events, 0o755))
		code, out := runGeas(t, dir, nil, "gate", "--task", "t1")
		// The gate cross-checks the history with the events before it runs: a log it cannot
		// read is an error of the run, and nothing is recorded (no retry spent).
		assert.Equal(t, 3, code, out)
		rec, err := record.LoadPath(filepath.Join(dir, taskDir, "record.json"))
		require.NoError(t, err)
		assert.Empty(t, rec.History(), "an error before the commit point records nothing")
		require.NoError(t, os.Remove(events))
		code, out = runGeas(t, dir, nil, "gate", "--task", "t1")
		assert.Equal(t, 1, code, out)
		assert.Contains(t, out, "retry budget: 3 -> 2")
	})
}

// TestAFullDiskLosesNothing (SPEC §7.3): each file the gate writes on a fail that
// escalates fails in turn with ENOSPC. Before the commit point the run is an error that records
// nothing; from the commit point on, the exit code is the recorded fail, and the next command on
// the task leaves exactly an uninterrupted run's state.
func TestAFullDiskLosesNothing(t *testing.T) {
	sc := durScenarios()[0]
	fresh, noRun, withRun, lines := durRuns(t, sc)
	var names []string
	for _, line := range lines {
		_, name, _ := strings.Cut(line, " ")
		names = append(names, name)
	}
	commit := slices.IndexFunc(names, func(s string) bool { return strings.Contains(s, record.HistoryFile) })
	require.GreaterOrEqual(t, commit, 0)
	for i, step := range names {
		t.Run(step, func(t *testing.T) {
			dir := fresh()
			code, out := runGeas(t, dir, []string{envFailAt + "=" + step}, sc.args...)
			if i <= commit {
				assert.Equal(t, 3, code, "ENOSPC before the commit point is an error: %s", out)
				assert.Contains(t, out, "no space left on device")
			} else {
				assert.Equal(t, sc.code, code, "ENOSPC after the commit point: the recorded verdict: %s", out)
				assert.Contains(t, out, "no space left on device", "the output says what was not written")
			}
			code, out = runGeas(t, dir, nil, durFollowUp...)
			require.Equal(t, 0, code, out)
			if i <= commit {
				assert.Equal(t, noRun, readDurState(t, dir))
			} else {
				assert.Equal(t, withRun, readDurState(t, dir))
			}
		})
	}
}
