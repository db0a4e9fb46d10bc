package cmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
)

// readStop reads in as harness h's stop input.
func readStop(t *testing.T, h stopHarness, in string) (harnessStopInput, error) {
	t.Helper()
	obj, oversize, err := readHarnessObject(strings.NewReader(in), h.name)
	if err != nil {
		return harnessStopInput{}, err
	}
	got, err := h.read(obj)
	got.Oversize = oversize
	return got, err
}

// TestEachHarnessStopInputIsReadInItsOwnShape: the fields each harness documents, with keys read
// exactly (a key that differs by letter case is not the field), the subagent's stop told from the
// main one, and the "already continuing" signal known only where the harness sends it.
func TestEachHarnessStopInputIsReadInItsOwnShape(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       stopHarness
		in      string
		want    harnessStopInput
		wantErr string
	}{
		{name: "codex stop", h: codexHarness,
			in:   `{"session_id":"s","turn_id":"u","cwd":"/p","hook_event_name":"Stop","stop_hook_active":true}`,
			want: harnessStopInput{Event: "Stop", Active: true, ActiveKnown: true, ActiveName: "stop_hook_active", Cwd: "/p", Session: "s"}},
		{name: "codex subagent stop", h: codexHarness,
			in: `{"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_type":"worker","cwd":"/p"}`,
			want: harnessStopInput{Event: "SubagentStop", Subagent: true, ActiveKnown: true, ActiveName: "stop_hook_active", Cwd: "/p",
				Agent: gate.StopAgent{Event: "SubagentStop", Type: "worker"}}},
		{name: "codex key in another case is not the field", h: codexHarness,
			in:   `{"Stop_Hook_Active":true,"CWD":"/p"}`,
			want: harnessStopInput{Event: "Stop", ActiveKnown: true, ActiveName: "stop_hook_active"}},
		{name: "codex empty input is a first stop", h: codexHarness, in: "",
			want: harnessStopInput{Event: "Stop", ActiveKnown: true, ActiveName: "stop_hook_active"}},
		{name: "codex other event", h: codexHarness, in: `{"hook_event_name":"PreToolUse"}`, wantErr: `event "PreToolUse", which is not a Codex CLI stop event`},
		{name: "codex event in another case", h: codexHarness, in: `{"hook_event_name":"stop"}`, wantErr: `which is not a Codex CLI stop event`},
		{name: "codex not an object", h: codexHarness, in: `[1]`, wantErr: "not a Codex CLI hook's JSON object"},
		{name: "codex repeated key", h: codexHarness, in: `{"stop_hook_active":false,"stop_hook_active":true}`, wantErr: "hook input"},

		{name: "copilot agentStop camelCase", h: copilotHarness,
			in:   `{"sessionId":"s","timestamp":1,"cwd":"/p","transcriptPath":"/t","stopReason":"end_turn","stop_hook_active":true}`,
			want: harnessStopInput{Event: "agentStop", Active: true, ActiveKnown: true, ActiveName: "stop_hook_active", Cwd: "/p", Session: "s"}},
		{name: "copilot subagentStop camelCase has no signal", h: copilotHarness,
			in: `{"sessionId":"s","timestamp":1,"cwd":"/p","agentId":"a","agentType":"custom","agentName":"x","response":"r","stopReason":"end_turn"}`,
			want: harnessStopInput{Event: "subagentStop", Subagent: true, ActiveName: "stop_hook_active", Cwd: "/p", Session: "s",
				Agent: gate.StopAgent{Event: "subagentStop", Type: "custom", ID: "a"}}},
		{name: "copilot VS Code Stop", h: copilotHarness,
			in:   `{"hook_event_name":"Stop","session_id":"s","cwd":"/p","stop_hook_active":false}`,
			want: harnessStopInput{Event: "Stop", ActiveKnown: true, ActiveName: "stop_hook_active", Cwd: "/p", Session: "s"}},
		{name: "copilot VS Code SubagentStop", h: copilotHarness,
			in: `{"hook_event_name":"SubagentStop","session_id":"s","cwd":"/p","agent_type":"x"}`,
			want: harnessStopInput{Event: "SubagentStop", Subagent: true, ActiveName: "stop_hook_active", Cwd: "/p", Session: "s",
				Agent: gate.StopAgent{Event: "SubagentStop", Type: "x"}}},
		{name: "copilot other event", h: copilotHarness, in: `{"hook_event_name":"PreToolUse"}`, wantErr: "not a GitHub Copilot stop event"},

		{name: "cursor stop", h: cursorHarness,
			in:   `{"conversation_id":"c","hook_event_name":"stop","workspace_roots":["/p","/q"],"status":"completed","loop_count":3}`,
			want: harnessStopInput{Event: "stop", Active: true, ActiveKnown: true, ActiveName: "loop_count", Stops: 4, Cwd: "/p", Session: "c"}},
		{name: "cursor first stop", h: cursorHarness,
			in:   `{"hook_event_name":"stop","workspace_roots":["/p"],"status":"error","loop_count":0}`,
			want: harnessStopInput{Event: "stop", ActiveKnown: true, ActiveName: "loop_count", Stops: 1, Cwd: "/p"}},
		{name: "cursor aborted", h: cursorHarness,
			in:   `{"hook_event_name":"stop","status":"aborted","loop_count":0}`,
			want: harnessStopInput{Event: "stop", ActiveKnown: true, ActiveName: "loop_count", Stops: 1, Aborted: true}},
		{name: "cursor subagentStop without loop_count", h: cursorHarness,
			in:   `{"hook_event_name":"subagentStop","subagent_type":"x","status":"completed"}`,
			want: harnessStopInput{Event: "subagentStop", Subagent: true, ActiveName: "loop_count"}},
		{name: "cursor loop_count it cannot count only relaxes", h: cursorHarness,
			in:   `{"hook_event_name":"stop","loop_count":-2}`,
			want: harnessStopInput{Event: "stop", Active: true, ActiveKnown: true, ActiveName: "loop_count"}},
		{name: "cursor loop_count as a fraction", h: cursorHarness,
			in:   `{"hook_event_name":"stop","loop_count":1.5}`,
			want: harnessStopInput{Event: "stop", Active: true, ActiveKnown: true, ActiveName: "loop_count"}},
		{name: "cursor byte-order mark", h: cursorHarness,
			in:   "\ufeff" + `{"hook_event_name":"stop","loop_count":0}`,
			want: harnessStopInput{Event: "stop", ActiveKnown: true, ActiveName: "loop_count", Stops: 1}},
		{name: "cursor other event", h: cursorHarness, in: `{"hook_event_name":"beforeShellExecution"}`, wantErr: "not a Cursor stop event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readStop(t, tc.h, tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				var u *usageError
				assert.True(t, errors.As(err, &u), "a hook configured wrongly is a usage error: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestAnOversizeHarnessInputIsAFirstStop: the agent controls the input's size; input over the
// bound is not read (every field unknown) and is not an error that would let the agent go.
func TestAnOversizeHarnessInputIsAFirstStop(t *testing.T) {
	big := `{"hook_event_name":"Stop","stop_hook_active":true,"x":"` + strings.Repeat("a", maxHookInputBytes) + `"}`
	got, err := readStop(t, codexHarness, big)
	require.NoError(t, err)
	assert.True(t, got.Oversize)
	assert.False(t, got.Active, "nothing of it was read")
}
