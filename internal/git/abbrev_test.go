package git

import (
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
	shas, shared, _ := commitsSharingAPrefix(t, r)
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
