package git

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChangedSubmodulesNamesEveryGitlinkChange: a gitlink added, moved, removed or put where a
// file was is named with both commits; an unchanged one and plain files are not.
func TestChangedSubmodulesNamesEveryGitlinkChange(t *testing.T) {
	const c1, c2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	r := newGitRepo(t)
	r.write("a.txt", "a\n")
	r.write("was-file", "f\n")
	r.git("add", "-A")
	for _, p := range []string{"kept", "moved", "removed"} {
		r.git("update-index", "--add", "--cacheinfo", "160000,"+c1+","+p)
	}
	r.git("commit", "-q", "-m", "base")
	base := r.git("rev-parse", "HEAD")
	r.git("update-index", "--cacheinfo", "160000,"+c2+",moved")
	r.git("update-index", "--force-remove", "removed")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+c2+",added")
	r.git("update-index", "--force-remove", "was-file")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+c1+",was-file")
	r.git("update-index", "--add", "--cacheinfo", "100644,"+r.git("hash-object", "-w", "a.txt")+",b.txt")
	r.git("commit", "-q", "-m", "head")
	head := r.git("rev-parse", "HEAD")

	got, err := r.open().ChangedSubmodules(base, head)
	require.NoError(t, err)
	assert.Equal(t, []SubmoduleChange{
		{Path: "added", To: c2},
		{Path: "moved", From: c1, To: c2},
		{Path: "removed", From: c1},
		{Path: "was-file", To: c1},
	}, got)

	none, err := r.open().ChangedSubmodules(base, base)
	require.NoError(t, err)
	assert.Empty(t, none)
}
