package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpSession starts `geas -C dir mcp` as a subprocess and connects the SDK's client to it over
// stdio; the session (and the process) end with the test.
func mcpSession(t *testing.T, dir string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionWith(t, dir, nil)
}

// mcpSessionWith is mcpSession with client options (a progress handler).
func mcpSessionWith(t *testing.T, dir string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "geas-test", Version: "v0.0.0"}, opts)
	cmd := exec.Command("geas", "-C", dir, "mcp")
	cmd.Stderr = os.Stderr
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result, decoding the structured content into out (if not nil).
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool error is a result, never a protocol error")
	if out != nil {
		require.False(t, res.IsError, "tool %s failed: %s", name, mcpText(res))
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	return res
}

// toolText joins a result's text content.
func mcpText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// mcpAssertNothingWritten checks that nothing under .geas changed since before (a snapshot), and
// says so for the files a gate run writes first: record.json and contract.json, byte for byte, and
// no events.jsonl, gate logs or decision.
func mcpAssertNothingWritten(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
	for _, name := range []string{"record.json", "contract.json"} {
		b, err := os.ReadFile(filepath.Join(dir, taskDir, name))
		require.NoError(t, err)
		key := filepath.FromSlash(strings.TrimPrefix(taskDir, ".geas/") + "/" + name)
		require.Contains(t, before, key)
		assert.Equal(t, before[key], string(b), "%s changed", name)
	}
	assert.NoFileExists(t, filepath.Join(dir, ".geas/state/events.jsonl"))
	assert.NoDirExists(t, filepath.Join(dir, taskDir, "gate-logs"))
	assert.NoDirExists(t, filepath.Join(dir, ".geas/missions/m1/decisions"))
	assert.Equal(t, before, after, "nothing under .geas changed")
}

// TestAnAgentCanAskForAVerdictButNotWriteOne: over MCP, geas_gate_evaluate gives the verdict a gate
// run would give (here a pass that would move the task to verified) and writes nothing:
// record.json and contract.json are byte for byte the same, no event, log or decision.
func TestAnAgentCanAskForAVerdictButNotWriteOne(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	before := snapshot(t, dir)
	cs := mcpSession(t, dir)

	init := cs.InitializeResult()
	require.NotNil(t, init)
	assert.Equal(t, "geas", init.ServerInfo.Name)
	assert.NotNil(t, init.Capabilities.Tools)

	var res struct {
		Verdict    string          `json:"verdict"`
		TaskID     string          `json:"task_id"`
		DryRun     bool            `json:"dry_run"`
		Transition json.RawMessage `json:"transition"`
		NextAction string          `json:"next_action"`
		Checks     []any           `json:"checks"`
	}
	out := mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &res)
	assert.Equal(t, "pass", res.Verdict)
	assert.Equal(t, "t1", res.TaskID)
	assert.True(t, res.DryRun)
	assert.JSONEq(t, `{"from":"integrated","to":"verified"}`, string(res.Transition))
	assert.Equal(t, "proceed", res.NextAction)
	assert.NotEmpty(t, res.Checks)
	text := mcpText(out)
	assert.Contains(t, text, "verdict: PASS")
	assert.Contains(t, text, "dry run: nothing written")
	assert.Contains(t, text, `"verdict":"pass"`, "the result JSON is in the text content too")
	mcpAssertNothingWritten(t, dir, before)

	// A failing task: the verdict and its causes, still nothing written, no retry spent.
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"exit 1"} })
	before = snapshot(t, dir)
	var failed struct {
		Verdict           string `json:"verdict"`
		RetryBudgetBefore int    `json:"retry_budget_before"`
		RetryBudgetAfter  int    `json:"retry_budget_after"`
		Causes            []struct {
			Code string `json:"code"`
		} `json:"causes"`
	}
	mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1", "mission": "m1"}, &failed)
	assert.Equal(t, "fail", failed.Verdict)
	require.NotEmpty(t, failed.Causes)
	assert.Equal(t, "eval_failed", failed.Causes[0].Code)
	assert.Equal(t, 3, failed.RetryBudgetBefore)
	assert.Equal(t, 2, failed.RetryBudgetAfter, "what the run would spend")

	// The task needs no git: an artifact_only task of the example.
	var t2 struct{ Verdict string }
	mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t2"}, &t2)
	assert.Equal(t, "pass", t2.Verdict)

	mcpAssertNothingWritten(t, dir, before)
	var c struct{ Status string }
	b, err := os.ReadFile(filepath.Join(dir, taskDir, "contract.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &c))
	assert.Equal(t, "integrated", c.Status)
}

// TestNoMCPToolCanWrite: the server offers exactly the read-only tools, none of whose names
// suggests writing a verdict or a state, and each says it is read-only.
func TestNoMCPToolCanWrite(t *testing.T) {
	cs := mcpSession(t, copyExample(t))
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		for _, bad := range []string{"satisfy", "mark_done", "set_", "write"} {
			assert.NotContains(t, strings.ToLower(tool.Name), bad, "tool %s", tool.Name)
		}
		if assert.NotNil(t, tool.Annotations, "tool %s", tool.Name) {
			assert.True(t, tool.Annotations.ReadOnlyHint, "tool %s", tool.Name)
		}
		assert.NotEmpty(t, tool.Description, "tool %s", tool.Name)
	}
	assert.ElementsMatch(t, []string{mcpToolEvaluate, mcpToolVerify, mcpToolTaskStatus}, names)
}

