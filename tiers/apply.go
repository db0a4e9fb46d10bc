package tiers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// Apply writes what a run decided (SPEC §7): the run's history entry, appended and fsynced to
// gate-history.jsonl, is the commit point (§7.3). Before it, the full result is written to
// gate-logs/{run_id}/result.json, so that everything after it can be derived from the entry: the
// run's plan (record.PlanRun: gate_result in record.json, the pin, the transition in
// contract.json, the pending decision of an escalation and the events), which the ledger applies
// here and, after a crash, in the next command that takes the task's lock (gate.Complete). The
// caller holds the task lock for the whole run. An error before the commit point is returned
// (nothing was recorded); a write after it that fails is a note of the result, whose verdict
// stands, and the next command that takes the task's lock completes it. logRoot is the run's log
// directory as the caller opened it before the run (Options.LogRoot), where result.json is
// written even if a command moved the directory meanwhile; nil writes it by its path.
func Apply(in *Snapshot, res *Result, escalate bool, logRoot *os.Root, now time.Time) error {
	// What the evaluation decided of its checks (result): fitForRecord changes no check that says
	// either.
	tampered := res.tampered
	if res.refused || res.RepeatOf != "" {
		// Refused before anything ran (the signing key would be exposed), or the same attempt as
		// the latest recorded run (SPEC §7.1): nothing is written, not even an event, so nothing
		// signed comes of a run that judged nothing.
		return nil
	}
	escalate, write, entry, err := fitForRecord(in, res, escalate, tampered) // SPEC §7.3, §10: nothing the readers refuse
	if err != nil || !write {
		return err
	}
	if escalate {
		res.Escalation = ".geas/" + record.PendingDecisionFile(in.Mission, record.EscalationID(in.Task, res.RunID))
	}
	if tampered {
		// SPEC §5.1: nothing is appended to a history that does not verify, and nothing derived
		// from it (the budget, a transition, an escalation) is written. The event still tells
		// the log that the gate ran and refused.
		plan, err := planOf(in, res, nil, nil, false, now)
		if err != nil {
			return err
		}
		plan.Move, plan.Decision = nil, nil
		return afterCommit(in, res, plan, record.Found{}, now)
	}
	if in.Record == nil {
		res.Notes = append(res.Notes, "record.json is invalid, so this run could not be recorded in it")
		plan, err := planOf(in, res, nil, nil, false, now)
		if err != nil {
			return err
		}
		return afterCommit(in, res, plan, in.found(), now)
	}
	pinned := in.Facts.Pinned
	prev := "" // the chain's head, as the lock verified it
	if h := in.Facts.History; len(h) > 0 {
		prev = h[len(h)-1].Hash
	}
	entry, err = record.ChainAfter(prev, entry)
	if err != nil {
		return err
	}
	res.Hash = entry.Hash
	raw, err := res.JSON()
	if err != nil {
		return err
	}
	plan, err := planOf(in, res, raw, append(in.Record.History(), entry), !pinned, now)
	if err != nil {
		return err
	}
	applied, err := in.ledger(now).Commit(plan, logRoot, in.found())
	if err != nil {
		return err
	}
	return noteFailures(res, applied)
}

// planOf is the plan of the writes that follow from res, the result of a run of in's task, as
// raw (nil: encoded here): history is the task's history up to and including the run's entry
// (nil when nothing is recorded), and pins says that the entry pins the task's rules.
func planOf(in *Snapshot, res *Result, raw []byte, history []record.HistoryEntry, pins bool, now time.Time) (*record.Plan, error) {
	policy := ""
	if in.Contract != nil {
		policy = in.Contract.EscalationPolicy
	}
	return PlanResult(in.Mission, in.Task, in.TaskDir, res, raw, history, pins, policy, now)
}

// PlanResult is the plan of the writes that follow from res, the result of a recorded run, as
// raw (record.PlanRun): what a completion knows of the run. history is the task's history up to
// and including the run's entry, pins says that the entry pins the task's rules, and policy is
// the contract's effective escalation policy.
func PlanResult(mission, task, taskDir string, res *Result, raw []byte, history []record.HistoryEntry, pins bool, policy string, now time.Time) (*record.Plan, error) {
	out, err := res.outcome(raw)
	if err != nil {
		return nil, err
	}
	return record.PlanRun(record.PlanInput{Mission: mission, Task: task, TaskDir: taskDir, History: history,
		Pins: pins, RulesSHA256: res.RulesSHA256, Outcome: out, EscalationPolicy: policy}, now)
}

