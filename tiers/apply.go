package tiers

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/geas-dev/geas/record"
)

// Apply writes what a run decided (SPEC §7): gate_result and a hash-chained gate_history entry in
// record.json, the transition in contract.json, the pending decision record of an escalation, and
// the events. The caller holds the task lock for the whole run. Writes happen in that order, each
// atomic, so a crash leaves the record (the budget's source of truth) either before or after the run.
func Apply(in *Input, res *Result, escalate bool, now time.Time) error {
	escalate, write, err := fitForRecord(in, res, escalate) // SPEC §7.3, §10: nothing the readers refuse
	if err != nil || !write {
		return err
	}
	var decisionID string
	if escalate {
		decisionID = fmt.Sprintf("esc-%s-%s", in.Task, res.RunID)
		res.Escalation = fmt.Sprintf(".geas/missions/%s/decisions/pending/%s.json", in.Mission, decisionID)
	}
	if historyTampered(res.Checks) {
		// SPEC §5.1: nothing is appended to a history that does not verify, and nothing derived
		// from it (the budget, a transition, an escalation) is written. The event still tells
		// the log that the gate ran and refused.
		return logEvents(in, res)
	}
	if in.Record != nil {
		_, pinned := record.PinnedRules(in.Record)
		entry, err := in.Record.Chain(historyEntry(res))
		if err != nil {
			return err
		}
		res.Hash = entry.Hash
		raw, err := res.JSON()
		if err != nil {
			return err
		}
		if err := in.Record.SetGateSections(raw, append(in.Record.History(), entry), now); err != nil {
			return fmt.Errorf("record the gate result: %w", err)
		}
		if err := in.Record.Write(in.Geas, in.TaskDir+"/record.json"); err != nil {
			return fmt.Errorf("write record.json: %w", err)
		}
		// The task's first recorded run pins what it read (SPEC §4.4); the history entry just
		// written is the pin, the copy names the fields a later change touches.
		if !pinned && res.RulesSHA256 != "" {
			if err := WritePinned(in, "gate run "+res.RunID, now); err != nil {
				return fmt.Errorf("write %s: %w", PinnedFile, err)
			}
		}
	} else {
		res.Notes = append(res.Notes, "record.json is invalid, so this run could not be recorded in it")
	}

	if t := res.Transition; t != nil && in.Contract != nil {
		updated, err := record.SetContractStatus(in.Contract.Raw, record.State(t.To), now)
		if err != nil {
			return err
		}
		if err := record.WriteFileAtomic(in.Geas, in.TaskDir+"/contract.json", updated, 0o644); err != nil {
			return fmt.Errorf("write contract.json: %w", err)
		}
	}

	if escalate {
		if err := writeEscalation(in, res, decisionID, now); err != nil {
			return err
		}
	}
	return logEvents(in, res)
}

func writeEscalation(in *Input, res *Result, id string, now time.Time) error {
	type budgetStep struct {
		RunID   string `json:"run_id"`
		Verdict string `json:"verdict"`
		Before  *int   `json:"retry_budget_before,omitempty"`
		After   *int   `json:"retry_budget_after,omitempty"`
	}
	var steps []budgetStep
	if in.Record != nil {
		for _, e := range in.Record.History() {
			if e.Kind == record.KindApproval {
				continue // pins the rules; the budget is not its business
			}
			v := e.Verdict
			if v == "" {
				v = e.Kind
			}
			steps = append(steps, budgetStep{RunID: e.RunID, Verdict: v, Before: e.RetryBudgetBefore, After: e.RetryBudgetAfter})
		}
	}
	policy := in.Contract.EffectiveEscalationPolicy()
	dec := map[string]any{
		"version":           "1.0",
		"artifact_type":     "decision_record",
		"artifact_id":       id,
		"producer_type":     "geas-gate",
		"title":             fmt.Sprintf("Task %s spent its retry budget: %s", in.Task, policy),
		"decision_type":     "escalation",
		"status":            "pending",
		"created_at":        record.Timestamp(now),
		"task_id":           in.Task,
		"mission_id":        in.Mission,
		"escalation_policy": policy,
		"context":           fmt.Sprintf("gate run %s failed with no retries left (budget %s -> %s)", res.RunID, BudgetText(res.RetryBudgetBefore), BudgetText(res.RetryBudgetAfter)),
		"failures":          res.Causes,
		"budget_history":    steps,
	}
	b, err := json.MarshalIndent(dec, "", "  ")
	if err != nil {
		return err
	}
	if _, err := record.WriteDecision(in.Geas, in.Mission, append(b, '\n')); err != nil {
		return fmt.Errorf("write escalation decision: %w", err)
	}
	return nil
}

func logEvents(in *Input, res *Result) error {
	data, err := json.Marshal(struct {
		RunID              string                `json:"run_id"`
		Verdict            Verdict               `json:"verdict"`
		GateProfile        Profile               `json:"gate_profile"`
		TierResults        map[string]TierResult `json:"tier_results"`
		BlockingDimensions []string              `json:"blocking_dimensions"`
		RetryBudgetBefore  *int                  `json:"retry_budget_before"`
		RetryBudgetAfter   *int                  `json:"retry_budget_after"`
		// Hash is the run's history entry: every gate_result event must name an entry the
		// history holds (SPEC §7.4), so a dropped entry is seen. Absent when nothing was recorded.
		Hash string `json:"hash,omitempty"`
	}{res.RunID, res.Verdict, res.GateProfile, res.TierResults, res.BlockingDimensions, res.RetryBudgetBefore, res.RetryBudgetAfter, res.Hash})
	if err != nil {
		return err
	}
	events := []record.Event{{EventType: "gate_result", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: data}}
	if t := res.Transition; t != nil {
		d, _ := json.Marshal(map[string]string{"from": t.From, "to": t.To, "by": "geas-gate", "run_id": res.RunID})
		events = append(events, record.Event{EventType: "task_transition", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	if res.Escalation != "" {
		d, _ := json.Marshal(map[string]any{"run_id": res.RunID, "decision": res.Escalation, "escalation_policy": in.Contract.EffectiveEscalationPolicy(), "causes": res.Causes})
		events = append(events, record.Event{EventType: "escalation", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	for _, ev := range events {
		if err := record.AppendEvent(in.Geas, ev); err != nil {
			return fmt.Errorf("log %s event: %w", ev.EventType, err)
		}
	}
	return nil
}
