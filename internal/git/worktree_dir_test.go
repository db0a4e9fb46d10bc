package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirOpeners are the ways the working-tree walk opens a directory: the platform's (on Linux a raw
// descriptor listed with getdents64) and the portable os.File one that other platforms use. The
// working-tree tests run through both.
var dirOpeners = map[string]func(string) (dirHandle, error){"platform": openDir, "portable": openFileDir}

// useDirOpener makes the walk open directories with open, and returns what puts the platform's back.
func useDirOpener(open func(string) (dirHandle, error)) (restore func()) {
	walkOpenDir = open
	return func() { walkOpenDir = openDir }
}

// Both openers list the same names with the same types as os.ReadDir, "." and ".." never: a
// symlink to a directory is not a directory, and a name of many bytes or in UTF-8 comes through
// whole.
func TestDirHandleListsWhatReadDirLists(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, name := range []string{"a.go", "été.txt", strings.Repeat("n", 255), ".hidden", "sub/inner"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "linkdir")))
	require.NoError(t, os.Symlink("missing", filepath.Join(dir, "dangling")))
	for i := range 300 { // more than one getdents64 buffer
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"+strings.Repeat("x", 40)+string(rune('a'+i%26))+string(rune('0'+i/26))), nil, 0o644))
	}
	want := map[string]bool{}
	list, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, d := range list {
		want[d.Name()] = d.IsDir()
	}
	require.Len(t, want, 307)
	for opener, open := range dirOpeners {
		t.Run(opener, func(t *testing.T) {
			h, err := open(dir)
			require.NoError(t, err)
			defer h.close()
			got, err := h.list()
			require.NoError(t, err)
			byName := map[string]bool{}
			for _, d := range got {
				assert.NotContains(t, byName, d.name, "listed twice")
				byName[d.name] = d.dir
			}
			assert.Equal(t, want, byName)
			st, err := h.lstat("linkdir")
			require.NoError(t, err)
			assert.NotZero(t, st.mode&os.ModeSymlink, "lstat does not follow the link")
			_, err = h.lstat("nope")
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// Opening what is not a directory fails, as os.File.ReadDir would: a file, a missing path.
func TestDirHandleRefusesWhatIsNotADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for opener, open := range dirOpeners {
		for _, p := range []string{file, filepath.Join(dir, "missing")} {
			h, err := open(p)
			if err == nil {
				_, err = h.list()
				h.close()
			}
			assert.Error(t, err, "%s %s", opener, p)
		}
	}
}
