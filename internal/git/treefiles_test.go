package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestATreeIsReadAsRegularFilesOnly: the files of a ref of another repository are read with their
// executable bit; a symbolic link in the tree, too many files or too many bytes are refused.
func TestATreeIsReadAsRegularFilesOnly(t *testing.T) {
	r := newGitRepo(t)
	r.write("t/held_test.sh", "echo held\n")
	r.write("t/run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(r.dir, "t", "run.sh"), 0o755))
	r.commit("held out")
	r.git("branch", "holdout")

	got := map[string]string{}
	exec := map[string]bool{}
	err := ReadTreeFiles(r.dir, "refs/heads/holdout", 10, 1<<20, func(p string, x bool, data []byte) {
		got[p], exec[p] = string(data), x
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"t/held_test.sh": "echo held\n", "t/run.sh": "#!/bin/sh\n"}, got)
	assert.True(t, exec["t/run.sh"])
	assert.False(t, exec["t/held_test.sh"])

	assert.ErrorContains(t, ReadTreeFiles(r.dir, "refs/heads/holdout", 1, 1<<20, func(string, bool, []byte) {}), "more than 1 files")
	assert.Error(t, ReadTreeFiles(r.dir, "refs/heads/holdout", 10, 12, func(string, bool, []byte) {}))
	assert.Error(t, ReadTreeFiles(r.dir, "refs/heads/nothing", 10, 1<<20, func(string, bool, []byte) {}))

	r.link("t/secret", "/etc/passwd")
	r.git("add", "-A")
	r.commit("a link")
	assert.ErrorContains(t, ReadTreeFiles(r.dir, "HEAD", 10, 1<<20, func(string, bool, []byte) {}), "t/secret has mode")
}
