package contract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
)

// TestLoadKnownParsesOnlyWhatChanged: the second read of a contract that still holds the bytes of
// the first answers the first's *Contract; one byte changed, or another file, is parsed anew
// (and refused when invalid), and a read error is an error whatever was known.
func TestLoadKnownParsesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	full := readFixture(t, "full.json")
	name := filepath.Join(dir, "contract.json")
	require.NoError(t, os.WriteFile(name, full, 0o644))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	r := fsutil.RootReader(root)

	first, err := LoadFrom(r, "contract.json")
	require.NoError(t, err)
	again, err := LoadKnown(r, "contract.json", first)
	require.NoError(t, err)
	assert.Same(t, first, again, "unchanged bytes: not parsed again")

	changed := bytes.Replace(full, []byte(`"task_id": "full"`), []byte(`"task_id": "fulx"`), 1)
	require.NotEqual(t, full, changed)
	require.NoError(t, os.WriteFile(name, changed, 0o644))
	again, err = LoadKnown(r, "contract.json", first)
	require.NoError(t, err)
	assert.NotSame(t, first, again)
	assert.Equal(t, "fulx", again.TaskID)

	require.NoError(t, os.WriteFile(name, append(bytes.Clone(full), '}'), 0o644))
	_, err = LoadKnown(r, "contract.json", first)
	assert.Error(t, err, "trailing data after the known bytes is parsed, and refused")

	require.NoError(t, os.Remove(name))
	_, err = LoadKnown(r, "contract.json", first)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
