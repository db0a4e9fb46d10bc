package evidence

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
)

// TestLoadAllKnownParsesOnlyWhatChanged: a second read answers the known *Evidence for a file that
// still holds its bytes, parses a file whose bytes changed (same size too), and refuses a file
// that became invalid; a known evidence of another name is never taken for a file.
func TestLoadAllKnownParsesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "evidence")
	require.NoError(t, os.MkdirAll(ev, 0o755))
	qa, da := fixture(t, "qa-engineer.json"), fixture(t, "design-authority.json")
	require.NoError(t, os.WriteFile(filepath.Join(ev, "qa-engineer.json"), qa, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "design-authority.json"), da, 0o644))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	r := fsutil.RootReader(root)

	first, bad, err := LoadAllFrom(r, "evidence", 0, 0)
	require.NoError(t, err)
	require.Empty(t, bad)
	require.Len(t, first, 2)
	again, bad, err := LoadAllKnown(r, "evidence", 0, 0, first)
	require.NoError(t, err)
	require.Empty(t, bad)
	require.Len(t, again, 2)
	assert.Same(t, first[0], again[0])
	assert.Same(t, first[1], again[1])

	// Same length, other bytes: parsed again.
	changed := bytes.Replace(qa, []byte(`"qa-engineer"`), []byte(`"qa-engineeR"`), 1)
	require.NotEqual(t, qa, changed)
	require.NoError(t, os.WriteFile(filepath.Join(ev, "qa-engineer.json"), changed, 0o644))
	// design-authority.json now holds qa's old bytes: known under another name, so parsed.
	require.NoError(t, os.WriteFile(filepath.Join(ev, "design-authority.json"), qa, 0o644))
	again, bad, err = LoadAllKnown(r, "evidence", 0, 0, first)
	require.NoError(t, err)
	require.Empty(t, bad)
	require.Len(t, again, 2)
	for _, e := range again {
		for _, k := range first {
			assert.NotSame(t, k, e, e.Name)
		}
	}
	assert.Equal(t, "design-authority.json", again[0].Name)
	assert.Equal(t, first[1].SHA256, again[0].SHA256, "the bytes qa-engineer.json held")
	assert.NotEqual(t, first[1].SHA256, again[1].SHA256)

	require.NoError(t, os.WriteFile(filepath.Join(ev, "qa-engineer.json"), []byte(`{"version":`), 0o644))
	again, bad, err = LoadAllKnown(r, "evidence", 0, 0, first)
	require.NoError(t, err)
	require.Len(t, bad, 1)
	assert.Equal(t, "evidence/qa-engineer.json", bad[0].Name)
	assert.Len(t, again, 1)
}
