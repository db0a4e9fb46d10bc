package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/demo"
)

// TestDemoKeepDir: --keep DIR is created when missing, used when empty, and refused (usage error)
// when it holds anything; without --keep the temporary directory is removed by cleanup.
func TestDemoKeepDir(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(base, "empty"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "full", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
	for _, tc := range []struct {
		name    string
		keep    string
		wantErr string
	}{
		{name: "missing is created", keep: filepath.Join(base, "new", "dir")},
		{name: "empty is used", keep: filepath.Join(base, "empty")},
		{name: "not empty is refused", keep: filepath.Join(base, "full"), wantErr: "directory is not empty"},
		{name: "a file is refused", keep: filepath.Join(base, "file"), wantErr: "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, cleanup, err := demoDir(tc.keep)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Equal(t, ExitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			cleanup()
			assert.Equal(t, tc.keep, dir)
			assert.DirExists(t, dir, "a kept directory survives cleanup")
		})
	}

	dir, cleanup, err := demoDir("")
	require.NoError(t, err)
	assert.DirExists(t, dir)
	cleanup()
	assert.NoDirExists(t, dir, "the temporary project is removed")
}

// TestBrokenDemoExitsOne: when a task does not get the verdict it was built for, the demo still
// explains every task and then fails with exit 1, naming the task; with --format json it prints
// one document with ok false and nothing else.
func TestBrokenDemoExitsOne(t *testing.T) {
	tasks, err := demo.Tasks()
	require.NoError(t, err)
	tasks[2].Want = "fail" // french is built to block
	for _, format := range []string{formatText, formatJSON} {
		t.Run(format, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			g := &globalOptions{format: format, stdout: &stdout, stderr: &stderr}
			err := runDemoTasks(t.Context(), g, demoOptions{}, tasks)
			require.Error(t, err)
			assert.Equal(t, ExitRefused, exitCode(err))
			if format == formatJSON {
				var doc struct {
					OK    bool `json:"ok"`
					Tasks []struct{ Verdict string }
				}
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc))
				assert.False(t, doc.OK)
				assert.Len(t, doc.Tasks, 5)
				return
			}
			assert.Contains(t, err.Error(), "demo is broken: french got block, want fail")
			assert.Contains(t, stdout.String(), "4. benchmark: ERROR (exit 3)")
		})
	}
}
