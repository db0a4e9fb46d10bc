package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFileAt reads one file as a commit has it, whatever the work tree holds now, and refuses
// what is not a regular file.
func TestReadFileAt(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("sub/.geas/gate-policy.json", `{"shared_globs": ["go.mod"]}`)
	require.NoError(t, os.Symlink("elsewhere", filepath.Join(r.dir, "link")))
	r.write("big.txt", "0123456789")
	first := r.commit("first")
	r.write("sub/.geas/gate-policy.json", `{"shared_globs": ["*"]}`)
	second := r.commit("second")
	r.write("sub/.geas/gate-policy.json", `uncommitted`)
	repo := r.open()

	data, ok, err := repo.ReadFileAt(first, "sub/.geas/gate-policy.json", 1<<20)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, `{"shared_globs": ["go.mod"]}`, string(data))
	data, ok, err = repo.ReadFileAt(second, "./sub/.geas/gate-policy.json", 1<<20)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, `{"shared_globs": ["*"]}`, string(data))

	for _, missing := range []string{"nope.json", "sub/nope/x.json"} {
		_, ok, err = repo.ReadFileAt(first, missing, 0)
		assert.NoError(t, err, missing)
		assert.False(t, ok, missing)
	}
	// A path through a file is not a "no such file" the caller could take for an untracked policy.
	_, ok, err = repo.ReadFileAt(first, "big.txt/x", 0)
	assert.Error(t, err)
	assert.False(t, ok)
	_, _, err = repo.ReadFileAt(first, "link", 0)
	assert.ErrorContains(t, err, "is not a regular file")
	_, _, err = repo.ReadFileAt(first, "sub", 0)
	assert.ErrorContains(t, err, "is not a regular file")
	_, _, err = repo.ReadFileAt(first, "big.txt", 5)
	assert.ErrorContains(t, err, "over the limit of 5")
	_, _, err = repo.ReadFileAt("HEAD", "big.txt", 0)
	assert.ErrorContains(t, err, "not a full commit SHA")

	rel, err := WorkTreeRel(filepath.Join(r.dir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, "sub", rel)
	rel, err = WorkTreeRel(r.dir)
	require.NoError(t, err)
	assert.Equal(t, "", rel)
	_, err = WorkTreeRel(t.TempDir())
	assert.ErrorIs(t, err, ErrNoRepository)
}
