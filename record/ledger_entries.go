package record

import (
	"encoding/json"
	"fmt"

	"github.com/geas-dev/geas/vocab"
)

// Event types of an authority's history entry and of a revocation.
const (
	EventBudgetGrant   = "budget_grant"
	EventRulesApproval = "rules_approval"
	EventHistoryReset  = KindHistoryReset
	EventRevocation    = KindRevocation
)

// EntryEvent is the event of an authority's history entry (a budget grant, a history reset or a
// rules approval), derived from the entry alone and naming it by hash: written right after the
// entry is recorded, and by the next command on the task when that was cut short (SPEC §7.3).
func EntryEvent(mission, task string, e HistoryEntry) (Event, error) {
	by := ExtraString(e, "by")
	var data []byte
	var err error
	typ := ""
	retries, _ := extraInt(e, "retries")
	switch e.Kind {
	case KindBudgetGrant:
		typ = EventBudgetGrant
		before, after := 0, 0
		if e.RetryBudgetBefore != nil {
			before = *e.RetryBudgetBefore
		}
		if e.RetryBudgetAfter != nil {
			after = *e.RetryBudgetAfter
		}
		data, err = json.Marshal(struct {
			By      string `json:"by"`
			Retries int    `json:"retries"`
			Before  int    `json:"retry_budget_before"`
			After   int    `json:"retry_budget_after"`
			Reason  string `json:"reason"`
			Hash    string `json:"hash"`
		}{by, retries, before, after, ExtraString(e, "reason"), e.Hash})
	case KindHistoryReset:
		typ = EventHistoryReset
		data, err = json.Marshal(map[string]any{"by": by, "reason": ExtraString(e, "reason"), "retries": retries,
			"kept_aside": ExtraString(e, "kept_aside"), "hash": e.Hash})
	case KindApproval:
		typ = EventRulesApproval
		data, err = json.Marshal(struct {
			By          string `json:"by"`
			Reason      string `json:"reason"`
			RulesSHA256 string `json:"rules_sha256"`
			Hash        string `json:"hash"`
		}{by, ExtraString(e, "reason"), e.RulesSHA256, e.Hash})
	default:
		return Event{}, fmt.Errorf("a history entry of kind %q has no event of its own", e.Kind)
	}
	if err != nil {
		return Event{}, err
	}
	return Event{EventType: typ, MissionID: mission, TaskID: task, Agent: by, Data: data}, nil
}

// RevocationEvent is the revocation event of the entry e (the task was in state when revoked).
func RevocationEvent(mission, task string, e HistoryEntry, state string) (Event, error) {
	causes := json.RawMessage(`[]`)
	if len(e.Causes) > 0 {
		causes = e.Causes
	}
	data, err := json.Marshal(map[string]any{"run_id": e.RunID, "revokes": ExtraString(e, "revokes"), "verdict": e.Verdict,
		"causes": causes, "state": state, "inputs_sha256": e.InputsSHA256, "hash": e.Hash})
	if err != nil {
		return Event{}, err
	}
	return Event{EventType: EventRevocation, MissionID: mission, TaskID: task, Agent: "geas-gate", Data: data}, nil
}

// RevocationTransitionEvent is the task_transition event of a revocation.
func RevocationTransitionEvent(mission, task, runID string, from, to vocab.State, hash string) (Event, error) {
	d, err := json.Marshal(map[string]string{"from": string(from), "to": string(to), "by": "geas-gate", "run_id": runID, "reason": "revocation", "hash": hash})
	if err != nil {
		return Event{}, err
	}
	return Event{EventType: EventTaskTransition, MissionID: mission, TaskID: task, Agent: "geas-gate", Data: d}, nil
}

// ExtraString reads a string of the entry's extra keys ("" when it is missing or not a string).
func ExtraString(e HistoryEntry, key string) string {
	var s string
	if raw, ok := e.Extra[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// PlanEntry is the plan of the writes that follow from an authority's entry e (a budget grant, a
// history reset or a rules approval): its event and, for an approval, the pinned copy of the
// rules it approved. The command that records e applies it, and so does the completion when that
// command was cut short.
func PlanEntry(mission, task, taskDir string, e HistoryEntry) (*Plan, error) {
	ev, err := EntryEvent(mission, task, e)
	if err != nil {
		return nil, err
	}
	p := &Plan{Mission: mission, Task: task, TaskDir: taskDir, RunID: e.RunID, Name: fmt.Sprintf("entry %.12s", e.Hash), Hash: e.Hash, Events: []Event{ev}}
	if e.Kind == KindApproval {
		p.PinBy, p.PinRules = "approval by "+ExtraString(e, "by"), e.RulesSHA256
	}
	return p, nil
}
