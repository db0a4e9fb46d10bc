package record

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/geas-dev/geas/vocab"
)

// The event types the ledger logs for a gate run, in the order it logs them.
const (
	EventGateResult     = "gate_result"
	EventTaskTransition = "task_transition"
	EventEscalation     = "escalation"
)

// Move is a change of a task's status.
type Move struct {
	From vocab.State `json:"from"`
	To   vocab.State `json:"to"`
}

// RunOutcome is what a gate run's writes after its commit point are derived from, besides its
// history entry: the full result as recorded, and the few fields of it those writes need (the
// record package does not know the result's type).
type RunOutcome struct {
	Result             json.RawMessage // the full result (gate_result), its hash included
	RunID              string
	Verdict            string
	GateProfile        string
	TierResults        json.RawMessage // the result's tier_results, as JSON
	BlockingDimensions []string
	RetryBudgetBefore  *int
	RetryBudgetAfter   *int
	Causes             json.RawMessage // the result's causes, as JSON
	Transition         *Move
	Escalation         string // the pending decision the run wrote, relative to the project ("" none)
	Hash               string // the run's history entry ("" when nothing was recorded)
}

// Plan is every write a history entry implies after it is recorded (SPEC §7.3), as data: derived
// once from the entry (PlanRun from a gate run's entry and result, PlanRevocation, PlanEntry for
// an authority's entry), and applied by Ledger.Apply both right after the entry is recorded and,
// after a crash or a failed write, by the next command that takes the task's lock. Each write is
// keyed by the entry, so applying a plan twice writes nothing the second time.
type Plan struct {
	Mission, Task, TaskDir string
	RunID                  string
	Name                   string          // how notes name the entry ("" the run id)
	Hash                   string          // the run's history entry; "" when nothing was recorded
	Result                 json.RawMessage // gate_result of record.json
	PinBy                  string          // who the pinned copy says pinned the rules ("" no pin)
	PinRules               string          // the rules_sha256 the run's entry pins
	Move                   *Move           // the contract's status
	DecisionID             string          // the pending decision of an escalation ("" none)
	Decision               []byte          // its document
	Events                 []Event         // in the order they are logged
	// History is the task's history up to and including the entry (PlanInput.History): what
	// Commit records of a gate run; nil when nothing is recorded.
	History []HistoryEntry
}

// PlanInput is what PlanRun derives a plan from.
type PlanInput struct {
	Mission, Task, TaskDir string
	// History is the task's history up to and including the run's entry (the escalation
	// decision lists the budget steps); nil when nothing was recorded.
	History []HistoryEntry
	// Pins: the run's entry is the one that pins the task's rules (its first recorded run).
	Pins             bool
	RulesSHA256      string
	Outcome          RunOutcome
	EscalationPolicy string // the contract's effective escalation policy
}

