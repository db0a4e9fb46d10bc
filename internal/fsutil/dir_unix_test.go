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

// TestDirNeverWaitsOnANamedPipe: a named pipe where a directory should be is not opened as a Dir
// (open(2) of a pipe waits for a writer): OpenSubdir and Subdir return at once without a handle,
// and the reads through them are refused as the outer root refuses them.
func TestDirNeverWaitsOnANamedPipe(t *testing.T) {
	top := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(top, "task"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(top, "pipe"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(top, "task", "evidence"), 0o644))
	outer, err := os.OpenRoot(top)
	require.NoError(t, err)
	defer outer.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d := OpenSubdir(outer, "pipe")
		assert.Nil(t, d.sub)
		task := OpenSubdir(outer, "task")
		assert.NotNil(t, task.sub)
		ev := task.Subdir("evidence")
		assert.Nil(t, ev.sub)
		_, err := ev.OpenDir("task/evidence")
		assert.ErrorContains(t, err, "not a directory")
		_, err = d.ReadLimited("pipe/x", 0)
		assert.Error(t, err)
		ev.Close()
		task.Close()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a named pipe where a directory should be was waited on")
	}
}
