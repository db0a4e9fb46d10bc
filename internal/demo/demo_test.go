package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// TestDemoTasksCoverEveryVerdict: the demo is built to show each verdict exactly once, and then a
// failing test rewritten to print ok caught as a fail (tests_modified).
func TestDemoTasksCoverEveryVerdict(t *testing.T) {
	tasks, err := Tasks()
	require.NoError(t, err)
	var got []string
	for _, task := range tasks {
		got = append(got, task.Want)
	}
	assert.Equal(t, []string{"pass", "fail", "block", "error", "fail"}, got)
}

// TestProjectFillsItsTemplates: each task's contract names the commit before its own as its base,
// and its integration.json (record.IntegrationFile) its own commit; run.json names Mission.
func TestProjectFillsItsTemplates(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(dir)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, ".gitignore"))
	var run struct {
		MissionID string `json:"mission_id"`
	}
	readJSON(t, filepath.Join(dir, ".geas", "state", "run.json"), &run)
	assert.Equal(t, Mission, run.MissionID)
	assert.NoDirExists(t, filepath.Join(dir, ".geas", "missions", Mission, "tasks"), "no task before Add")

	tasks, err := Tasks()
	require.NoError(t, err)
	base := p.base
	for _, task := range tasks {
		head, err := p.Add(task)
		require.NoError(t, err)
		assert.NotEqual(t, base, head)
		td := filepath.Join(dir, ".geas", "missions", Mission, "tasks", task.ID)
		var c struct {
			TaskID       string `json:"task_id"`
			BaseSnapshot string `json:"base_snapshot"`
		}
		readJSON(t, filepath.Join(td, "contract.json"), &c)
		assert.Equal(t, task.ID, c.TaskID)
		assert.Equal(t, base, c.BaseSnapshot, "%s: the base is the commit before the task's", task.ID)
		var integ struct {
			Commit string `json:"commit"`
		}
		readJSON(t, filepath.Join(td, record.IntegrationFile), &integ)
		assert.Equal(t, head, integ.Commit, "%s: integrated at its own commit", task.ID)
		base = head
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}
