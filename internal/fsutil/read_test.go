package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small"), []byte("abc"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2048), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()

	b, err := ReadLimited(r, "small", 1024)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))

	_, err = ReadLimited(r, "big", 1024)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(2048), tl.Size)
	assert.Contains(t, err.Error(), "2048 bytes exceeds the limit of 1024 bytes")

	_, err = ReadLimited(r, "d", 1024)
	assert.ErrorContains(t, err, "not a regular file")
	_, err = ReadLimited(r, "../x", 1024)
	assert.Error(t, err)
	_, err = ReadLimited(r, "missing", 1024)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}
