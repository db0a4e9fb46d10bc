package tiers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/record"
)

// TestOnlyATaskWithABaseReadsTheOtherTasks: the other tasks' records are read for attribution
// only when this task's contract names a base (nothing can be attributed out of a change there is
// not), so geas gate --all over tasks without one reads each task's files for its own run only
// and stays linear. The control: the same mission, with a base, reads the other task that passed.
func TestOnlyATaskWithABaseReadsTheOtherTasks(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	src := f.path(".geas/" + testfixture.TaskDir)
	dst := filepath.Join(filepath.Dir(src), "other")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))

	in := f.gather()
	require.NotEmpty(t, in.Contract.BaseSnapshot)
	require.Len(t, in.Others, 1, "with a base, the other task's pass is read")
	require.Equal(t, "other", in.Others[0].ID)

	f.contract(func(m map[string]any) { m["gate_profile"] = "artifact_only"; m["base_snapshot"] = "" })
	in = f.gather()
	require.NotNil(t, in.Contract)
	require.Empty(t, in.Others, "without a base, no other task is read")
}

// TestTheSnapshotReadsThePinnedRulesOnlyOfAPassThatMayAccountForFiles: the snapshot reads, as
// data for attribution, each other task's facts and gate events; the pinned copy of the rules its
// pass was judged by is read only when that pass may account for files of this task: not for a
// pass without its own gate_result event, nor for one whose rules no authority approved and were
// pinned after this task's (attribution refuses those before it asks for the rules). The
// control: once this task has no pin yet, the same pass may account for files, and its pinned
// rules are read.
func TestTheSnapshotReadsThePinnedRulesOnlyOfAPassThatMayAccountForFiles(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	src := f.path(".geas/" + testfixture.TaskDir)
	require.NoError(t, os.CopyFS(filepath.Join(filepath.Dir(src), "other"), os.DirFS(src)))

	in := f.gather()
	require.Len(t, in.Others, 1)
	o := in.Others[0]
	require.NotNil(t, o.Facts, "the other task's facts are read with it")
	require.Equal(t, o.Record.History(), o.Facts.History)
	require.Empty(t, o.Events, "the copy has no events of its own")
	assert.Empty(t, o.Stands.Hash, "a pass without its gate_result event cannot stand")
	assert.Empty(t, o.PinnedFor, "so its pinned rules are not read")

	hist := o.Record.History()
	pass := hist[len(hist)-1]
	require.True(t, pass.IsGateRun() && RecordsPass(pass))
	line := fmt.Sprintf(`{"timestamp":"2026-11-01T10:00:00Z","event_type":"gate_result","mission_id":%q,"task_id":"other","agent":"geas-gate","data":{"run_id":%q,"hash":%q}}`,
		testfixture.Mission, pass.RunID, pass.Hash)
	log, err := os.OpenFile(f.path(".geas/"+record.EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = log.WriteString(line + "\n")
	require.NoError(t, errors.Join(err, log.Close()))

	in = f.gather()
	o = in.Others[0]
	want, err := record.TaskEventHashes(in.Geas, testfixture.Mission, "other")
	require.NoError(t, err)
	require.Len(t, want, 1)
	require.Equal(t, want, o.Events, "its events are those a read of the log finds")
	assert.Equal(t, pass.Hash, o.Stands.Hash, "its pass may stand")
	assert.False(t, o.Approved)
	assert.Contains(t, o.PinnedAfter, "after this task's rules were pinned")
	assert.Empty(t, o.PinnedFor, "pinned after this task's rules: its pinned rules are not read")

	f.remove(taskFile(record.HistoryFile)) // this task has no pin yet
	in = f.gather()
	o = in.Others[0]
	assert.Empty(t, o.PinnedAfter, "every pin is before this task's first")
	assert.Equal(t, pass.RulesSHA256, o.PinnedFor, "its pinned rules are read")
	assert.Empty(t, o.PinnedWhy)
	assert.NotNil(t, o.Pinned["contract"])
}

// TestARunReadsTheOtherTasksWithItsOwnRecordsAndJudgesThemTheSame: the one step that reads a
// run's records under its lock (ReadRecords) reads, for a task whose contract names a base, the
// other tasks of the mission with this task's records, and finds of them exactly what the
// snapshot's own read finds (records, facts, events, the pass that may stand, the order of the
// pins, the pinned rules): attribution judges the same data whichever read made it. This task's
// events are the log's, split per task from the same read. Given no contract (a command that
// evaluates nothing), it reads no other task.
func TestARunReadsTheOtherTasksWithItsOwnRecordsAndJudgesThemTheSame(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	src := f.path(".geas/" + testfixture.TaskDir)
	require.NoError(t, os.CopyFS(filepath.Join(filepath.Dir(src), "other"), os.DirFS(src)))
	hist := f.gather().Others[0].Record.History()
	pass := hist[len(hist)-1]
	line := fmt.Sprintf(`{"timestamp":"2026-11-01T10:00:00Z","event_type":"gate_result","mission_id":%q,"task_id":"other","agent":"geas-gate","data":{"run_id":%q,"hash":%q}}`,
		testfixture.Mission, pass.RunID, pass.Hash)
	log, err := os.OpenFile(f.path(".geas/"+record.EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = log.WriteString(line + "\n")
	require.NoError(t, errors.Join(err, log.Close()))
	f.remove(taskFile(record.HistoryFile)) // this task has no pin: the other pass may account for files

	in := f.gather()
	require.NotEmpty(t, in.Contract.BaseSnapshot)
	require.Len(t, in.Others, 1)
	require.NotEmpty(t, in.Others[0].PinnedFor, "the snapshot reads the other pass's pinned rules")

	r := ReadRecords(f.open(), testMission, testTask, testTaskDir, in.Contract, nil)
	require.True(t, r.OthersRead)
	require.Len(t, r.Others, 1)
	got, want := r.Others[0], in.Others[0]
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.Dir, got.Dir)
	assert.Equal(t, want.Record.History(), got.Record.History())
	assert.Equal(t, want.Facts.History, got.Facts.History)
	assert.Equal(t, want.Events, got.Events)
	assert.Equal(t, want.Stands, got.Stands)
	assert.Equal(t, want.Approved, got.Approved)
	assert.Equal(t, want.PinnedAfter, got.PinnedAfter)
	assert.Equal(t, want.PinnedFor, got.PinnedFor)
	assert.Equal(t, want.PinnedWhy, got.PinnedWhy)
	assert.Equal(t, want.Pinned, got.Pinned)
	require.NotNil(t, r.Events)
	own, err := record.TaskEventHashes(in.Geas, testMission, testTask)
	require.NoError(t, err)
	assert.Equal(t, own, r.Events.Hashes, "this task's events, from the same read of the log")

	none := ReadRecords(f.open(), testMission, testTask, testTaskDir, nil, nil)
	assert.False(t, none.OthersRead)
	assert.Empty(t, none.Others, "no contract: no other task is read")
	assert.NotNil(t, none.Record, "this task's record is read all the same")
}

// TestACommandThatEvaluatesNothingReadsNoOtherTask: approve, grant, revalidate, the hooks' state
// check and the triage of geas gate --all gather a task's own files (GatherOwn) and never read
// the mission's other tasks, which only attribution judges. The control: Gather, for a snapshot
// that is evaluated, reads the other task that passed.
func TestACommandThatEvaluatesNothingReadsNoOtherTask(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	src := f.path(".geas/" + testfixture.TaskDir)
	require.NoError(t, os.CopyFS(filepath.Join(filepath.Dir(src), "other"), os.DirFS(src)))

	own := GatherOwn(f.open(), testMission, testTask, testTaskDir)
	require.NotEmpty(t, own.Contract.BaseSnapshot)
	assert.Empty(t, own.Others)
	assert.Equal(t, f.gather().RulesSHA256, own.RulesSHA256, "its own files are read as Gather reads them")
	assert.Len(t, f.gather().Others, 1, "the control: a snapshot to evaluate reads the other task")
}

// TestTheRecordsReadAnswerWhatTheCompletionAsksOfThePinnedCopy: the read of a run's records reads
// this task's pinned copy only when the completion of its latest entry asks for it (the entry
// that pins the task's rules), for those rules, and answers as record.PinnedHolds does: the copy
// as written holds them, and one edited does not.
func TestTheRecordsReadAnswerWhatTheCompletionAsksOfThePinnedCopy(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	p := f.open()
	r := ReadRecords(p, testMission, testTask, testTaskDir, nil, nil)
	require.NotNil(t, r.Facts)
	require.True(t, r.Facts.Pinned, "the first run pins the rules")
	assert.Equal(t, res.RulesSHA256, r.PinnedFor)
	assert.True(t, r.PinnedHolds)
	assert.Equal(t, record.PinnedHolds(p.Geas, testTaskDir, r.PinnedFor, PinnedMaxBytes), r.PinnedHolds)

	f.write(taskFile(record.PinnedFile), `{"rules_sha256":"x","rules":{"contract":{}}}`)
	r = ReadRecords(f.open(), testMission, testTask, testTaskDir, nil, nil)
	assert.Equal(t, res.RulesSHA256, r.PinnedFor)
	assert.False(t, r.PinnedHolds, "an edited copy does not hold the pinned rules")
}
