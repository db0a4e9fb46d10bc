package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// NextRevoke is the next action of a recheck whose pass would be revoked: geas gate verify --apply
// records the revocation and moves a verified task back to its gate state.
const NextRevoke = "revoke"

// Recheck is geas gate on a finished task (SPEC §7.2): the re-check geas gate verify does
// (VerifyTask: the history chain, gate_result, and a fresh dry-run evaluation), with no side
// effect and no error counted. The result is marked Recheck. Its verdict is the fresh evaluation's,
// except that a state the records do not back (no gate pass in the history, a chain or gate_result
// that does not verify) adds a blocking error check state_unverified, so a hand-set verified is
// never shown as a pass. ExitCode maps it to 0 while the pass holds and 1 when it does not.
//
// The caller has checked that the task's contract says verified or passed; the only errors are
// VerifyTask's (ErrInterrupted, or ErrNotPassed when the state changed in between).
func Recheck(ctx context.Context, p *project.Project, mission, task, taskDir string) (*tiers.Result, error) {
	return recheck(ctx, p, mission, task, taskDir, nil, nil)
}

// recheck is Recheck with the event log read through events (nil: through an index of its own,
// so that the record check and the evaluation's history check open the log once), judging k, what
// the caller read of the task under its lock (nil: the task's files are read here).
func recheck(ctx context.Context, p *project.Project, mission, task, taskDir string, events *record.EventIndex, k *tiers.Loaded) (*tiers.Result, error) {
	if events == nil {
		events = &record.EventIndex{Exact: true}
		defer events.Close()
	}
	rep, err := verifyTaskLoaded(ctx, p, mission, task, taskDir, events, k)
	var refused *RefusedError
	if errors.As(err, &refused) {
		res := refused.Result
		res.Recheck, res.Transition, res.NextAction = true, nil, tiers.NextInvestigateErr
		res.Notes = append(res.Notes, fmt.Sprintf("recheck of a %s task: refused before anything ran, so the pass was not re-checked; nothing was written", rep.State))
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res := rep.Result
	res.Recheck = true
	state := rep.State
	text := fmt.Sprintf("the task's state %s rests on the gate's own pass (gate_history chain and signatures, gate_result, a passing latest gate run)", state)
	c := tiers.Check{Name: "recorded_pass", Tier: 0, Text: text, Status: tiers.StatusPass, Passed: true, Blocking: true,
		Evidence: "the gate_history chain verifies, its latest gate run is a pass and gate_result matches it"}
	if len(rep.Problems) > 0 {
		c = tiers.Check{Name: "recorded_pass", Tier: 0, Text: text, Status: tiers.StatusError, Blocking: true,
			Evidence: strings.Join(rep.Problems, "; "), Code: vocab.CauseStateUnverified}
	}
	tiers.Redecide(res, c)
	res.Transition = nil

	back := tiers.GateState(res.GateProfile)
	switch {
	case res.Verdict.IsPass():
		res.NextAction = tiers.NextProceed
		res.Notes = append(res.Notes, fmt.Sprintf("recheck of a %s task: the pass still holds; nothing was written and no error was counted", state))
	case len(rep.Problems) > 0:
		res.NextAction = tiers.NextInvestigateErr
		res.Notes = append(res.Notes, fmt.Sprintf("recheck of a %s task: the records do not back the state, so the task is not done; nothing was written. "+
			"geas gate verify reports it as tampered (--apply never changes tampered records): investigate, then move the task back "+
			"(geas task transition --id %s --to %s) and let the gate judge it", state, task, back))
	default:
		res.NextAction = NextRevoke
		how := fmt.Sprintf("run geas gate verify --apply --task %s to record the revocation and move the task back to %s, then fix the causes and gate it again", task, back)
		if state == string(vocab.Passed) {
			how = fmt.Sprintf("run geas gate verify --apply --task %s to record the revocation (passed is terminal: an authority decides what follows)", task)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("recheck of a %s task: the pass would be revoked; nothing was written and no error was counted: %s", state, how))
	}
	return res, nil
}

// ExitCode is geas gate's exit code for a result: a recheck exits 0 while the pass holds and 1 when
// it does not (as geas gate verify does); any other run exits with its verdict's code.
func ExitCode(res *tiers.Result) int {
	if res.Recheck && !res.Refused() {
		if res.Verdict.IsPass() {
			return 0
		}
		return 1
	}
	return res.Verdict.ExitCode()
}
