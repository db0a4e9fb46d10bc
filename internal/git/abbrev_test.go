package git

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveAbbrevReadsObjectIDsOnly: an abbreviation resolves by object id, never through a ref
// named like it, and one shared by two commits is refused.
func TestResolveAbbrevReadsObjectIDsOnly(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var stream bytes.Buffer
	for i := range 1500 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter F <f@example.com> %d +0000\ndata <<EOT\nc%d\nEOT\n\n",
			fixtureEpoch+i, i)
	}
	out, err := r.cmd("", stream.Bytes(), "fast-import", "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)
	byPrefix := map[string][]string{}
	var shared string
	shas := strings.Fields(r.git("rev-list", "main"))
	for _, sha := range shas {
		byPrefix[sha[:4]] = append(byPrefix[sha[:4]], sha)
		if len(byPrefix[sha[:4]]) == 2 && shared == "" {
			shared = sha[:4]
		}
	}
	require.NotEmpty(t, shared)
	head, old := shas[0], shas[len(shas)-1]
	// A branch named like the old commit's abbreviation, pointing at the head.
	r.git("branch", old[:8], head)
	repo := r.open()

	got, err := repo.ResolveAbbrev(strings.ToUpper(old[:8]))
	require.NoError(t, err)
	assert.Equal(t, old, got, "the object id, not the branch of that name")
	viaRef, err := repo.Resolve(old[:8])
	require.NoError(t, err)
	assert.Equal(t, head, viaRef, "Resolve reads the ref first, as git does")

	_, err = repo.ResolveAbbrev(shared)
	assert.ErrorIs(t, err, errRevAmbiguous)
	for _, bad := range []string{"abc", "main", "HEAD", strings.Repeat("a", 41), "xyz1"} {
		_, err := repo.ResolveAbbrev(bad)
		assert.Error(t, err, bad)
	}
}
