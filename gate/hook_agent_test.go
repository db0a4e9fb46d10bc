package gate

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// agentStops are the agent_stop lines of the fixture's event log.
func (f *fixture) agentStops() []string {
	b, err := os.ReadFile(f.Path(".geas/state/events.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(f.T, err)
	var out []string
	for _, e := range strings.Split(string(b), "\n") {
		if strings.Contains(e, `"event_type":"`+EventAgentStop+`"`) {
			out = append(out, e)
		}
	}
	return out
}

// TestAStopRecordsWhichAgentStopped: a hook gate run whose input names the stopping agent logs an
// agent_stop event with the agent, its id, the hook event, the run and its verdict (or the state
// that ended the work without a run); one that names none (the main session) logs nothing, and
// the history verifies either way.
func TestAStopRecordsWhichAgentStopped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	tk := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
	_, err := HookGate(t.Context(), tk, HookOptions{})
	require.NoError(t, err)
	assert.Empty(t, f.agentStops(), "the main session names no agent")

	h, err := HookGate(t.Context(), tk, HookOptions{Agent: StopAgent{Event: "SubagentStop", Type: "geas:software-engineer", ID: "a1"}})
	require.NoError(t, err)
	require.NotNil(t, h.Result)
	stops := f.agentStops()
	require.Len(t, stops, 1)
	for _, want := range []string{`"agent":"geas:software-engineer"`, `"agent_id":"a1"`, `"hook_event_name":"SubagentStop"`,
		`"run_id":"` + h.Result.RunID + `"`, `"verdict":"` + string(h.Result.Verdict) + `"`, `"task_id":"` + testTask + `"`} {
		assert.Contains(t, stops[0], want)
	}
	_, rec, err := LoadRecord(tk, time.Now())
	require.NoError(t, err)
	assert.Empty(t, HistoryProblems(tk, rec), "an agent_stop names no history entry")

	f.Contract(func(m map[string]any) { m["status"] = string(vocab.Cancelled) })
	_, err = HookGate(t.Context(), tk, HookOptions{Agent: StopAgent{Event: "SubagentStop", ID: "a2"}})
	require.NoError(t, err)
	stops = f.agentStops()
	require.Len(t, stops, 2)
	assert.Contains(t, stops[1], `"agent":"a2"`, "the id stands for a missing agent_type")
	assert.Contains(t, stops[1], `"state":"cancelled"`)
	assert.NotContains(t, stops[1], `"run_id"`)
}
