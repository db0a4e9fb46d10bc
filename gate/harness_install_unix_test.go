//go:build unix

package gate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestANamedPipeForAConfigIsRefused: a FIFO where the configuration file should be is refused at
// once, not opened (which would wait for a writer).
func TestANamedPipeForAConfigIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".codex"), 0o755))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, ".codex/hooks.json"), 0o644))
	_, err := InstallHooks(dir, []string{HarnessCodex})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".codex/hooks.json is not a regular file")
}

// TestANamedPipeAmongCopilotsOtherHookFilesIsPassedOver: Copilot reads every .json of its hooks
// directory, and geas init searches them for its entries; a FIFO (or a link to one) there is
// passed over without being opened (which would wait for a writer), and the install goes on.
func TestANamedPipeAmongCopilotsOtherHookFilesIsPassedOver(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".github/hooks"), 0o755))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, ".github/hooks/pipe.json"), 0o644))
	require.NoError(t, os.Symlink("pipe.json", filepath.Join(dir, ".github/hooks/link.json")))
	done := make(chan error, 1)
	go func() {
		_, err := InstallHooks(dir, []string{HarnessCopilot})
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("geas init waited on a named pipe")
	}
	assert.FileExists(t, filepath.Join(dir, ".github/hooks/geas.json"))
}
