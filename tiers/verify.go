package tiers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// VerifyStatus is what geas gate verify finds for a task that the gate passed.
type VerifyStatus string

// The verify statuses (SPEC §2.5, §7.4).
const (
	// VerifyIntact: the history chain and gate_result verify, and a fresh evaluation still passes.
	VerifyIntact VerifyStatus = "intact"
	// VerifyRevoked: the records verify, but the fresh evaluation no longer passes.
	VerifyRevoked VerifyStatus = "revoked"
	// VerifyTampered: the history chain, its signatures or gate_result do not verify. A tampered
	// task is reported as such whatever the fresh evaluation says: its recorded pass is not the
	// gate's.
	VerifyTampered VerifyStatus = "tampered"
)

// VerifyReport is the outcome of VerifyTask for one task.
type VerifyReport struct {
	MissionID string       `json:"mission_id"`
	TaskID    string       `json:"task_id"`
	State     string       `json:"state"`
	Status    VerifyStatus `json:"status"`
	Causes    []Cause      `json:"causes,omitempty"`   // revoked: the fresh evaluation's causes
	Problems  []string     `json:"problems,omitempty"` // tampered: what does not verify, with values
	Result    *Result      `json:"result,omitempty"`   // the fresh dry-run evaluation
}

// ErrNotPassed is wrapped by the error VerifyTask returns for a task that the gate has not passed
// (its state is neither verified nor passed): there is nothing to verify, and geas gate verify
// --all lists the task as skipped.
var ErrNotPassed = errors.New("not verified or passed: nothing to verify")

// NotPassedError names the task VerifyTask does not apply to and its state.
type NotPassedError struct {
	Task  string
	State string // "" when contract.json cannot be read
	// History is what was found of the task's gate history, which is checked whatever the state
	// (it verified, or there is none); empty when record.json cannot be read.
	History string
}

func (e *NotPassedError) Error() string {
	state := e.State
	if state == "" {
		state = "of unknown state (contract.json cannot be read) with no pass in its history"
	}
	return fmt.Sprintf("task %s is %s, %v", e.Task, state, ErrNotPassed)
}

func (e *NotPassedError) Unwrap() error { return ErrNotPassed }

// VerifyTask re-checks a task that the gate passed (state verified or passed), without writing
// anything: its gate_history chain (record.VerifyChain) and, when record.SigningKey is set, every
// entry's HMAC; that gate_result is the latest gate run of the chain (same hash, run_id, verdict,
// inputs and head); that this run is a pass; and a fresh dry-run evaluation of the task against the
// evidence of the moment (SPEC §2.5). The report is tampered when any record check fails, else
// revoked when the fresh evaluation is not a pass, else intact.
//
// A task in any other state gives an error wrapping ErrNotPassed. A task whose contract.json cannot
// be read is verified when its history's latest gate run is a pass (its fresh evaluation then
// errors, so it is revoked). The only other error is ErrInterrupted.
//
// Gate runs that came after the pass and were refused with state_ineligible (someone ran geas
// gate on the verified task) are not counted against it: they are the gate's own runs, and they
// did not re-judge the work.
func VerifyTask(ctx context.Context, p *project.Project, mission, task, taskDir string) (*VerifyReport, error) {
	in := Gather(p, mission, task, taskDir)
	state := ""
	if in.Contract != nil {
		state = string(in.Contract.Status)
	}
	claimed := vocab.State(state).IsFinished()
	if in.Contract == nil {
		if e, _, ok := backingRun(in.Record); ok && recordsPass(e) {
			claimed = true
		}
	}
	key := record.SigningKey()
	if !claimed {
		// The history and gate_result of every task are checked, whatever its state (SPEC §9): a
		// hand-written gate_result with verdict pass on an integrated task is tampered, and so is
		// a history with a dropped entry that the next run would build on.
		problems, summary := historyProblems(in, key)
		if len(problems) == 0 || in.Record == nil {
			return nil, &NotPassedError{Task: task, State: state, History: summary}
		}
		return &VerifyReport{MissionID: mission, TaskID: task, State: state, Status: VerifyTampered, Problems: problems}, nil
	}

	rep := &VerifyReport{MissionID: mission, TaskID: task, State: state}
	rep.Problems = recordProblems(in, state, key)

	opts := Options{RunID: VerifyRunID(in.Record), DryRun: true, Verify: true, Now: time.Now()}
	if e, _, ok := backingRun(in.Record); ok {
		opts.Head = e.Head
	}
	res, err := Evaluate(ctx, in, opts)
	if err != nil {
		return nil, err
	}
	// A verify run spends nothing and moves nothing: the budget is shown as it stands.
	budget := 0
	if in.Contract != nil {
		budget = in.Contract.RetryBudget
	}
	// The budget is shown unless the history itself does not verify (a state set by hand over a
	// sound history still has a budget to show).
	if in.Record != nil && !historyTampered(res.Checks) {
		left := record.BudgetLeft(budget, in.Record)
		res.RetryBudgetBefore, res.RetryBudgetAfter = &left, copyInt(&left)
	} else {
		res.RetryBudgetBefore, res.RetryBudgetAfter = nil, nil // not computed over a tampered history
	}
	rep.Result = res

	switch {
	case len(rep.Problems) > 0:
		rep.Status = VerifyTampered
	case !res.Verdict.IsPass():
		rep.Status = VerifyRevoked
		rep.Causes = res.Causes
	default:
		rep.Status = VerifyIntact
	}
	return rep, nil
}

