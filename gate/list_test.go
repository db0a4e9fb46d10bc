package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyTask copies the example task's contract and record to a new task id with the given state.
func copyTask(t *testing.T, f *fixture, id, state string) {
	t.Helper()
	dir := ".geas/missions/m1/tasks/" + id
	require.NoError(t, os.MkdirAll(f.Path(dir), 0o755))
	for _, name := range []string{"contract.json", "record.json"} {
		f.Write(dir+"/"+name, string(f.Read(".geas/"+testTaskDir+"/"+name)))
		f.EditJSON(dir+"/"+name, func(m map[string]any) { m["task_id"] = id })
	}
	f.EditJSON(dir+"/contract.json", func(m map[string]any) { m["status"] = state })
}

// TestListClassifiesAsAllDoes: geas gate --all --list says of every entry what geas gate --all
// then does with it: the eligible tasks are exactly those All runs, the counted ones those it
// counts, an error entry is an error All did not run, and the ignored files are the same; List
// runs and writes nothing.
func TestListClassifiesAsAllDoes(t *testing.T) {
	f := newFixture(t, false)
	copyTask(t, f, "t2", "implementing") // not ready
	copyTask(t, f, "t3", "verified")     // re-checked: a hand-set verified, an error All shows
	copyTask(t, f, "t4", "cancelled")    // cancelled by hand, no event backs it: an error
	copyTask(t, f, "t5", "reviewed")     // implementation_change is gated from integrated
	require.NoError(t, os.MkdirAll(f.Path(".geas/missions/m1/tasks/t6"), 0o755))
	f.Write(".geas/missions/m1/tasks/.DS_Store", "x")
	before, err := filepath.Glob(f.Path(".geas/missions/m1/tasks/*/*"))
	require.NoError(t, err)

	p := f.Open()
	l, err := List(p, testMission)
	require.NoError(t, err)
	after, err := filepath.Glob(f.Path(".geas/missions/m1/tasks/*/*"))
	require.NoError(t, err)
	assert.Equal(t, before, after, "List writes nothing")

	m, err := All(t.Context(), p, testMission, AllOptions{Jobs: 1, DryRun: true})
	require.NoError(t, err)
	require.Len(t, l.Tasks, len(m.Tasks))
	actions := map[string]string{}
	var ran, counted []string
	for i, mt := range m.Tasks {
		lt := l.Tasks[i]
		require.Equal(t, mt.TaskID, lt.TaskID)
		actions[lt.TaskID] = lt.Action
		assert.Equal(t, mt.Ran, lt.Eligible, "%s: eligible is what All runs", lt.TaskID)
		assert.Equal(t, mt.Outcome != OutcomeCancelled, lt.Counted, "%s", lt.TaskID)
		if lt.Action == ActionError {
			assert.Equal(t, "error", mt.Outcome)
			assert.False(t, mt.Ran)
		}
		if mt.Ran {
			ran = append(ran, mt.TaskID)
		}
		if mt.Outcome != OutcomeCancelled {
			counted = append(counted, mt.TaskID)
		}
	}
	assert.Equal(t, ran, l.Eligible)
	assert.Equal(t, counted, l.Counted)
	assert.Equal(t, m.Ignored, l.Ignored)
	assert.Equal(t, map[string]string{"t1": ActionGate, "t2": OutcomeNotReady, "t3": ActionRecheck, "t4": ActionError,
		"t5": OutcomeNotReady, "t6": ActionError}, actions)
	assert.Equal(t, map[string]int{ActionGate: 1, ActionRecheck: 1, OutcomeNotReady: 2, OutcomeCancelled: 0, ActionError: 2}, l.Counts)
}
