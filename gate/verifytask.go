package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
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
	MissionID string        `json:"mission_id"`
	TaskID    string        `json:"task_id"`
	State     string        `json:"state"`
	Status    VerifyStatus  `json:"status"`
	Causes    []tiers.Cause `json:"causes,omitempty"`   // revoked: the fresh evaluation's causes
	Problems  []string      `json:"problems,omitempty"` // tampered: what does not verify, with values
	Result    *tiers.Result `json:"result,omitempty"`   // the fresh dry-run evaluation
	// ClaimsContradicted counts, per agent, the claims the gate's measurements contradicted over
	// the task's history (SPEC §5.2a.7).
	ClaimsContradicted record.ClaimTally `json:"claims_contradicted,omitempty"`
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
	return verifyTask(ctx, p, mission, task, taskDir, nil)
}

// verifyTask is VerifyTask with the event log read through events (nil: read by each check).
func verifyTask(ctx context.Context, p *project.Project, mission, task, taskDir string, events *record.EventIndex) (*VerifyReport, error) {
	return verifyTaskLoaded(ctx, p, mission, task, taskDir, events, nil)
}

// verifyTaskLoaded is verifyTask judging k, the contract (and record) a caller read of the task
// under its lock, rather than reading them again; nil k: everything is read here.
func verifyTaskLoaded(ctx context.Context, p *project.Project, mission, task, taskDir string, events *record.EventIndex, k *tiers.Loaded) (*VerifyReport, error) {
	var in *tiers.Snapshot
	if k != nil {
		in = tiers.GatherLoaded(p, mission, task, taskDir, *k)
		defer in.Release() // the repository GatherLoaded keeps, unless Evaluate took it
	} else {
		in = tiers.GatherEvents(p, mission, task, taskDir, events)
	}
	in.Events = events
	state := ""
	if in.Contract != nil {
		state = string(in.Contract.Status)
	}
	claimed := vocab.State(state).IsFinished()
	if in.Contract == nil {
		if e, _, ok := tiers.BackingRun(in.Record); ok && tiers.RecordsPass(e) {
			claimed = true
		}
	}
	key := record.SigningKey()
	if !claimed {
		// The history and gate_result of every task are checked, whatever its state (SPEC §9): a
		// hand-written gate_result with verdict pass on an integrated task is tampered, and so is
		// a history with a dropped entry that the next run would build on.
		problems, summary := tiers.VerifyHistory(in, key)
		if len(problems) == 0 || in.Record == nil {
			return nil, &NotPassedError{Task: task, State: state, History: summary}
		}
		return &VerifyReport{MissionID: mission, TaskID: task, State: state, Status: VerifyTampered, Problems: problems}, nil
	}

	rep := &VerifyReport{MissionID: mission, TaskID: task, State: state}
	rep.Problems = recordProblems(in, state, key)
	if in.Record != nil {
		rep.ClaimsContradicted = record.ContradictedClaims(in.Record.History())
	}

	opts := tiers.Options{RunID: VerifyRunID(in.Record), DryRun: true, Verify: true, Now: time.Now()}
	if e, _, ok := tiers.BackingRun(in.Record); ok {
		opts.Head = e.Head
	}
	res, err := tiers.Evaluate(ctx, in, tiers.DefaultEnv(), opts)
	if err != nil {
		return nil, err
	}
	if res.Refused() {
		// The fresh evaluation did not run (the signing key would be exposed): it says nothing
		// about the pass, so nothing is revoked.
		rep.Result = res
		return rep, &RefusedError{Task: task, Result: res}
	}
	// A verify run spends nothing and moves nothing: the budget is shown as it stands.
	budget := 0
	if in.Contract != nil {
		budget = in.Contract.RetryBudget
	}
	// The budget is shown unless the history itself does not verify (a state set by hand over a
	// sound history still has a budget to show).
	if in.Record != nil && !res.HistoryTampered() {
		left := record.BudgetLeft(budget, in.Record)
		after := left
		res.RetryBudgetBefore, res.RetryBudgetAfter = &left, &after
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

// RefusedError is a verification whose fresh evaluation was refused before anything ran
// (tiers.Result.Refused): the task cannot be verified in this setup, and nothing is revoked.
type RefusedError struct {
	Task   string
	Result *tiers.Result
}

func (e *RefusedError) Error() string {
	why := "refused before anything ran"
	if len(e.Result.Causes) > 0 {
		why = fmt.Sprintf("%s: %s", e.Result.Causes[0].Code, e.Result.Causes[0].Detail)
	}
	return fmt.Sprintf("task %s: the fresh evaluation was refused (%s)", e.Task, why)
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
func recordProblems(in *tiers.Snapshot, state string, key []byte) []string {
	if in.Record == nil {
		return []string{fmt.Sprintf("record.json cannot be read, so the pass cannot be verified: %v", in.RecordErr)}
	}
	problems := tiers.HistoryProblems(in, key)
	if state == "" {
		state = "claimed done"
	}
	_, _, haveRun := record.LastRun(in.Record)
	if !haveRun {
		problems = append(problems, fmt.Sprintf("task is %s but gate_history records no gate run", state))
	}
	if haveRun {
		if e, at, ok := tiers.BackingRun(in.Record); ok && !tiers.RecordsPass(e) {
			problems = append(problems, fmt.Sprintf("task is %s but its latest gate run, gate_history entry %d %s, has verdict %s, not pass", state, at+1, e.RunID, e.Verdict))
		}
	}
	return problems
}
