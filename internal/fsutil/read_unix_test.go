//go:build unix

package fsutil

import (
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
