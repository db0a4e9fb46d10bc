//go:build unix

package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadLimitedRefusesANamedPipe is the unix half of TestReadLimited: syscall.Mkfifo exists
// only there.
func TestReadLimitedRefusesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()

	// A named pipe nobody writes to would block a plain open forever.
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	done := make(chan error, 1)
	go func() { _, err := ReadLimited(r, "fifo", 1024); done <- err }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadLimited blocked on a named pipe")
	}
}

// TestOpenRegularRefusesANamedPipe: OpenRegular returns at once on a FIFO (no writer), refusing
// it, and opens a regular file.
func TestOpenRegularRefusesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	_, err = OpenRegular(root, "pipe")
	assert.ErrorContains(t, err, "not a regular file")
	f, err := OpenRegular(root, "file")
	require.NoError(t, err)
	f.Close()
	_, err = OpenRegular(root, "missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