// JSON encodes the result as the ledger records it (gate_result, result.json) and as geas prints
// it: compactly, without HTML escaping, so evidence such as "score 3 < 4" reads the same in
// record.json as on the terminal.
func (res *Result) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// outcome is what the ledger needs of res, whose JSON is raw (nil: encoded here).
func (res *Result) outcome(raw []byte) (record.RunOutcome, error) {
	if raw == nil {
		var err error
		if raw, err = res.JSON(); err != nil {
			return record.RunOutcome{}, err
		}
	}
	tiers, err := json.Marshal(res.TierResults)
	if err != nil {
		return record.RunOutcome{}, err
	}
	causes, err := json.Marshal(res.Causes)
	if err != nil {
		return record.RunOutcome{}, err
	}
	out := record.RunOutcome{Result: bytes.TrimSpace(raw), RunID: res.RunID, Verdict: string(res.Verdict), GateProfile: string(res.GateProfile),
		TierResults: tiers, BlockingDimensions: res.BlockingDimensions, RetryBudgetBefore: res.RetryBudgetBefore,
		RetryBudgetAfter: res.RetryBudgetAfter, Causes: causes, Escalation: res.Escalation, Hash: res.Hash}
	if t := res.Transition; t != nil {
		out.Transition = &record.Move{From: t.From, To: t.To}
	}
	return out, nil
}

// found is what the task's files hold right after the commit point: what the run read of them.
func (in *Snapshot) found() record.Found {
	f := record.Found{}
	if in.Contract != nil {
		f.Contract, f.Status = in.Contract.Raw, in.Contract.Status
	}
	return f
}

// ledger is the writer of in's task for a run at now; the pinned copy it writes holds the rules
// the run read.
func (in *Snapshot) ledger(now time.Time) *record.Ledger {
	l := &record.Ledger{Geas: in.Geas, Record: in.Record, Held: in.Held, Now: now}
	l.Rules = func(want string) (map[string]any, bool) {
		return in.Rules, in.Rules != nil && want == in.RulesSHA256
	}
	return l
}

// afterCommit applies plan, what follows from a run that records no history entry (a history
// that does not verify, a record.json that is invalid): its events, and what else plan holds.
func afterCommit(in *Snapshot, res *Result, plan *record.Plan, found record.Found, now time.Time) error {
	return noteFailures(res, in.ledger(now).Apply(plan, found))
}

// noteFailures turns what the ledger could not write after the commit point into notes of res:
// the verdict was recorded and stands, and the next command on the task completes the rest. A
// run that recorded nothing (res.Hash empty) whose events cannot be logged is an error.
func noteFailures(res *Result, applied *record.Applied) error {
	for _, f := range applied.Failed {
		switch f.Step {
		case record.StepRecord:
			res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded in %s, but record.json was not written (%v): the next command on the task completes it", record.HistoryFile, f.Err))
		case record.StepLock:
			if res.Hash == "" {
				return fmt.Errorf("log the run's events: nothing written: %w", f.Err)
			}
			// Recorded, but the lock is gone: another run may hold the task now, and what
			// follows from the entry is left to the next command that takes the lock.
			res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded, but the rest of its writes were not made (%v): the next command on the task completes them", f.Err))
		case record.StepPin:
			res.Notes = append(res.Notes, fmt.Sprintf("write %s: %v", record.PinnedFile, f.Err))
		case record.StepMove:
			res.Notes = append(res.Notes, fmt.Sprintf("%v: the next command on the task completes it", f.Err))
		case record.StepDecision:
			res.Notes = append(res.Notes, fmt.Sprintf("the escalation decision was not written (%v): the next command on the task completes it", f.Err))
		case record.StepEvent:
			if res.Hash == "" {
				return f.Err
			}
			res.Notes = append(res.Notes, fmt.Sprintf("the run is recorded, but an event was not logged (%v): the next command on the task logs it", f.Err))
		}
	}
	return nil
}

// GateState is the state a profile is gated from, to which a revoked task returns.
func GateState(profile vocab.Profile) vocab.State {
	if profile == vocab.ImplementationChange {
		return vocab.Integrated
	}
	return vocab.Reviewed
}

// historyEntry is the compact gate_history entry of a run.
func historyEntry(res *Result) record.HistoryEntry {
	causes, _ := json.Marshal(res.Causes)
	e := record.HistoryEntry{
		Kind: record.KindGateRun, RunID: res.RunID, Verdict: string(res.Verdict), Causes: causes,
		RetryBudgetBefore: copyInt(res.RetryBudgetBefore), RetryBudgetAfter: copyInt(res.RetryBudgetAfter), Head: res.Head,
		InputsSHA256: res.InputsSHA256, RulesSHA256: res.RulesSHA256, StartedAt: res.StartedAt,
	}
	if len(res.claimTally) > 0 {
		tally, _ := json.Marshal(res.claimTally)
		e.Extra = map[string]json.RawMessage{record.ClaimsContradictedKey: tally}
	}
	if res.attributed != "" { // SPEC §5.3 B: the passes it attributed files to, which attemptOf compares
		if e.Extra == nil {
			e.Extra = map[string]json.RawMessage{}
		}
		e.Extra[attributedPassesKey], _ = json.Marshal(res.attributed)
	}
	return e
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
