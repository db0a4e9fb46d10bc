package cmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/project"
)

// TestHookInputIsReadLeniently: stop_hook_active is read as Claude Code may send it, a value the
// hook cannot read counts as true, keys are exact, task_id is a string or a number's digits.
func TestHookInputIsReadLeniently(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		active       bool
		taskID       string
		taskProblem  string
		event, agent string
	}{
		{name: "empty", in: "", active: false},
		{name: "spaces", in: " \n\t", active: false},
		{name: "true", in: `{"stop_hook_active": true}`, active: true},
		{name: "false", in: `{"stop_hook_active": false}`, active: false},
		{name: "string true", in: `{"stop_hook_active": "true"}`, active: true},
		{name: "string TRUE spaced", in: `{"stop_hook_active": " TRUE "}`, active: true},
		{name: "string false", in: `{"stop_hook_active": "False"}`, active: false},
		{name: "string empty", in: `{"stop_hook_active": ""}`, active: false},
		{name: "one", in: `{"stop_hook_active": 1}`, active: true},
		{name: "zero", in: `{"stop_hook_active": 0}`, active: false},
		{name: "zero float", in: `{"stop_hook_active": 0.0}`, active: false},
		{name: "string one", in: `{"stop_hook_active": "1"}`, active: true},
		{name: "string zero", in: `{"stop_hook_active": "0"}`, active: false},
		{name: "yes", in: `{"stop_hook_active": "yes"}`, active: true},
		{name: "off", in: `{"stop_hook_active": "off"}`, active: false},
		{name: "null", in: `{"stop_hook_active": null}`, active: false},
		{name: "unreadable string", in: `{"stop_hook_active": "maybe"}`, active: true},
		{name: "array", in: `{"stop_hook_active": []}`, active: true},
		{name: "object", in: `{"stop_hook_active": {}}`, active: true},
		{name: "case variant is another key", in: `{"Stop_Hook_Active": true, "STOP_HOOK_ACTIVE": "true"}`, active: false},
		{name: "stop fields", in: `{"hook_event_name": "SubagentStop", "agent_type": "geas:software-engineer", "stop_hook_active": false, "future": {"x": [1]}}`,
			event: "SubagentStop", agent: "geas:software-engineer"},
		{name: "task id", in: `{"hook_event_name": "TaskCompleted", "task_id": "task-001"}`, event: "TaskCompleted", taskID: "task-001"},
		{name: "task id number", in: `{"task_id": 7}`, taskID: "7"},
		{name: "task id traversal kept as given", in: `{"task_id": "../x"}`, taskID: "../x"},
		{name: "task id array", in: `{"task_id": ["t1"]}`, taskProblem: "the hook input's task_id is a JSON array, not a task id"},
		{name: "task id bool", in: `{"task_id": true}`, taskProblem: "the hook input's task_id is a JSON boolean, not a task id"},
		{name: "task id null", in: `{"task_id": null}`},
		{name: "task id case variant", in: `{"Task_ID": "t1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := readHookInput(strings.NewReader(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.active, in.StopHookActive, "stop_hook_active")
			assert.Equal(t, tc.taskID, in.TaskID)
			assert.Equal(t, tc.taskProblem, in.TaskIDProblem)
			assert.Equal(t, tc.event, in.Event)
			assert.Equal(t, tc.agent, in.AgentType)
		})
	}
}

// TestHookInputThatIsNotOneObjectIsAUsageError: Claude Code writes stdin, so input that is not one
// JSON object is a configuration mistake (exit 64), never a stop or a completion taken on trust.
func TestHookInputThatIsNotOneObjectIsAUsageError(t *testing.T) {
	for _, in := range []string{
		"not json", `[{"stop_hook_active": true}]`, `"stop"`, `true`, `1`, `null`,
		`{"stop_hook_active": true} {}`, `{"stop_hook_active": false, "stop_hook_active": true}`,
		`{"stop_hook_active": true`, "{\"task_id\": \"t\xff1\"}",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := readHookInput(strings.NewReader(in))
			require.Error(t, err)
			var ue *usageError
			assert.True(t, errors.As(err, &ue), "usage error: %v", err)
			assert.Equal(t, ExitUsage, exitCode(err))
		})
	}
	// Oversize input is not an error (the agent controls its size, and a usage error lets Claude
	// Code go on): it reads as Oversize with no field, even one before the limit.
	in, err := readHookInput(strings.NewReader(`{"task_id":"t1","stop_hook_active":true,"x":"` + strings.Repeat("a", maxHookInputBytes) + `"}`))
	require.NoError(t, err)
	assert.Equal(t, hookInput{Oversize: true}, in)
	in, err = readHookInput(strings.NewReader(`{"x":"` + strings.Repeat("a", maxHookInputBytes-10) + `"}`))
	require.NoError(t, err)
	assert.False(t, in.Oversize)
}

// FuzzHookInput: the hook input parser never panics, refuses what is not one JSON object, and a
// task_id it returns that the selection would use is always a valid id (the selection checks it).
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"Stop","stop_hook_active":"true"}`,
		`{"hook_event_name":"TaskCompleted","task_id":"t1","task_subject":"s"}`,
		`{"task_id":"../x"}`, `{"task_id":1e3}`, `{"stop_hook_active":-0}`, `[]`, ``, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := readHookInput(strings.NewReader(s))
		if err != nil {
			assert.Equal(t, ExitUsage, exitCode(err))
			return
		}
		if in.TaskID != "" && in.TaskIDProblem != "" {
			t.Fatalf("task_id %q with a problem %q", in.TaskID, in.TaskIDProblem)
		}
		if project.IsID(in.TaskID) {
			assert.NotContains(t, in.TaskID, "/")
			assert.NotContains(t, in.TaskID, "..")
		}
	})
}
