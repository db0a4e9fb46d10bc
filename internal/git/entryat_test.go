package git

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEntryAtIsTheSideADiffWouldName: the entry EntryAt finds at a path is the side FileChanges
// names for it (kind and id), byte for byte on the path (a case variant is absent), absent
// through a file or where nothing is.
func TestEntryAtIsTheSideADiffWouldName(t *testing.T) {
	dir := t.TempDir()
	w, err := Init(dir)
	require.NoError(t, err)
	base, err := w.Commit(FileCommit{Message: "base", Files: map[string]string{"keep.txt": "k\n"}})
	require.NoError(t, err)
	head, err := w.Commit(FileCommit{Message: "head", Files: map[string]string{"src/a.txt": "a\n", "b.txt": "a\n"}})
	require.NoError(t, err)
	r, err := Open(dir)
	require.NoError(t, err)
	defer r.Close()

	changes, err := r.FileChanges(base, head)
	require.NoError(t, err)
	require.NotEmpty(t, changes)
	for _, c := range changes {
		got, err := r.EntryAt(head, c.Path)
		require.NoError(t, err)
		assert.Equal(t, c.To, got, c.Path)
		got, err = r.EntryAt(base, c.Path)
		require.NoError(t, err)
		assert.Equal(t, c.From, got, c.Path)
	}
	a, err := r.EntryAt(head, "src/a.txt")
	require.NoError(t, err)
	b, err := r.EntryAt(head, "b.txt")
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same content is the same entry, wherever it is")
	for _, name := range []string{"SRC/a.txt", "src/A.txt", "keep.txt/x", "nope"} {
		got, err := r.EntryAt(head, name)
		require.NoError(t, err, name)
		assert.Equal(t, FileSide{}, got, name)
	}
	dirSide, err := r.EntryAt(head, "src")
	require.NoError(t, err)
	assert.Equal(t, Directory, dirSide.Kind)
	_, err = r.EntryAt("0123456789012345678901234567890123456789", "keep.txt")
	assert.Error(t, err, "no such commit")
}
