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
