package tiers

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheOverlayReplacesWhateverTheWorkPutThere: a held-out file replaces a file, a symbolic link
// (which is not followed) and a directory at its path, and a file or a link where its directory
// should be; nothing outside the checkout is written.
func TestTheOverlayReplacesWhateverTheWorkPutThere(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	co := filepath.Join(dir, "co")
	require.NoError(t, os.MkdirAll(filepath.Join(co, "t", "dir.sh"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(co, "t", "file.sh"), []byte("agent"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(co, "t", "link.sh")))
	require.NoError(t, os.WriteFile(filepath.Join(co, "notadir"), []byte("agent"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(co, "linkdir")))
	root, err := os.OpenRoot(co)
	require.NoError(t, err)
	defer root.Close()

	for _, f := range []holdoutFile{
		{path: "t/dir.sh", data: []byte("held1")},
		{path: "t/file.sh", data: []byte("held2"), exec: true},
		{path: "t/link.sh", data: []byte("held3")},
		{path: "notadir/x.sh", data: []byte("held4")},
		{path: "linkdir/y.sh", data: []byte("held5")},
		{path: "new/z.sh", data: []byte("held6")},
	} {
		had, err := overlay(root, f)
		require.NoError(t, err, f.path)
		assert.Equal(t, filepath.Dir(f.path) == "t", had, "%s: something was at its path", f.path)
		got, err := os.ReadFile(filepath.Join(co, filepath.FromSlash(f.path)))
		require.NoError(t, err)
		assert.Equal(t, string(f.data), string(got))
		fi, err := os.Lstat(filepath.Join(co, filepath.FromSlash(f.path)))
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), f.path)
		assert.Equal(t, f.exec, fi.Mode()&0o111 != 0, f.path)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written outside the checkout")
}

// TestAHoldoutDirectoryIsReadOnlyAsRegularFilesOutsideTheProject: a symbolic link, a FIFO, a
// directory inside the project (or holding it) are refused; the honest directory is read.
func TestAHoldoutDirectoryIsReadOnlyAsRegularFilesOutsideTheProject(t *testing.T) {
	project := t.TempDir()
	hold := t.TempDir()
	r := &Pass{in: &Snapshot{ProjectDir: project}}
	r.repo = nil
	require.NoError(t, os.MkdirAll(filepath.Join(hold, "t"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hold, "t", "a.sh"), []byte("held"), 0o755))

	files, err := readHoldoutDirIn(r, hold, []string{project})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, "t/a.sh", files[0].path)
	assert.True(t, files[0].exec)

	_, err = readHoldoutDirIn(r, filepath.Join(project, "h"), []string{project})
	assert.ErrorContains(t, err, "inside the project")
	_, err = readHoldoutDirIn(r, filepath.Dir(project), []string{project})
	assert.ErrorContains(t, err, "inside the project", "a directory that holds the project")
	_, err = readHoldoutDirIn(r, "rel/dir", []string{project})
	assert.ErrorContains(t, err, "not absolute")

	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(hold, "t", "l")))
	_, err = readHoldoutDirIn(r, hold, []string{project})
	assert.ErrorContains(t, err, "t/l is a symbolic link")
	require.NoError(t, os.Remove(filepath.Join(hold, "t", "l")))

	require.NoError(t, syscall.Mkfifo(filepath.Join(hold, "t", "fifo"), 0o644))
	_, err = readHoldoutDirIn(r, hold, []string{project})
	assert.ErrorContains(t, err, "not a regular file")
	require.NoError(t, os.Remove(filepath.Join(hold, "t", "fifo")))

	big, err := os.Create(filepath.Join(hold, "big"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(maxHoldoutBytes+1))
	big.Close()
	_, err = readHoldoutDirIn(r, hold, []string{project})
	assert.Error(t, err)
}
