package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/vocab"
)

// hookGate runs HookGate on the fixture's task.
func (f *fixture) hookGate() *HookCheck {
	f.T.Helper()
	h, err := HookGate(f.T.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, HookOptions{})
	require.NoError(f.T, err)
	return h
}

// TestHooksTakeNoTerminalStateOnTrust: the rule both agent hooks answer from (SPEC §9). A task
// whose contract says escalated, blocked or cancelled is not gated, and the check says whether the
// records back that state: a state written by hand is reported unbacked, the same state reached
// through geas task transition (its event) is backed. Every other task is gated, and an
// unreadable contract is gated too, never taken as a reason to let the agent stop.
func TestHooksTakeNoTerminalStateOnTrust(t *testing.T) {
	t.Parallel()
	for _, state := range []vocab.State{vocab.Escalated, vocab.Blocked, vocab.Cancelled} {
		t.Run(string(state)+" set by hand", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.Contract(func(m map[string]any) { m["status"] = string(state) })
			events := len(f.Events())
			h := f.hookGate()
			assert.True(t, h.NotGated)
			assert.False(t, h.Backed, "a state set by hand is not backed: %s", h.Why)
			assert.NotEmpty(t, h.Why)
			assert.Nil(t, h.Result, "a task in this state is not gated")
			assert.Equal(t, state, h.State)
			assert.Len(t, f.Events(), events, "nothing is logged")
		})
	}
	t.Run("cancelled by transition", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		tk := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
		done, err := Transition(t.Context(), tk, TransitionOptions{To: []vocab.State{vocab.Cancelled}, Agent: "orchestration-authority", Reason: "dropped"})
		require.NoError(t, err)
		assert.Equal(t, []TransitionStep{{vocab.Integrated, vocab.Cancelled}}, done.Steps)
		h := f.hookGate()
		assert.True(t, h.NotGated)
		assert.True(t, h.Backed, "a cancel geas task transition logged is backed: %s", h.Why)
		assert.Nil(t, h.Result)
	})
	t.Run("integrated is gated", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		h := f.hookGate()
		assert.False(t, h.NotGated)
		require.NotNil(t, h.Result)
		assert.True(t, h.Result.Verdict.IsPass(), "the example task passes: %+v", h.Result.Causes)
		assert.False(t, h.Result.Recheck)
		assert.Equal(t, "verified", f.Status(), "a hook's run is recorded, as geas gate's")
		h = f.hookGate()
		require.NotNil(t, h.Result)
		assert.True(t, h.Result.Recheck, "a verified task is re-checked")
		assert.Equal(t, "verified", h.RecheckState())
	})
	t.Run("unreadable contract is gated", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.Write(testfixture.TaskFile("contract.json"), `{"status": "cancelled"`)
		h := f.hookGate()
		assert.Error(t, h.ContractErr)
		assert.False(t, h.NotGated, "a status that cannot be read lets nothing through")
		require.NotNil(t, h.Result)
		assert.Equal(t, vocab.VerdictError, h.Result.Verdict)
	})
}
