package git

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTwo builds a repository of two commits with a Writer and returns their ids.
func writeTwo(t *testing.T, dir string) (first, second string) {
	t.Helper()
	w, err := Init(dir)
	require.NoError(t, err)
	first, err = w.Commit(FileCommit{Message: "one", Files: map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"}})
	require.NoError(t, err)
	second, err = w.Commit(FileCommit{Message: "two", Files: map[string]string{"d/b.txt": "b\nc\n"}})
	require.NoError(t, err)
	return first, second
}

func TestWriterCommitIdsAreTheSameOnEveryMachine(t *testing.T) {
	first, second := writeTwo(t, t.TempDir())
	again1, again2 := writeTwo(t, t.TempDir())
	assert.Equal(t, first, again1)
	assert.Equal(t, second, again2)
	assert.NotEqual(t, first, second)
}

func TestWriterCommitsAreWhatTheReaderSees(t *testing.T) {
	dir := t.TempDir()
	first, second := writeTwo(t, dir)

	repo, err := Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, repo.Close()) })

	head, err := repo.Resolve("main")
	require.NoError(t, err)
	assert.Equal(t, second, head)
	ok, err := repo.IsAncestor(first, second)
	require.NoError(t, err)
	assert.True(t, ok)
	changed, err := repo.ChangedFiles(first, second)
	require.NoError(t, err)
	assert.Equal(t, []string{"d/b.txt"}, changed)
	data, found, err := repo.ReadFileAt(second, "d/b.txt", 1<<10)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "b\nc\n", string(data))

	report, err := repo.CheckWorktree(second, nil)
	require.NoError(t, err)
	assert.True(t, report.Clean(second), "the working tree is the last commit: %+v", report)
}

func TestWriterRefusesACommitWithoutFiles(t *testing.T) {
	w, err := Init(t.TempDir())
	require.NoError(t, err)
	_, err = w.Commit(FileCommit{Message: "empty"})
	assert.Error(t, err)
}
