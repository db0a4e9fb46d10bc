package git

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newCheckout checks commit out of repo, in a temporary directory of the test's, removed at its end.
func newCheckout(t *testing.T, repo *Repo, commit string) *Checkout {
	t.Helper()
	co, err := repo.Checkout(commit)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, RemoveCheckout(co.Dir)) })
	return co
}

func readIn(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(data)
}

func assertAbsent(t *testing.T, dir, name string) {
	t.Helper()
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
	assert.ErrorIs(t, err, os.ErrNotExist, "%s", name)
}

// A checkout of a commit whose blob was replaced in the object store by other content fails with
// the object's corruption, and leaves no directory behind; the same commit with its true blob
// checks out.
func TestACheckoutOfAForgedBlobFails(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	r := newGitRepo(t)
	r.write("a.txt", "the true content\n")
	r.write("dir/b.txt", "other\n")
	head := r.commit("c")
	co := newCheckout(t, r.open(), head)
	assert.Equal(t, "the true content\n", readIn(t, co.Dir, "a.txt"))

	id := r.git("rev-parse", "HEAD:a.txt")
	forged := "a forged content\n"
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	fmt.Fprintf(zw, "blob %d\x00%s", len(forged), forged)
	require.NoError(t, zw.Close())
	path := filepath.Join(r.dir, ".git", "objects", id[:2], id[2:])
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o444))

	repo := r.open()
	_, err := repo.Checkout(head)
	var corrupt *CorruptError
	require.ErrorAs(t, err, &corrupt)
	assert.Equal(t, id, corrupt.ID)
	assert.Contains(t, corrupt.For, "isolated checkout")
	left, err := filepath.Glob(filepath.Join(os.TempDir(), checkoutPrefix+"*"))
	require.NoError(t, err)
	assert.Len(t, left, 1, "only the honest checkout is left: %v", left)
}

// overlayFixture is a base with tests, and a head that weakened one test, deleted another, added
// a third, changed test data and the code, and added a file the base does not have.
func overlayFixture(t *testing.T) (r *gitRepo, base, head string) {
	r = newGitRepo(t)
	r.write("src/a.sh", "a\n")
	r.write("test/a_test.sh", "assert a\n")
	r.write("test/b_test.sh", "assert b\n")
	r.write("test/data/x", "x\n")
	base = r.commit("base")
	r.write("src/a.sh", "a2\n")
	r.write("test/a_test.sh", "echo ok\n")
	r.remove("test/b_test.sh")
	r.write("test/new_test.sh", "assert new\n")
	r.write("test/data/x", "x2\n")
	r.write("extra.txt", "e\n")
	return r, base, r.commit("head")
}

// Overlay puts at each path what the commit has there, as `git checkout --no-overlay BASE --
// PATHS`: a file restored, a deleted file brought back, a directory made the commit's (a file a
// command left in it removed), a path the commit does not have removed; every other path keeps
// the head's content, and Changed compares the overlaid paths with what Overlay wrote.
func TestOverlayPutsTheCommitsVersionsAtThePaths(t *testing.T) {
	r, base, head := overlayFixture(t)
	repo := r.open()
	co := newCheckout(t, repo, head)
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "test", "data", "left"), []byte("by a command"), 0o644))

	require.NoError(t, co.Overlay(repo, base, []string{"test/a_test.sh", "test/b_test.sh", "test/data", "extra.txt"}))
	assert.Equal(t, "assert a\n", readIn(t, co.Dir, "test/a_test.sh"))
	assert.Equal(t, "assert b\n", readIn(t, co.Dir, "test/b_test.sh"))
	assert.Equal(t, "x\n", readIn(t, co.Dir, "test/data/x"))
	assertAbsent(t, co.Dir, "test/data/left")
	assertAbsent(t, co.Dir, "extra.txt")
	// Not listed: the head's.
	assert.Equal(t, "assert new\n", readIn(t, co.Dir, "test/new_test.sh"))
	assert.Equal(t, "a2\n", readIn(t, co.Dir, "src/a.sh"))

	changed, err := co.Changed()
	require.NoError(t, err)
	assert.Empty(t, changed, "the overlaid checkout is what the gate wrote")
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "test", "a_test.sh"), []byte("echo ok\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "extra.txt"), []byte("e\n"), 0o644))
	changed, err = co.Changed()
	require.NoError(t, err)
	assert.Equal(t, []string{"extra.txt", "test/a_test.sh"}, changed)
}

// The work may make a directory above an overlaid path a symlink (test -> src) or a file: the
// overlay replaces it with a real directory, so that the held-out or base file lands at its own
// path and nowhere else.
func TestOverlayReplacesWhatTheWorkPutAboveAPath(t *testing.T) {
	for _, kind := range []string{"symlink", "file"} {
		t.Run(kind, func(t *testing.T) {
			r := newGitRepo(t)
			r.write("src/a.sh", "a\n")
			r.write("test/a_test.sh", "assert a\n")
			base := r.commit("base")
			r.remove("test")
			if kind == "symlink" {
				require.NoError(t, os.Symlink("src", filepath.Join(r.dir, "test")))
			} else {
				r.write("test", "not a directory\n")
			}
			head := r.commit("head")
			repo := r.open()
			co := newCheckout(t, repo, head)

			require.NoError(t, co.Overlay(repo, base, []string{"test/a_test.sh"}))
			fi, err := os.Lstat(filepath.Join(co.Dir, "test"))
			require.NoError(t, err)
			assert.True(t, fi.IsDir(), "test is a real directory, not a %s", fi.Mode().Type())
			assert.Equal(t, "assert a\n", readIn(t, co.Dir, "test/a_test.sh"))
			assertAbsent(t, co.Dir, "src/a_test.sh")
			changed, err := co.Changed()
			require.NoError(t, err)
			assert.Empty(t, changed)
		})
	}
}

// Held-out checks come from a ref of another repository: its files overlay the checkout of the
// head, whatever the head put there.
func TestOverlayFromAnotherRepository(t *testing.T) {
	r, _, head := overlayFixture(t)
	h := newGitRepo(t)
	h.write("holdout/check.sh", "held out\n")
	held := h.commit("held-out checks")
	r.write("holdout/check.sh", "the work's own version\n")
	head2 := r.commit("the work writes at the held-out path")
	_ = head
	co := newCheckout(t, r.open(), head2)
	require.NoError(t, co.Overlay(h.open(), held, []string{"holdout"}))
	assert.Equal(t, "held out\n", readIn(t, co.Dir, "holdout/check.sh"))
	changed, err := co.Changed()
	require.NoError(t, err)
	assert.Empty(t, changed)
}

// A path that a checkout cannot hold is refused before anything is written.
func TestOverlayRefusesPathsOutsideTheCheckout(t *testing.T) {
	r, base, head := overlayFixture(t)
	repo := r.open()
	co := newCheckout(t, repo, head)
	for _, p := range []string{"../x", "/etc/passwd", ".git/config", "test/../../x", "", "test/", "a//b"} {
		assert.Error(t, co.Overlay(repo, base, []string{"test/a_test.sh", p}), "%q", p)
	}
	assert.Equal(t, "echo ok\n", readIn(t, co.Dir, "test/a_test.sh"), "nothing was overlaid")
}
