package fsutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAHeldFileIsReadAsReadLimitedReadsIt: Hold answers what ReadLimited answers (the bytes, the
// size refusal, the refusal of what is not a regular file), and ReadAgain reads the file's bytes
// now, from its start, only while the path still names the held file: a file renamed over it, or
// a directory in its place, is for the caller to read afresh; a file grown past the limit is
// refused as ReadLimited refuses it.
func TestAHeldFileIsReadAsReadLimitedReadsIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("one"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2048), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()

	for _, name := range []string{"big", "d", "missing", "../x"} {
		_, _, herr := Hold(r, name, 1024)
		_, rerr := ReadLimited(r, name, 1024)
		require.Error(t, herr, name)
		assert.Equal(t, rerr.Error(), herr.Error(), name)
	}

	h, data, err := Hold(r, "f", 1024)
	require.NoError(t, err)
	defer h.Close()
	assert.Equal(t, "one", string(data))

	// The same file, written in place: read again, from its start.
	require.NoError(t, os.WriteFile(path, []byte("two, longer"), 0o644))
	data, ok, err := h.ReadAgain(r, "f", 1024)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "two, longer", string(data))
	data, ok, err = h.ReadAgain(r, "f", 1024)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "two, longer", string(data), "a second read again starts at the start too")

	// Grown past the limit: refused as ReadLimited refuses it.
	require.NoError(t, os.WriteFile(path, make([]byte, 2000), 0o644))
	_, ok, err = h.ReadAgain(r, "f", 1024)
	require.True(t, ok)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(2000), tl.Size)

	// Another file renamed over the path: not the held file; the caller reads the path.
	other := filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(other, []byte("three"), 0o644))
	require.NoError(t, os.Rename(other, path))
	_, ok, err = h.ReadAgain(r, "f", 1024)
	require.NoError(t, err)
	assert.False(t, ok, "a file renamed over the path is not the held file")

	// A directory in its place: not the held file either.
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	_, ok, err = h.ReadAgain(r, "f", 1024)
	require.NoError(t, err)
	assert.False(t, ok)

	var none *HeldFile
	_, ok, err = none.ReadAgain(r, "f", 1024)
	assert.False(t, ok)
	assert.NoError(t, err)
	none.Close()
}

// TestAHeldFileIsUnchangedOnlyWhileItsPathHoldsWhatWasRead: Unchanged, a Stat of the path, is
// true for the held file untouched (the control), and false for the same file written in place
// (even to the same size with its modification time set back: the change time moved), for
// another file renamed over it, and for none there.
func TestAHeldFileIsUnchangedOnlyWhileItsPathHoldsWhatWasRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	for _, how := range []string{"in place", "renamed over", "removed"} {
		require.NoError(t, os.WriteFile(path, []byte("one"), 0o644))
		h, _, err := Hold(r, "f", 1024)
		require.NoError(t, err)
		assert.True(t, h.Unchanged(r, "f"), how+": the control")
		fi, err := os.Stat(path)
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond) // past the change time's granularity
		switch how {
		case "in place":
			require.NoError(t, os.WriteFile(path, []byte("two"), 0o644))
			require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
		case "renamed over":
			require.NoError(t, os.WriteFile(path+".new", []byte("one"), 0o644))
			require.NoError(t, os.Chtimes(path+".new", fi.ModTime(), fi.ModTime()))
			require.NoError(t, os.Rename(path+".new", path))
		case "removed":
			require.NoError(t, os.Remove(path))
		}
		assert.False(t, h.Unchanged(r, "f"), how)
		if how == "in place" {
			data, ok, err := h.ReadAgain(r, "f", 1024)
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, "two", string(data))
			assert.True(t, h.Unchanged(r, "f"), "read again: what was read is what is there")
		}
		h.Close()
	}
}

// TestAServedDirAnswersWhatWasReadAndReadsTheRest: the names given to Serve answer their bytes
// (refused past a read's limit as ReadLimited refuses them) or their error; other names are read
// through the outer root.
func TestAServedDirAnswersWhatWasReadAndReadsTheRest(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "t"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t", "a"), []byte("on disk"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t", "b"), []byte("b on disk"), 0o644))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	d := ServedDir(r, "t")
	d.Serve("t/a", []byte("served"), nil)
	d.Serve("t/gone", nil, os.ErrNotExist)
	data, err := d.ReadLimited("t/a", 100)
	require.NoError(t, err)
	assert.Equal(t, "served", string(data))
	_, err = d.ReadLimited("t/a", 3)
	var tooLarge *TooLargeError
	assert.ErrorAs(t, err, &tooLarge)
	_, err = d.ReadLimitedAbsent("t/gone", 100)
	assert.ErrorIs(t, err, os.ErrNotExist)
	data, err = d.ReadLimitedAbsent("t/b", 100)
	require.NoError(t, err)
	assert.Equal(t, "b on disk", string(data))
}