// TestMCPTaskStatusIsTaskShow: geas_task_status returns what geas task show --format json prints.
func TestMCPTaskStatusIsTaskShow(t *testing.T) {
	dir := copyExample(t)
	cs := mcpSession(t, dir)
	for _, task := range []string{"t1", "t2"} {
		var got map[string]any
		mcpCall(t, cs, mcpToolTaskStatus, map[string]any{"task": task}, &got)
		out, err := exec.Command("geas", "-C", dir, "--format", "json", "task", "show", "--task", task).Output()
		require.NoError(t, err)
		want, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, string(out), string(want), "task %s", task)
	}
}

// TestMCPToolErrorsAreResults: a bad or unknown id, a missing argument or a missing project is a
// tool result with isError set, and the server keeps serving.
func TestMCPToolErrorsAreResults(t *testing.T) {
	dir := copyExample(t)
	cs := mcpSession(t, dir)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"bad task id", mcpToolEvaluate, map[string]any{"task": "../t1"}, "invalid task id"},
		{"unknown task", mcpToolEvaluate, map[string]any{"task": "nosuch"}, "nosuch"},
		{"bad mission id", mcpToolTaskStatus, map[string]any{"task": "t1", "mission": "m/1"}, "invalid mission id"},
		{"unknown mission", mcpToolTaskStatus, map[string]any{"task": "t1", "mission": "m9"}, `mission "m9"`},
		{"missing task", mcpToolTaskStatus, map[string]any{}, "task"},
		{"unknown argument", mcpToolEvaluate, map[string]any{"task": "t1", "verdict": "pass"}, "verdict"},
		{"verify: bad task id", mcpToolVerify, map[string]any{"task": "a b"}, "invalid task id"},
		{"verify: unknown mission", mcpToolVerify, map[string]any{"mission": "m9"}, "m9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mcpCall(t, cs, tc.tool, tc.args, nil)
			assert.True(t, res.IsError, "result: %s", mcpText(res))
			assert.Contains(t, mcpText(res), tc.want)
		})
	}
	var st struct{ Status string }
	mcpCall(t, cs, mcpToolTaskStatus, map[string]any{"task": "t2"}, &st)
	assert.Equal(t, "reviewed", st.Status, "the server still serves after errors")

	noProject := mcpSession(t, t.TempDir())
	res := mcpCall(t, noProject, mcpToolTaskStatus, map[string]any{"task": "t1"}, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, mcpText(res), ".geas")
}

