package tiers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// Apply writes what a run decided (SPEC §7): the run's history entry, appended and fsynced to
// gate-history.jsonl, is the commit point (§7.3). Before it, the full result is written to
// gate-logs/{run_id}/result.json, so that everything after it can be derived from the entry:
// gate_result in record.json, the pin, the transition in contract.json, the pending decision of
// an escalation and the events. The caller holds the task lock for the whole run. An error
// before the commit point is returned (nothing was recorded); a write after it that fails is a
// note of the result, whose verdict stands, and the next command that takes the task's lock
// completes it (Complete).
func Apply(in *Input, res *Result, escalate bool, now time.Time) error {
	if res.Refused() {
		// Refused before anything ran (the signing key would be exposed): nothing is written,
		// not even an event, so nothing signed comes of a run that judged nothing.
		return nil
	}
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
		return LogEvents(in, res, nil, nil)
	}
	if in.Record == nil {
		res.Notes = append(res.Notes, "record.json is invalid, so this run could not be recorded in it")
		return afterCommit(in, res, escalate, decisionID, now, nil)
	}
	_, pinned := record.PinnedRules(in.Record)
	recordMissing := false
	entry, err := in.Record.Chain(historyEntry(res))
	if err != nil {
		return err
	}
	res.Hash = entry.Hash
	raw, err := res.JSON()
	if err != nil {
		return err
	}
	// Validated in memory first: a result the record cannot hold writes nothing at all.
	if err := in.Record.SetGateSections(raw, append(in.Record.History(), entry), now); err != nil {
		return fmt.Errorf("record the gate result: %w", err)
	}
	// SPEC §7.3: a run whose task lock was removed or replaced may share the task with another
	// run that locked the new file; it records nothing (the history append checks again, under
	// the history file's lock, right before the commit point).
	if err := in.stillHeld(); err != nil {
		return fmt.Errorf("record the run: nothing written: %w", err)
	}
	if in.Held != nil {
		in.Record.Guard(in.Held)
	}
	resultRoot, resultName := in.Geas, ResultFile(in.TaskDir, res.RunID)
	if in.logRoot != nil {
		resultRoot, resultName = in.logRoot, "result.json"
	}
	if err := fsutil.WriteFileAtomic(resultRoot, resultName, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the run's result: %w", err)
	}
	if err := in.Record.Write(in.Geas, in.TaskDir+"/record.json"); err != nil {
		if !in.Record.Recorded(entry.Hash) {
			return fmt.Errorf("record the run in %s: %w", record.HistoryFile, err)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded in %s, but record.json was not written (%v): the next command on the task completes it", record.HistoryFile, err))
		// The run's events are logged only after record.json holds its gate_result (a logged
		// gate_result event tells a reader the record was written): Complete logs them.
		recordMissing = true
	}
	// The task's first recorded run pins what it read (SPEC §4.4); the history entry just
	// written is the pin, the copy names the fields a later change touches.
	if !pinned && res.RulesSHA256 != "" && in.stillHeld() == nil {
		if err := WritePinned(in, "gate run "+res.RunID, now); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("write %s: %v", PinnedFile, err))
		}
	}
	if recordMissing {
		return afterCommit(in, res, escalate, decisionID, now, map[string]bool{"gate_result": true, "task_transition": true, "escalation": true})
	}
	return afterCommit(in, res, escalate, decisionID, now, nil)
}

// afterCommit writes what follows from a recorded run: the transition, the pending decision and
// the events, each keyed by the run so that Complete can redo what a crash or a failed write
// left undone. A failure is a note of res: the verdict was recorded and stands.
func afterCommit(in *Input, res *Result, escalate bool, decisionID string, now time.Time, skip map[string]bool) error {
	if skip == nil {
		skip = map[string]bool{}
	}
	if err := in.stillHeld(); err != nil {
		// Recorded, but the lock is gone: another run may hold the task now, and what follows
		// from the entry is left to the next command that takes the lock (Complete).
		if res.Hash != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded, but the rest of its writes were not made (%v): the next command on the task completes them", err))
			return nil
		}
		return fmt.Errorf("log the run's events: nothing written: %w", err)
	}
	if t := res.Transition; t != nil && in.Contract != nil {
		if err := WriteTransition(in, t, now); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the task's state was not moved %s -> %s (%v): the next command on the task completes it", t.From, t.To, err))
			// The transition's event must not claim a move that did not happen: Complete writes
			// both once the contract is written.
			skip["task_transition"], skip["escalation"] = true, true
			escalate = false
		}
	}
	if escalate {
		if err := in.stillHeld(); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the escalation decision and the events were not written (%v): the next command on the task completes them", err))
			return nil
		}
		if err := WriteEscalation(in, res, decisionID, now); err != nil && !errors.Is(err, fs.ErrExist) {
			res.Notes = append(res.Notes, fmt.Sprintf("the escalation decision was not written (%v): the next command on the task completes it", err))
			skip["escalation"] = true
		}
	}
	if err := LogEvents(in, res, skip, nil); err != nil {
		if res.Hash == "" {
			return err
		}
		res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded, but an event was not logged (%v): the next command on the task logs it", err))
	}
	return nil
}

