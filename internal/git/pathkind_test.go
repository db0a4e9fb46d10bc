package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKindAtTellsDirectoriesFromFiles: KindAt answers from the commit's tree, case-sensitively,
// and a path below a file is absent (a file replaced by a directory is a file in the commit before).
func TestKindAtTellsDirectoriesFromFiles(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("README.md", "# x\n")
	r.write("docs/guide.md", "guide\n")
	r.write("docs/a/b.md", "b\n")
	require.NoError(t, os.Symlink("docs", filepath.Join(r.dir, "link")))
	first := r.commit("first")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "README.md")))
	r.write("README.md/install.sh", "#!/bin/sh\n")
	second := r.commit("second")
	repo := r.open()

	tests := []struct {
		commit, name string
		want         PathKind
	}{
		{first, "", PathDir},
		{first, "README.md", PathFile},
		{first, "README.md/install.sh", PathAbsent},
		{second, "README.md", PathDir},
		{second, "README.md/install.sh", PathFile},
		{first, "docs", PathDir},
		{first, "docs/a", PathDir},
		{first, "docs/a/b.md", PathFile},
		{first, "docs/guide.md", PathFile},
		{first, "docs/guide.md/run.sh", PathAbsent},
		{first, "Docs", PathAbsent},
		{first, "readme.md", PathAbsent},
		{first, "link", PathFile},
		{first, "link/guide.md", PathAbsent},
		{first, "nope/x", PathAbsent},
	}
	for _, tc := range tests {
		got, err := repo.KindAt(tc.commit, tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, "%s at %s", tc.name, tc.commit[:7])
	}
	_, err := repo.KindAt("HEAD", "docs")
	assert.ErrorContains(t, err, "not a full commit SHA")
}