// TestMCPVerifyCanTakeAPassBack: geas_gate_verify reports a verified task as intact, then as revoked
// once the artifact its criterion checks is gone, and writes nothing either time.
func TestMCPVerifyCanTakeAPassBack(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	code, res := gateTask(t, dir)
	require.Equal(t, 0, code, "the example task passes: %v", res["causes"])
	cs := mcpSession(t, dir)

	type report struct {
		MissionID string `json:"mission_id"`
		OK        bool   `json:"ok"`
		Tasks     []struct {
			TaskID string `json:"task_id"`
			State  string `json:"state"`
			Status string `json:"status"`
			Causes []struct {
				Code  string `json:"code"`
				Check string `json:"check"`
			} `json:"causes"`
		} `json:"tasks"`
		Skipped []struct {
			TaskID string `json:"task_id"`
		} `json:"skipped"`
	}
	before := snapshot(t, dir)
	events, err := os.ReadFile(filepath.Join(dir, ".geas/state/events.jsonl"))
	require.NoError(t, err)

	var all report
	mcpCall(t, cs, mcpToolVerify, map[string]any{}, &all)
	assert.Equal(t, "m1", all.MissionID)
	assert.True(t, all.OK)
	require.Len(t, all.Tasks, 1)
	assert.Equal(t, "t1", all.Tasks[0].TaskID)
	assert.Equal(t, "verified", all.Tasks[0].State)
	assert.Equal(t, "intact", all.Tasks[0].Status)
	require.Len(t, all.Skipped, 1)
	assert.Equal(t, "t2", all.Skipped[0].TaskID)

	assert.Equal(t, before, snapshot(t, dir), "verifying every task changed nothing under .geas")
	withdrawQA(t, dir)
	before = snapshot(t, dir)
	var one report
	out := mcpCall(t, cs, mcpToolVerify, map[string]any{"task": "t1"}, &one)
	assert.False(t, one.OK)
	require.Len(t, one.Tasks, 1)
	assert.Equal(t, "revoked", one.Tasks[0].Status)
	require.NotEmpty(t, one.Tasks[0].Causes)
	assert.Contains(t, mcpText(out), "t1 revoked")

	assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")
	eventsAfter, err := os.ReadFile(filepath.Join(dir, ".geas/state/events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, string(events), string(eventsAfter))
}

// TestMCPEvaluateDoesNotTrustAHandSetVerified: a task set to verified by hand (no gate pass in its
// history) is re-checked like any finished task (SPEC §7.2), and the recheck says the records do
// not back the state: error state_unverified, not state_ineligible, and nothing written.
func TestMCPEvaluateDoesNotTrustAHandSetVerified(t *testing.T) {
	dir := copyExample(t)
	editContract(t, dir, func(c map[string]any) { c["status"] = "verified" })
	before := snapshot(t, dir)
	var got struct {
		Verdict    string `json:"verdict"`
		Recheck    bool   `json:"recheck"`
		NextAction string `json:"next_action"`
		Causes     []struct {
			Code string `json:"code"`
		} `json:"causes"`
	}
	out := mcpCall(t, mcpSession(t, dir), mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "error", got.Verdict)
	assert.True(t, got.Recheck)
	assert.Equal(t, "investigate_error", got.NextAction)
	var codes []string
	for _, c := range got.Causes {
		codes = append(codes, c.Code)
	}
	assert.Contains(t, codes, "state_unverified")
	assert.NotContains(t, codes, "state_ineligible")
	assert.Contains(t, mcpText(out), "the records do not back the state")
	assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")
}

// TestMCPEvaluateRefusesAKeyItsCodeCouldRead: geas mcp's evaluate goes through the same run as
// geas gate: with GEAS_GATE_KEY in the environment of the process that starts it, the task's eval
// commands could read the key from there, so the run is refused (key_exposed) and writes nothing.
// The control: without the key, the same evaluation runs (this copy has no git repository, which
// is what it then reports).
func TestMCPEvaluateRefusesAKeyItsCodeCouldRead(t *testing.T) {
	type result struct {
		Verdict string `json:"verdict"`
		Causes  []struct {
			Code string `json:"code"`
		} `json:"causes"`
	}
	dir := copyExample(t)
	before := snapshot(t, dir)
	t.Setenv("GEAS_GATE_KEY", "sekrit-mcp-31")
	var got result
	mcpCall(t, mcpSession(t, dir), mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "error", got.Verdict)
	require.NotEmpty(t, got.Causes)
	assert.Equal(t, "key_exposed", got.Causes[0].Code)
	assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")

	t.Setenv("GEAS_GATE_KEY", "")
	got = result{}
	mcpCall(t, mcpSession(t, dir), mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	require.NotEmpty(t, got.Causes)
	assert.Equal(t, "no_repository", got.Causes[0].Code, "%+v", got.Causes)
}

// TestMCPEvaluateOfAnEscalatedTaskSaysEscalate: the gate refuses an escalated task, and the MCP
// tool's next action says it waits for an authority's decision, not investigate_error; nothing
// is written. The control, the same task integrated, is gated as usual.
func TestMCPEvaluateOfAnEscalatedTaskSaysEscalate(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	cs := mcpSession(t, dir)
	var got struct {
		Verdict    string   `json:"verdict"`
		NextAction string   `json:"next_action"`
		Notes      []string `json:"notes"`
	}
	mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "pass", got.Verdict, "control")

	editContract(t, dir, func(c map[string]any) { c["status"] = "escalated" })
	before := snapshot(t, dir)
	got.Notes = nil
	mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "error", got.Verdict)
	assert.Equal(t, "escalate", got.NextAction)
	assert.Contains(t, strings.Join(got.Notes, "\n"), "task t1 is escalated: an authority decides")
	assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")
}
