package tiers

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/vocab"
)

// TestACorruptObjectNoCheckReportedIsStillAnError: a read whose error the caller took for
// something else (here the test ignores it, as a caller that treats any error as "not found"
// would) leaves the corrupt object with the repository, and repositoryIntact turns it into an
// error with cause repository_corrupt naming the object and what it was read for. Without a
// corrupt object nothing is added; with a check that already reported one, nothing more.
func TestACorruptObjectNoCheckReportedIsStillAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.write("notes.txt", "notes\n")
	f.git("add", "notes.txt")
	f.commit("notes") // a loose blob
	blob := f.git("rev-parse", "HEAD:notes.txt")
	head := f.git("rev-parse", "HEAD")

	open := func() *git.Repo {
		repo, err := git.Open(f.dir)
		require.NoError(t, err)
		t.Cleanup(func() { _ = repo.Close() })
		return repo
	}
	r := &Pass{in: &Snapshot{}, repo: open()}
	_, _, err := r.repo.ReadFileAt(head, "notes.txt", 1<<20)
	require.NoError(t, err)
	assert.Nil(t, repositoryIntact(r, nil), "an honest repository: nothing to say")

	// notes.txt's blob, overwritten with other content.
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	fmt.Fprintf(zw, "blob 6\x00forged")
	require.NoError(t, zw.Close())
	path := filepath.Join(f.dir, ".git", "objects", blob[:2], blob[2:])
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, os.WriteFile(path, z.Bytes(), 0o444))

	r = &Pass{in: &Snapshot{}, repo: open()}
	_, _, _ = r.repo.ReadFileAt(head, "notes.txt", 1<<20) // the error, swallowed
	ch := repositoryIntact(r, nil)
	require.NotNil(t, ch)
	c := *ch
	assert.Equal(t, "repository_intact", c.Name)
	assert.Equal(t, StatusError, c.Status)
	assert.Equal(t, vocab.CauseRepositoryCorrupt, c.Code)
	assert.Contains(t, c.Evidence, "object "+blob+" is corrupt: its content (a blob of 6 bytes) hashes to ")
	assert.True(t, strings.Contains(c.Evidence, "(read for reading notes.txt at "+head[:12]+")"), c.Evidence)

	assert.Nil(t, repositoryIntact(r, []Check{c}), "reported once")
}