// VerifyRunID is the run id of a verify evaluation: verify-N, N one more than the revocations
// recorded so far. It never takes a gate-N id, which belongs to the next gate run.
func VerifyRunID(rec *record.Record) string {
	n := 0
	if rec != nil {
		for _, e := range rec.History() {
			if e.Kind == record.KindRevocation {
				n++
			}
		}
	}
	return fmt.Sprintf("verify-%d", n+1)
}

// recordProblems lists what does not verify in the task's record, with the values found.
func recordProblems(in *Input, state string, key []byte) []string {
	if in.Record == nil {
		return []string{fmt.Sprintf("record.json cannot be read, so the pass cannot be verified: %v", in.RecordErr)}
	}
	problems := HistoryProblems(in, key)
	if state == "" {
		state = "claimed done"
	}
	_, _, haveRun := latestRun(in.Record.History())
	if !haveRun {
		problems = append(problems, fmt.Sprintf("task is %s but gate_history records no gate run", state))
	}
	if haveRun {
		if e, at, ok := backingRun(in.Record); ok && !recordsPass(e) {
			problems = append(problems, fmt.Sprintf("task is %s but its latest gate run, gate_history entry %d %s, has verdict %s, not pass", state, at+1, e.RunID, e.Verdict))
		}
	}
	return problems
}

// gateResultProblems compares gate_result with the latest gate run of the chain. Keys are read
// exactly (not with encoding/json's case-insensitive struct matching), so a second "Verdict" key
// cannot stand in for the real one.
func gateResultProblems(raw json.RawMessage, last record.HistoryEntry, lastAt int) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return []string{fmt.Sprintf("gate_result is not a JSON object: %v", err)}
	}
	str := func(key string) string {
		var s string
		if v, ok := fields[key]; ok {
			if json.Unmarshal(v, &s) != nil {
				return "(" + string(v) + ")"
			}
		}
		return s
	}
	entry := fmt.Sprintf("the latest gate run, gate_history entry %d %s", lastAt+1, last.RunID)
	var problems []string
	if got := str("hash"); got != last.Hash {
		problems = append(problems, fmt.Sprintf("gate_result.hash %q does not match %s (hash %.12s)", short(got), entry, last.Hash))
	}
	if got := str("run_id"); got != last.RunID {
		problems = append(problems, fmt.Sprintf("gate_result.run_id %q does not match %s", got, entry))
	}
	if got := str("verdict"); got != last.Verdict {
		problems = append(problems, fmt.Sprintf("gate_result.verdict %q does not match %s (verdict %q)", got, entry, last.Verdict))
	}
	if got := str("inputs_sha256"); got != last.InputsSHA256 {
		problems = append(problems, fmt.Sprintf("gate_result.inputs_sha256 %q does not match %s (%.12s)", short(got), entry, last.InputsSHA256))
	}
	if got := str("head"); got != last.Head {
		problems = append(problems, fmt.Sprintf("gate_result.head %q does not match %s (%q)", short(got), entry, last.Head))
	}
	return problems
}

// latestRun is the latest gate-run entry of hist and its index.
func latestRun(hist []record.HistoryEntry) (record.HistoryEntry, int, bool) {
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].IsGateRun() {
			return hist[i], i, true
		}
	}
	return record.HistoryEntry{}, -1, false
}

// backingRun is the gate run a verified task's state rests on: the latest gate run, passing over
// later runs that the gate refused with state_ineligible (they did not judge the work).
func backingRun(rec *record.Record) (record.HistoryEntry, int, bool) {
	if rec == nil {
		return record.HistoryEntry{}, -1, false
	}
	hist := rec.History()
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if !e.IsGateRun() {
			continue
		}
		if e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		return e, i, true
	}
	return record.HistoryEntry{}, -1, false
}

// recordsPass reports whether a history entry records a passing verdict. It reads a stored string
// and builds no verdict: only decide does that (SPEC §2.2).
func recordsPass(e record.HistoryEntry) bool { return e.Verdict == string(StatusPass) }

// onlyIneligible reports whether every cause of an entry is state_ineligible.
func onlyIneligible(raw json.RawMessage) bool {
	var causes []Cause
	if json.Unmarshal(raw, &causes) != nil || len(causes) == 0 {
		return false
	}
	for _, c := range causes {
		if c.Code != vocab.CauseStateIneligible {
			return false
		}
	}
	return true
}

// PassProblems says why a task may not move verified -> passed (SPEC §8): the history must verify
// (HistoryProblems) and its latest entry must be a gate run with verdict pass, which gate_result
// matches. Only gate runs that the gate refused with state_ineligible (someone ran geas gate on
// the verified task) may follow the pass; a revocation, a grant or any other run may not. Nil
// when the move is allowed.
func PassProblems(in *Input, key []byte) []string {
	if in.Record == nil {
		return []string{fmt.Sprintf("record.json cannot be read: %v", in.RecordErr)}
	}
	problems := HistoryProblems(in, key)
	hist := in.Record.History()
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.IsGateRun() && e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		if !e.IsGateRun() || !recordsPass(e) {
			what := e.Kind
			if e.IsGateRun() {
				what = "gate run with verdict " + e.Verdict
			}
			problems = append(problems, fmt.Sprintf("the latest gate_history entry, %d %s, is a %s, not a gate pass", i+1, e.RunID, what))
		}
		return problems
	}
	return append(problems, "gate_history records no gate pass: the state verified was not set by the gate")
}
