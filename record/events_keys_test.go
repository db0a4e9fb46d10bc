package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneReadOfTheLogAnswersBothItsReaders: TaskEvents reads the event log once for the crash
// completion (TaskEventKeys) and the history check (TaskEventHashes), and answers each exactly as
// its own read does: this task's events only, a line spaced differently included, a torn last
// line skipped, the lines numbered over the whole log.
func TestOneReadOfTheLogAnswersBothItsReaders(t *testing.T) {
	root, _ := openRoot(t)
	keys, hashes, err := TaskEvents(root, "m1", "t1")
	require.NoError(t, err)
	assert.Empty(t, hashes, "no log, no events")
	assert.False(t, keys.Has(EventGateResult, "aa", ""))

	require.NoError(t, root.MkdirAll("state", 0o755))
	lines := `{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-1","hash":"aa"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t2","agent":"geas-gate","data":{"run_id":"gate-1","hash":"bb"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m2","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-1","hash":"cc"}}
{"timestamp": "2026-01-01T00:00:00Z", "event_type": "revocation", "mission_id": "m1", "task_id": "t1", "agent": "geas-gate", "data": {"run_id": "gate-2", "hash": "gg"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-0"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"budget_grant","mission_id":"m1","task_id":"t1","agent":"product-authority","data":{"hash":"ee"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","data":{"hash":"ff"`
	require.NoError(t, os.WriteFile(filepath.Join(root.Name(), "state", "events.jsonl"), []byte(lines), 0o644))

	keys, hashes, err = TaskEvents(root, "m1", "t1")
	require.NoError(t, err)
	wantHashes, err := TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	assert.Equal(t, wantHashes, hashes)
	require.NotEmpty(t, hashes)
	assert.Equal(t, 1, hashes[0].Line)
	assert.Contains(t, hashes, EventHash{Line: 4, EventType: "revocation", RunID: "gate-2", Hash: "gg"}, "a line spaced differently is the same event")
	wantKeys, err := TaskEventKeys(root, "m1", "t1")
	require.NoError(t, err)
	assert.Equal(t, wantKeys, keys)
	assert.True(t, keys.Has(EventGateResult, "aa", ""))
	assert.True(t, keys.Has(EventGateResult, "", "gate-0"), "logged without a hash: by its run")
	assert.False(t, keys.Has(EventGateResult, "bb", ""), "another task's")
	assert.False(t, keys.Has(EventGateResult, "cc", ""), "another mission's")

	require.NoError(t, os.Remove(filepath.Join(root.Name(), "state", "events.jsonl")))
	require.NoError(t, os.Mkdir(filepath.Join(root.Name(), "state", "events.jsonl"), 0o755))
	keys, hashes, err = TaskEvents(root, "m1", "t1")
	assert.ErrorContains(t, err, "not a regular file", "a log that cannot be read is an error, not an empty log")
	assert.Nil(t, keys)
	assert.Nil(t, hashes)
}

// TestMissionEventsReadsWhatTheTaskAndMissionReadersRead: the one read of the event log a run makes
// for its records answers what the separate readers answer: the task's keys (TaskEventKeys), its
// hashes (TaskEventHashes) and, with all, every task's of the mission (MissionEventHashes); without
// all, no other task's.
func TestMissionEventsReadsWhatTheTaskAndMissionReadersRead(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll("state", 0o755))
	lines := `{"event_type":"gate_result","mission_id":"m","task_id":"a","agent":"geas-gate","data":{"run_id":"r1","hash":"h1"}}
{"event_type":"gate_result","mission_id":"m","task_id":"b","agent":"geas-gate","data":{"run_id":"r2","hash":"h2"}}
{"event_type":"gate_result","mission_id":"n","task_id":"a","agent":"geas-gate","data":{"run_id":"r3","hash":"h3"}}
{"event_type":"task_transition","mission_id":"m","task_id":"a","agent":"geas-gate","data":{"run_id":"r1"}}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state", "events.jsonl"), []byte(lines), 0o644))
	keys, all, err := MissionEvents(root, "m", "a", true)
	require.NoError(t, err)
	wantKeys, err := TaskEventKeys(root, "m", "a")
	require.NoError(t, err)
	require.Equal(t, wantKeys, keys)
	for _, task := range []string{"a", "b"} {
		want, err := TaskEventHashes(root, "m", task)
		require.NoError(t, err)
		require.NotEmpty(t, want)
		require.Equal(t, want, all[task], "task %s", task)
	}
	mission, err := (*EventIndex)(nil).MissionEventHashes(root, "m")
	require.NoError(t, err)
	require.Equal(t, mission, all)

	_, own, err := MissionEvents(root, "m", "a", false)
	require.NoError(t, err)
	require.Equal(t, map[string][]EventHash{"a": all["a"]}, own, "without all, the task's alone")

	require.NoError(t, os.Remove(filepath.Join(dir, "state", "events.jsonl")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "state", "events.jsonl"), 0o755))
	_, wantErr := TaskEventHashes(root, "m", "a")
	keys, all, err = MissionEvents(root, "m", "a", true)
	require.Error(t, wantErr)
	assert.Equal(t, wantErr.Error(), err.Error(), "a log that cannot be read: TaskEventHashes's error")
	assert.Nil(t, keys)
	assert.Nil(t, all)
}
