//go:build unix

package record

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAKeyFileIsAKeyOrAnError: a key file is a regular file of at most 4 KiB whose one trailing
// newline is not part of the key; a missing, empty, oversized or special file is an error, never
// taken for no key, and a named pipe is refused without blocking.
func TestAKeyFileIsAKeyOrAnError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	for content, want := range map[string]string{
		"k3y":      "k3y",
		"k3y\n":    "k3y",
		"k3y\r\n":  "k3y",
		"k3y\n\n":  "k3y\n",
		" spaced ": " spaced ",
	} {
		got, err := readKeyFile(write("key", content))
		require.NoError(t, err, "%q", content)
		assert.Equal(t, want, string(got), "%q", content)
	}
	for name, content := range map[string]string{"empty": "", "newline": "\n", "big": strings.Repeat("k", maxKeyFileBytes+1)} {
		_, err := readKeyFile(write(name, content))
		assert.Error(t, err, name)
	}
	_, err := readKeyFile(write("max", strings.Repeat("k", maxKeyFileBytes)))
	assert.NoError(t, err, "a key of exactly the limit")
	_, err = readKeyFile(filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, SigningKeyFileEnv)
	_, err = readKeyFile(dir)
	assert.ErrorContains(t, err, "not a regular file")
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = readKeyFile(fifo) // would block forever if it were opened for a blocking read
	assert.ErrorContains(t, err, "not a regular file")
}
