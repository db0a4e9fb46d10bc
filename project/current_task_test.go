package project

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCurrentTaskReadsRunJSONExactly: current_task_id of run.json is the current task; no run.json,
// a missing, null or empty value name none; a value that is not a valid id, a key that differs
// only by case, a duplicate key, a value of another type or a document that is not an object is
// an error, never a task.
func TestCurrentTaskReadsRunJSONExactly(t *testing.T) {
	dir := t.TempDir()
	mkProjectDirs(t, dir)
	p, err := Open(dir)
	require.NoError(t, err)
	defer p.Close()
	run := filepath.Join(dir, ".geas", "state", "run.json")

	got, err := p.CurrentTask()
	require.NoError(t, err, "no run.json")
	assert.Empty(t, got)

	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{"task", `{"version":"1.0","status":"in_progress","mission_id":"m1","current_task_id":"t1"}`, "t1", ""},
		{"missing", `{"mission_id":"m1"}`, "", ""},
		{"null", `{"mission_id":"m1","current_task_id":null}`, "", ""},
		{"empty", `{"current_task_id":""}`, "", ""},
		{"traversal", `{"current_task_id":"../x"}`, "", `invalid task id "../x"`},
		{"newline", `{"current_task_id":"t1\n"}`, "", `invalid task id "t1\n"`},
		{"slash", `{"current_task_id":"a/b"}`, "", "invalid task id"},
		{"case fold", `{"Current_Task_ID":"t2"}`, "", "Current_Task_ID"},
		{"duplicate", `{"current_task_id":"t1","current_task_id":"t2"}`, "", "duplicate"},
		{"number", `{"current_task_id":1}`, "", "cannot unmarshal number"},
		{"array", `["t1"]`, "", "cannot unmarshal array"},
		{"garbage", `not json`, "", "run.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(run, []byte(tc.doc), 0o644))
			got, err := p.CurrentTask()
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func mkProjectDirs(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas", "state"), 0o755))
}
