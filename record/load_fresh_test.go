package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadAgainIsAFreshRecord: a record.json loaded twice with the same bytes gives equal
// records, neither of which a change to the other reaches; changed bytes are read anew.
func TestLoadAgainIsAFreshRecord(t *testing.T) {
	root, geas := openRoot(t)
	const name = "missions/m1/tasks/t1/record.json"
	rec := `{"version": "1.0", "task_id": "t1", "created_at": "2025-06-01T12:30:00Z",
	  "self_check": {"confidence": 3, "known_risks": ["r1"], "untested_paths": ["a"], "summary": "s", "possible_stubs": ["x.go:3"]}}` + "\n"
	write(t, geas, name, rec)
	first, err := Load(root, name)
	require.NoError(t, err)
	second, err := Load(root, name)
	require.NoError(t, err)
	fb, _ := first.Bytes()
	sb, _ := second.Bytes()
	require.Equal(t, string(fb), string(sb))

	sc, _ := second.SelfCheck()
	sc.KnownRisks[0] = "changed through an accessor"
	sc.PossibleStubs[0].Path = "changed.go"
	require.NoError(t, second.SetSection("self_check", json.RawMessage(`{"confidence": 5, "known_risks": [], "untested_paths": [], "summary": "new"}`), testNow))
	third, err := Load(root, name)
	require.NoError(t, err)
	tb, _ := third.Bytes()
	require.Equal(t, string(fb), string(tb), "a change to a loaded record does not reach the next load")
	tc, _ := third.SelfCheck()
	require.Equal(t, []string{"r1"}, tc.KnownRisks)
	require.Equal(t, "x.go", tc.PossibleStubs[0].Path)
	require.Equal(t, "s", tc.Summary)

	changed := `{"version": "1.0", "task_id": "t1", "created_at": "2025-06-01T12:30:00Z"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(geas, filepath.FromSlash(name)), []byte(changed), 0o644))
	fourth, err := Load(root, name)
	require.NoError(t, err)
	_, ok := fourth.SelfCheck()
	require.False(t, ok, "changed bytes are parsed")
}
