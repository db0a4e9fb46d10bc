package record

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockTaskRefusals(t *testing.T) {
	root, _ := openRoot(t)
	tests := []struct {
		name    string
		taskDir string
		notExit bool
	}{
		{"missing task directory", "missions/m1/tasks/nope", true},
		{"escaping name", "../elsewhere", false},
		{"empty name", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LockTask(t.Context(), root, tc.taskDir)
			require.Error(t, err)
			assert.Nil(t, l)
			if tc.notExit {
				assert.ErrorIs(t, err, fs.ErrNotExist)
			}
		})
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"utc", time.Date(2025, 6, 1, 9, 5, 3, 999_999_999, time.UTC), "2025-06-01T09:05:03Z"},
		{"converted to utc", time.Date(2025, 6, 1, 2, 0, 0, 0, time.FixedZone("PDT", -7*3600)), "2025-06-01T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Timestamp(tc.in))
		})
	}
}

// tempFiles lists the temporary files WriteFileAtomic may have left anywhere under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".tmp-") {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

func dirContents(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