// WriteTransition moves the contract's status as t says.
func WriteTransition(in *Input, t *Transition, now time.Time) error {
	return WriteState(in.Geas, in.TaskDir, in.Contract.Raw, vocab.State(t.To), now)
}

// WriteState writes the task's contract.json (raw, as read) with its status set to "to": the one
// way a gate run, a revocation and their completion move a task. The caller holds the task lock
// and has checked the transition.
func WriteState(geas *os.Root, taskDir string, raw []byte, to vocab.State, now time.Time) error {
	updated, err := record.SetContractStatus(raw, to, now)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(geas, taskDir+"/contract.json", updated, 0o644); err != nil {
		return fmt.Errorf("write contract.json: %w", err)
	}
	return nil
}

// WriteEscalation writes the pending decision record of a run that spent the last retry (SPEC §7.2):
// decisions/pending/{id}.json naming the escalation policy, the failures and the budget history.
func WriteEscalation(in *Input, res *Result, id string, now time.Time) error {
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

// LogEvents appends the run's events (SPEC §7.2) but those whose type skip names, calling logged
// (when not nil) after each one is appended.
func LogEvents(in *Input, res *Result, skip map[string]bool, logged func(eventType string)) error {
	events, err := GateEvents(in, res)
	if err != nil {
		return err
	}
	for _, ev := range events {
		if skip[ev.EventType] {
			continue
		}
		if err := record.AppendEvent(in.Geas, ev); err != nil {
			return fmt.Errorf("log %s event: %w", ev.EventType, err)
		}
		if logged != nil {
			logged(ev.EventType)
		}
	}
	return nil
}

// GateEvents are the events of a run, in the order they are logged: gate_result, then the
// task_transition and escalation it made. Each names the run's history entry by hash.
func GateEvents(in *Input, res *Result) ([]record.Event, error) {
	data, err := json.Marshal(struct {
		RunID              string                `json:"run_id"`
		Verdict            vocab.Verdict         `json:"verdict"`
		GateProfile        vocab.Profile         `json:"gate_profile"`
		TierResults        map[string]TierResult `json:"tier_results"`
		BlockingDimensions []string              `json:"blocking_dimensions"`
		RetryBudgetBefore  *int                  `json:"retry_budget_before"`
		RetryBudgetAfter   *int                  `json:"retry_budget_after"`
		// Hash is the run's history entry: every gate_result event must name an entry the
		// history holds (SPEC §7.4), so a dropped entry is seen. Absent when nothing was recorded.
		Hash string `json:"hash,omitempty"`
	}{res.RunID, res.Verdict, res.GateProfile, res.TierResults, res.BlockingDimensions, res.RetryBudgetBefore, res.RetryBudgetAfter, res.Hash})
	if err != nil {
		return nil, err
	}
	events := []record.Event{{EventType: "gate_result", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: data}}
	if t := res.Transition; t != nil {
		d, _ := json.Marshal(map[string]string{"from": string(t.From), "to": string(t.To), "by": "geas-gate", "run_id": res.RunID, "hash": res.Hash})
		events = append(events, record.Event{EventType: "task_transition", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	if res.Escalation != "" {
		policy := ""
		if in.Contract != nil {
			policy = in.Contract.EffectiveEscalationPolicy()
		}
		d, _ := json.Marshal(map[string]any{"run_id": res.RunID, "decision": res.Escalation, "escalation_policy": policy, "causes": res.Causes, "hash": res.Hash})
		events = append(events, record.Event{EventType: "escalation", MissionID: in.Mission, TaskID: in.Task, Agent: "geas-gate", Data: d})
	}
	return events, nil
}

// ResultFile is where a run's full result is kept, written before its history entry (SPEC §7.3):
// what the derived writes need and the compact entry lacks.
func ResultFile(taskDir, runID string) string {
	return taskDir + "/gate-logs/" + runID + "/result.json"
}

// GateState is the state a profile is gated from, to which a revoked task returns.
func GateState(profile vocab.Profile) vocab.State {
	if profile == vocab.ImplementationChange {
		return vocab.Integrated
	}
	return vocab.Reviewed
}

// stillHeld is nil when the run's task lock is still held, or the run took none.
func (in *Input) stillHeld() error {
	if in.Held == nil {
		return nil
	}
	return in.Held()
}
