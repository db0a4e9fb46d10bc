package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// TestTheCompletionHandsTheRunWhatItRead: a completion that writes nothing hands the run the
// record it read, the facts it computed of it (the chain verified, the latest run) and the task's
// events it read of the log, so that the run reads and verifies none of them again. One that
// writes something hands nothing: the run reads the task's files afresh.
func TestTheCompletionHandsTheRunWhatItRead(t *testing.T) {
	f := newFixture(t, true)
	task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
	res, err := Run(t.Context(), task, Options{})
	require.NoError(t, err)

	notes, loaded, err := complete(task.Project, testMission, testTask, testTaskDir, testNow, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, notes, "nothing to complete")
	require.NotNil(t, loaded)
	require.NotNil(t, loaded.facts)
	assert.NoError(t, loaded.facts.ChainErr)
	require.True(t, loaded.facts.HaveRun)
	assert.Equal(t, res.RunID, loaded.facts.LastRun.RunID)
	assert.Equal(t, loaded.rec.History(), loaded.facts.History, "the facts are the record's")
	require.NotNil(t, loaded.events)
	var hashes []string
	for _, e := range loaded.events.Hashes {
		hashes = append(hashes, e.Hash)
	}
	assert.Contains(t, hashes, res.Hash, "the run's gate_result event")

	// Control: with the event log gone, the completion logs the run's events again, and hands
	// nothing over.
	require.NoError(t, os.Remove(f.Path(".geas/"+record.EventsFile)))
	notes, loaded, err = complete(task.Project, testMission, testTask, testTaskDir, testNow, nil, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, notes)
	assert.Nil(t, loaded)
}

// TestOnlyAGateRunReadsTheOtherTasksWithItsRecords: under its lock, a gate run of a task whose
// contract names a base reads the mission's other tasks in the same step as its own records,
// and hands them to the snapshot with the contract it read; a command that takes the lock and
// evaluates nothing (Lock: approve, grant, revalidate, transition) reads no other task.
func TestOnlyAGateRunReadsTheOtherTasksWithItsRecords(t *testing.T) {
	f := newFixture(t, true)
	task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
	res, err := Run(t.Context(), task, Options{})
	require.NoError(t, err)
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %v", causeCodes(res.Causes))
	src := f.Path(".geas/" + testTaskDir)
	require.NoError(t, os.CopyFS(filepath.Join(filepath.Dir(src), "other"), os.DirFS(src)))

	lock, notes, loaded, err := lockTask(t.Context(), task, nil)
	require.NoError(t, err)
	lock.Unlock()
	assert.Empty(t, notes)
	require.NotNil(t, loaded)
	assert.False(t, loaded.reads.OthersRead, "a command that evaluates nothing reads no other task")
	assert.Empty(t, loaded.reads.Others)

	lock, notes, loaded, err = lockTask(t.Context(), task, &Options{})
	require.NoError(t, err)
	defer lock.Unlock()
	assert.Empty(t, notes)
	require.NotNil(t, loaded)
	require.NotNil(t, loaded.contract, "the run's contract, read under the lock")
	require.NotEmpty(t, loaded.contract.Contract.BaseSnapshot)
	assert.NotEmpty(t, loaded.contract.Contract.EscalationPolicy, "Parse sets the policy in force")
	assert.True(t, loaded.reads.OthersRead, "a gate run of a task with a base reads the others")
	require.Len(t, loaded.reads.Others, 1)
	assert.Equal(t, "other", loaded.reads.Others[0].ID)
	require.NotNil(t, loaded.reads.Others[0].Facts)
}
