package git

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileChangesAndKindAtSeeWhatTheTreesHold: the changes between two commits name each side's
// kind and id (absent for an added file); KindAt names files, directories and
// absent paths (a path through a file is absent); ReadBlob reads a side's content within a limit.
func TestFileChangesAndKindAtSeeWhatTheTreesHold(t *testing.T) {
	dir := t.TempDir()
	w, err := Init(dir)
	require.NoError(t, err)
	base, err := w.Commit(FileCommit{Message: "base", Files: map[string]string{"test/a_test.sh": "echo a\n", "keep.txt": "k\n", "old.txt": "o\n"}})
	require.NoError(t, err)
	head, err := w.Commit(FileCommit{Message: "head", Files: map[string]string{"test/a_test.sh": "echo ok\n", "new.txt": "o\n"}})
	require.NoError(t, err)
	r, err := Open(dir)
	require.NoError(t, err)
	defer r.Close()

	changes, err := r.FileChanges(base, head)
	require.NoError(t, err)
	byPath := map[string]FileChange{}
	for _, c := range changes {
		byPath[c.Path] = c
	}
	assert.Len(t, changes, 2)
	assert.Equal(t, File, byPath["test/a_test.sh"].From.Kind)
	assert.Equal(t, File, byPath["test/a_test.sh"].To.Kind)
	assert.Equal(t, Absent, byPath["new.txt"].From.Kind)
	data, err := r.ReadBlob(byPath["test/a_test.sh"].To.ID, 100)
	require.NoError(t, err)
	assert.Equal(t, "echo ok\n", string(data))
	_, err = r.ReadBlob(byPath["test/a_test.sh"].To.ID, 3)
	assert.Error(t, err, "over the limit")
	_, err = r.ReadBlob("nothex", 100)
	assert.Error(t, err)

	for name, want := range map[string]EntryKind{"test/a_test.sh": File, "./test/a_test.sh": File, "test": Directory, ".": Directory,
		"nope": Absent, "test/nope.sh": Absent, "keep.txt/x": Absent, "new.txt": Absent} {
		got, err := r.EntryKindAt(base, name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
}
