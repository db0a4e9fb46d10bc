package record

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
)

// testNow is a fixed clock for every test that stamps a record.
var testNow = time.Date(2025, 6, 1, 12, 30, 0, 0, time.UTC)

// openRoot returns a fresh .geas/ root in a temporary directory, and its path.
func openRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".geas")
	require.NoError(t, os.Mkdir(dir, 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = root.Close() })
	return root, dir
}

// requireRealSchema skips a test whose point is that the schema of kind refuses a document, while
// that schema is still the placeholder that accepts any object. broken must be clearly invalid
// under the real schema.
func requireRealSchema(t *testing.T, kind schemas.Kind, broken string) {
	t.Helper()
	if schemas.Validate(kind, "probe", []byte(broken)) == nil {
		t.Skipf("the %s schema accepts %s: still the placeholder", kind, broken)
	}
}

// fixture reads a shared test fixture from testdata/record.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "record", name))
	require.NoError(t, err)
	return b
}

func intp(n int) *int { return &n }
