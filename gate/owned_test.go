package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheGatesOwnFilesAreKnownInEverySpelling: OwnedFile names the files only geas writes in a
// task directory however a path spells them (letter case, a trailing dot or space, an NTFS stream,
// a symbolic link into .geas), and names none of the files agents write themselves.
func TestTheGatesOwnFilesAreKnownInEverySpelling(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	geas := filepath.Join(dir, ".geas")
	task := filepath.Join(geas, "missions", "m1", "tasks", "t1")
	require.NoError(t, os.MkdirAll(task, 0o755))
	require.NoError(t, os.Symlink(task, filepath.Join(dir, "link")))
	// Dangling links, which a write follows to create their target: to the history itself, and to
	// a task directory not created yet.
	require.NoError(t, os.Symlink(filepath.Join(task, "gate-history.jsonl"), filepath.Join(dir, "dangling")))
	require.NoError(t, os.Symlink(filepath.Join(geas, "missions", "m1", "tasks", "t9"), filepath.Join(dir, "later")))
	require.NoError(t, os.Symlink("dangling", filepath.Join(dir, "chained")))
	owned := []string{
		filepath.Join(task, "gate-history.jsonl"),
		filepath.Join(task, "GATE-HISTORY.JSONL"),
		filepath.Join(task, "gate-history.jsonl."),
		filepath.Join(task, "gate-history.jsonl "),
		filepath.Join(task, "gate-history.jsonl::$DATA"),
		filepath.Join(task, "gate-logs", "gate-1", "result.json"),
		filepath.Join(task, PinnedFile),
		filepath.Join(task, "record.lock"),
		filepath.Join(task, "record.json.reset-20260101T000000Z"),
		filepath.Join(task, "gate-history.jsonl.reset-20260101T000000Z"),
		filepath.Join(dir, "link", "gate-history.jsonl"),
		filepath.Join(dir, "dangling"),
		filepath.Join(dir, "chained"),
		filepath.Join(dir, "later", "gate-history.jsonl"),
	}
	for _, p := range owned {
		assert.NotEmpty(t, OwnedFile(ResolveExisting(geas), p), p)
	}
	for _, p := range []string{
		filepath.Join(task, "contract.json"),
		filepath.Join(task, "record.json"),
		filepath.Join(task, "evidence", "qa-engineer.json"),
		filepath.Join(task, "evidence", "gate-history.jsonl"),
		filepath.Join(geas, "state", "events.jsonl"),
		filepath.Join(dir, "gate-history.jsonl"),
	} {
		assert.Empty(t, OwnedFile(ResolveExisting(geas), p), p)
	}
}
