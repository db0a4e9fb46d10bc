package gate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAnAgentCannotLogAsTheGate: an event that speaks as the gate is refused however it is
// spelled (letter case, surrounding space, underscores, unicode dashes, fullwidth letters,
// zero-width and combining characters), and a task_transition to verified is refused even behind
// a duplicate "to"; the honest events beside them are logged.
func TestAnAgentCannotLogAsTheGate(t *testing.T) {
	t.Parallel()
	refused := []EventOptions{
		{Type: "task_started", Agent: "geas-gate"},
		{Type: "task_started", Agent: " GEAS-Gate "},
		{Type: "task_started", Agent: "geas_gate"},
		{Type: "task_started", Agent: "geas\u2010gate"},
		{Type: "task_started", Agent: "geas\u2011gate-bot"},
		{Type: "task_started", Agent: "geas-gate\u200b"},
		{Type: "task_started", Agent: "ｇｅａｓ-ｇａｔｅ"},
		{Type: "task_started", Agent: "gea\u0301s-gate"},
		{Type: "gate_result", Agent: "qa-engineer"},
		{Type: "Gate_Result", Agent: "qa-engineer"},
		{Type: " revocation", Agent: "qa-engineer"},
		{Type: "budget\u2011grant", Agent: "qa-engineer"},
		{Type: "history_reset", Agent: "qa-engineer"},
		{Type: "rules_approval", Agent: "lead"},
		{Type: " Rules-Approval\u200b", Agent: "lead"},
		{Type: "ｒｕｌｅｓ_ａｐｐｒｏｖａｌ", Agent: "lead"},
		{Type: "ESCALATION", Agent: "qa-engineer"},
		{Type: "task_transition", Agent: "qa-engineer", Data: json.RawMessage(`{"to":"verified"}`)},
		{Type: "Task-Transition", Agent: "qa-engineer", Data: json.RawMessage(`{"to":"reviewed","TO":" VERIFIED"}`)},
	}
	for _, e := range refused {
		assert.Error(t, CheckEvent(e), "%+v", e)
	}
	honest := []EventOptions{
		{Type: "task_started", Agent: "qa-engineer"},
		{Type: "task_started", Agent: "geas-gatekeeper"},
		{Type: "gate_result_seen", Agent: "qa-engineer"},
		{Type: "rules_approval_requested", Agent: "lead"},
		{Type: "task_transition", Agent: "qa-engineer", Data: json.RawMessage(`{"to":"reviewed"}`)},
		{Type: "note", Data: json.RawMessage(`{"verdict":"verified"}`)},
	}
	for _, e := range honest {
		assert.NoError(t, CheckEvent(e), "%+v", e)
	}
	err := CheckEvent(EventOptions{Type: "note", Data: json.RawMessage(`[1]`)})
	assert.Error(t, err, "data that is not an object")
	assert.False(t, errors.As(err, new(*InputError)), "a payload error is the payload's, as before: exit 1")
}