// PlanRun derives the plan of a gate run's writes after its commit point.
func PlanRun(in PlanInput, now time.Time) (*Plan, error) {
	o := in.Outcome
	p := &Plan{Mission: in.Mission, Task: in.Task, TaskDir: in.TaskDir, RunID: o.RunID, Hash: o.Hash, Result: o.Result, Move: o.Transition, History: in.History}
	if in.Pins && in.RulesSHA256 != "" {
		p.PinBy, p.PinRules = "gate run "+o.RunID, in.RulesSHA256
	}
	events, err := runEvents(in, o)
	if err != nil {
		return nil, err
	}
	p.Events = events
	if o.Escalation != "" {
		p.DecisionID = EscalationID(in.Task, o.RunID)
		if p.Decision, err = escalationDecision(in, o, p.DecisionID, now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// PlanRevocation is the plan of the writes that follow from the revocation entry e of a task
// that was in state when revoked (SPEC §7.2): the task moves back to its gate state to (when it
// was verified; "" when it was not, or its contract cannot be read), and the revocation and
// transition events are logged.
func PlanRevocation(mission, task, taskDir string, e HistoryEntry, state, to vocab.State) (*Plan, error) {
	p := &Plan{Mission: mission, Task: task, TaskDir: taskDir, RunID: e.RunID, Name: "revocation " + e.RunID, Hash: e.Hash}
	ev, err := RevocationEvent(mission, task, e, string(state))
	if err != nil {
		return nil, err
	}
	p.Events = append(p.Events, ev)
	if state == vocab.Verified && to != "" {
		p.Move = &Move{From: state, To: to}
		ev, err := RevocationTransitionEvent(mission, task, e.RunID, state, to, e.Hash)
		if err != nil {
			return nil, err
		}
		p.Events = append(p.Events, ev)
	}
	return p, nil
}

// Unmoved is the plan without the move of the task's status, its pending decision and their
// events: what is left of a run whose result claims a move its entry does not imply (a
// result.json edited after the run).
func (p *Plan) Unmoved() *Plan {
	q := *p
	q.Move, q.DecisionID, q.Decision = nil, "", nil
	q.Events = nil
	for _, ev := range p.Events {
		if ev.EventType == EventGateResult {
			q.Events = append(q.Events, ev)
		}
	}
	return &q
}

// runEvents are the events of a run, in the order they are logged: gate_result, then the
// task_transition and escalation it made. Each names the run's history entry by hash.
func runEvents(in PlanInput, o RunOutcome) ([]Event, error) {
	data, err := json.Marshal(struct {
		RunID              string          `json:"run_id"`
		Verdict            string          `json:"verdict"`
		GateProfile        string          `json:"gate_profile"`
		TierResults        json.RawMessage `json:"tier_results"`
		BlockingDimensions []string        `json:"blocking_dimensions"`
		RetryBudgetBefore  *int            `json:"retry_budget_before"`
		RetryBudgetAfter   *int            `json:"retry_budget_after"`
		// Hash is the run's history entry: every gate_result event must name an entry the
		// history holds (SPEC §7.4), so a dropped entry is seen. Absent when nothing was recorded.
		Hash string `json:"hash,omitempty"`
	}{o.RunID, o.Verdict, o.GateProfile, nullIfEmpty(o.TierResults), o.BlockingDimensions, o.RetryBudgetBefore, o.RetryBudgetAfter, o.Hash})
	if err != nil {
		return nil, err
	}
	events := []Event{{EventType: EventGateResult, MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: data}}
	if t := o.Transition; t != nil {
		d, _ := json.Marshal(map[string]string{"from": string(t.From), "to": string(t.To), "by": "geas-gate", "run_id": o.RunID, "hash": o.Hash})
		events = append(events, Event{EventType: EventTaskTransition, MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	if o.Escalation != "" {
		d, _ := json.Marshal(map[string]any{"run_id": o.RunID, "decision": o.Escalation, "escalation_policy": in.EscalationPolicy, "causes": nullIfEmpty(o.Causes), "hash": o.Hash})
		events = append(events, Event{EventType: EventEscalation, MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	return events, nil
}

func nullIfEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// escalationDecision is the pending decision record of a run that spent the last retry (SPEC
// §7.2): the escalation policy, the failures and the budget history.
func escalationDecision(in PlanInput, o RunOutcome, id string, now time.Time) ([]byte, error) {
	type budgetStep struct {
		RunID   string `json:"run_id"`
		Verdict string `json:"verdict"`
		Before  *int   `json:"retry_budget_before,omitempty"`
		After   *int   `json:"retry_budget_after,omitempty"`
	}
	var steps []budgetStep
	for _, e := range in.History {
		if e.Kind == KindApproval {
			continue // pins the rules; the budget is not its business
		}
		v := e.Verdict
		if v == "" {
			v = e.Kind
		}
		steps = append(steps, budgetStep{RunID: e.RunID, Verdict: v, Before: e.RetryBudgetBefore, After: e.RetryBudgetAfter})
	}
	policy := in.EscalationPolicy
	dec := map[string]any{
		"version":           "1.0",
		"artifact_type":     "decision_record",
		"artifact_id":       id,
		"producer_type":     "geas-gate",
		"title":             fmt.Sprintf("Task %s spent its retry budget: %s", in.Task, policy),
		"decision_type":     "escalation",
		"status":            "pending",
		"created_at":        Timestamp(now),
		"task_id":           in.Task,
		"mission_id":        in.Mission,
		"escalation_policy": policy,
		"context":           fmt.Sprintf("gate run %s failed with no retries left (budget %s -> %s)", o.RunID, BudgetText(o.RetryBudgetBefore), BudgetText(o.RetryBudgetAfter)),
		"failures":          nullIfEmpty(o.Causes),
		"budget_history":    steps,
	}
	b, err := json.MarshalIndent(dec, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
