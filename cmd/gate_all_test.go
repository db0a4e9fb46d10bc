package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
)

// taskKinds are the kinds of task writeMission makes, by index modulo len(taskKinds), with the
// verdict --all gives each ("" for a task that is not gate-eligible, hence skipped).
var taskKinds = []struct{ kind, verdict string }{
	{"pass", "pass"},
	{"fail", "fail"},
	{"block", "block"},
	{"error", "error"},
	{"drafted", ""},
	{"closure", "pass"},
}

// writeMission replaces the example mission's tasks with n copies of the example artifact_only
// task t2 (cheap: no git, no eval commands), named t000, t001, ..., each made into one of
// taskKinds: a failing review (fail), no qa-engineer evidence (block), a contract with an invalid
// regex pattern (error), a drafted task (skipped), a closure_ready task (pass). bench/gate_all.sh builds
// the same mission with sed.
func writeMission(t *testing.T, n int) string {
	t.Helper()
	dir := copyExample(t)
	tasks := filepath.Join(dir, ".geas", "missions", "m1", "tasks")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(tasks, "t2", name))
		require.NoError(t, err)
		return string(b)
	}
	files := map[string]string{
		"contract.json":                  read("contract.json"),
		"record.json":                    read("record.json"),
		"evidence/qa-engineer.json":      read("evidence/qa-engineer.json"),
		"evidence/technical-writer.json": read("evidence/technical-writer.json"),
	}
	require.NoError(t, os.RemoveAll(tasks))
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		kind := taskKinds[i%len(taskKinds)].kind
		for name, content := range files {
			content = strings.ReplaceAll(content, `"task_id": "t2"`, `"task_id": "`+id+`"`)
			switch {
			case kind == "fail" && name == "evidence/qa-engineer.json":
				content = strings.Replace(content, `"passed": true`, `"passed": false`, 1)
			case kind == "block" && name == "evidence/qa-engineer.json":
				continue
			case kind == "error" && name == "contract.json":
				content = strings.Replace(content, `"pattern": "--verbose"`, `"pattern": "("`, 1)
			case kind == "drafted" && name == "contract.json":
				content = strings.Replace(content, `"status": "reviewed"`, `"status": "drafted"`, 1)
			case kind == "closure" && name == "contract.json":
				content = strings.Replace(content, `"gate_profile": "artifact_only"`, `"gate_profile": "closure_ready"`, 1)
			}
			p := filepath.Join(tasks, id, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
	}
	return dir
}

// gateAll runs geas gate --all in-process and returns its exit code and JSON document.
func gateAll(t *testing.T, dir string, args ...string) (int, gate.Mission) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), append([]string{"-C", dir, "--format", "json", "gate", "--all", "-q"}, args...), nil, &stdout, &stderr)
	var out gate.Mission
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout %s\nstderr %s", stdout.String(), stderr.String())
	return code, out
}

// TestGateAllJobsAgree: gating a mission of 200 tasks four at a time gives each task the verdict
// it gets one at a time, in the same order. Dry runs, so both see the same inputs.
func TestGateAllJobsAgree(t *testing.T) {
	t.Parallel()
	const n = 200
	dir := writeMission(t, n)

	code1, one := gateAll(t, dir, "--dry-run", "--jobs", "1")
	code4, four := gateAll(t, dir, "--dry-run", "--jobs", "4")

	assert.Equal(t, 3, code1, "an error verdict is the worst")
	assert.Equal(t, code1, code4)
	require.Len(t, one.Tasks, n, "every task directory is listed")
	require.Len(t, four.Tasks, n, "every task directory is listed")
	want := map[string]int{}
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		v := taskKinds[i%len(taskKinds)].verdict
		if v == "" {
			v = gate.OutcomeNotReady
		}
		want[v]++
		a, b := one.Tasks[i], four.Tasks[i]
		assert.Equal(t, id, a.TaskID, "--jobs 1: task-id order")
		assert.Equal(t, id, b.TaskID, "--jobs 4: task-id order")
		assert.Equal(t, v, b.Outcome, "task %s (%s)", id, taskKinds[i%len(taskKinds)].kind)
		assert.Equal(t, a.Outcome, b.Outcome, "task %s", id)
		if v == gate.OutcomeNotReady {
			assert.Nil(t, b.Result, "task %s is not gated", id)
			assert.Equal(t, "drafted", b.State)
			continue
		}
		require.NotNil(t, b.Result, "task %s", id)
		assert.Equal(t, a.Verdict, b.Verdict, "task %s", id)
		assert.Equal(t, causeList(a.Causes), causeList(b.Causes), "task %s", id)
		assert.Equal(t, a.InputsSHA256, b.InputsSHA256, "task %s", id)
		assert.True(t, b.DryRun)
		assert.Equal(t, v, string(b.Verdict), "task %s: causes %+v", id, b.Causes)
	}
	assert.Equal(t, one.Overall, four.Overall)
	assert.Equal(t, n, four.Overall.Counted, "a not_ready task counts")
	for _, v := range []string{"pass", "fail", "block", "error", gate.OutcomeNotReady} {
		assert.Equal(t, want[v], four.Overall.Counts[v], v)
	}
	assert.False(t, four.Overall.Success)

	// Nothing was written.
	_, err := os.Stat(filepath.Join(dir, ".geas", "state", "events.jsonl"))
	assert.True(t, os.IsNotExist(err), "a dry run writes no events")
}

// TestGateAllRecordsEveryTask: a real --all run with more workers than tasks records each task's
// run in its own record, exactly once.
func TestGateAllRecordsEveryTask(t *testing.T) {
	t.Parallel()
	dir := writeMission(t, 12)
	code, out := gateAll(t, dir, "--jobs", "16")
	assert.Equal(t, 3, code)
	require.Len(t, out.Tasks, 12)
	events, err := os.ReadFile(filepath.Join(dir, ".geas", "state", "events.jsonl"))
	require.NoError(t, err)
	gated := 0
	for _, at := range out.Tasks {
		res := at.Result
		if at.Outcome == gate.OutcomeNotReady {
			assert.Nil(t, res)
			assert.NotContains(t, string(events), `"task_id":"`+at.TaskID+`"`, "a not_ready task is not gated")
			continue
		}
		gated++
		assert.False(t, res.DryRun)
		assert.Equal(t, 1, strings.Count(string(events), `"event_type":"gate_result","mission_id":"m1","task_id":"`+at.TaskID+`"`), at.TaskID)
		rec, err := record.LoadPath(filepath.Join(dir, ".geas", "missions", "m1", "tasks", at.TaskID, "record.json"))
		require.NoError(t, err)
		assert.Len(t, rec.History(), 1, at.TaskID)
	}
	assert.Equal(t, 10, gated)
}

func causeList(causes any) string {
	b, _ := json.Marshal(causes)
	return string(b)
}
