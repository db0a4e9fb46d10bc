package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// foldingFS is a file system whose directories find a name in any letter case (as APFS and NTFS
// do by default), holding the paths it was given in their stored case. Linux's file systems tell
// cases apart, so the folding is injected.
type foldingFS struct {
	stored map[string]string // lower-cased path -> the path as stored
}

func newFoldingFS(paths ...string) foldingFS {
	f := foldingFS{stored: map[string]string{}}
	for _, p := range paths {
		for d := filepath.FromSlash(p); ; d = filepath.Dir(d) {
			f.stored[strings.ToLower(d)] = d
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return f
}

func (f foldingFS) same(a, b string) bool {
	sa, oka := f.stored[strings.ToLower(a)]
	sb, okb := f.stored[strings.ToLower(b)]
	return oka && okb && sa == sb
}

func (f foldingFS) list(dir string) ([]string, error) {
	var out []string
	for _, p := range f.stored {
		if p != filepath.Dir(p) && strings.EqualFold(filepath.Dir(p), dir) {
			out = append(out, filepath.Base(p))
		}
	}
	return out, nil
}

// TestAPathTypedInAnotherCaseIsSpelledAsStored: on a file system that finds names in any case, a
// path typed in another case is spelled as the directories list it (the case git records), so
// the project typed /Work/REPO/Svc is /work/repo/svc; a path typed as stored, or with no letters
// to fold, is kept as it is.
func TestAPathTypedInAnotherCaseIsSpelledAsStored(t *testing.T) {
	t.Parallel()
	fsys := newFoldingFS("/work/repo/svc/.geas", "/work/repo/Other", "/work/repo/123")
	for typed, want := range map[string]string{
		"/Work/REPO/Svc":   "/work/repo/svc",
		"/work/repo/svc":   "/work/repo/svc",
		"/WORK/repo/other": "/work/repo/Other",
		"/work/repo/123":   "/work/repo/123",
		"/work/repo/ghost": "/work/repo/ghost", // not there: left as typed
	} {
		assert.Equal(t, filepath.FromSlash(want), storedSpelling(fsys, filepath.FromSlash(typed)), typed)
	}
}

// TestAPathOnACaseSensitiveFileSystemIsKept: where directories tell cases apart (Linux), two
// directories whose names differ only in case are two files, and each path is kept as typed;
// RealPath resolves symbolic links.
func TestAPathOnACaseSensitiveFileSystemIsKept(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "repo", "svc"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "repo", "SVC"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "repo", "svc"), filepath.Join(dir, "link")))
	for typed, want := range map[string]string{
		"repo/svc": "repo/svc",
		"repo/SVC": "repo/SVC",
		"link":     "repo/svc",
	} {
		got, err := RealPath(filepath.Join(dir, typed))
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, want), got, typed)
	}
	_, err = RealPath(filepath.Join(dir, "ghost"))
	assert.Error(t, err)
}
