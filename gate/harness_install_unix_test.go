//go:build unix

package gate

import (
	"os"
	"path/filepath"
	"testing"

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
