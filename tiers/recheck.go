package tiers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/geas-dev/geas/project"
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
func Recheck(ctx context.Context, p *project.Project, mission, task, taskDir string) (*Result, error) {
	rep, err := VerifyTask(ctx, p, mission, task, taskDir)
	if err != nil {
		return nil, err
	}
	res := rep.Result
	res.Recheck = true
	state := rep.State
	text := fmt.Sprintf("the task's state %s rests on the gate's own pass (gate_history chain and signatures, gate_result, a passing latest gate run)", state)
	var c Check
	if len(rep.Problems) > 0 {
		c = failCheck(0, "recorded_pass", text, strings.Join(rep.Problems, "; "), StatusError, vocab.CauseStateUnverified)
	} else {
		c = passCheck(0, "recorded_pass", text, "the gate_history chain verifies, its latest gate run is a pass and gate_result matches it")
	}
	// After the last tier-0 check, so the report reads in tier order.
	at := 0
	for i, ch := range res.Checks {
		if ch.Tier == 0 {
			at = i + 1
		}
	}
	res.Checks = slices.Insert(res.Checks, at, c)
	res.Verdict, res.Causes = decide(res.Checks)
	if res.Causes == nil {
		res.Causes = []Cause{}
	}
	res.TierResults["tier_0"] = tierResult(res.Checks, 0, "")
	res.Summary = Summary{}
	for _, ch := range res.Checks {
		if !ch.Blocking || ch.Status == StatusSkipped || ch.Status == StatusWarn {
			continue
		}
		res.Summary.Total++
		if ch.Status == StatusPass {
			res.Summary.Passed++
		} else {
			res.Summary.Failed++
		}
	}
	if res.Summary.Total > 0 {
		res.Summary.PassRate = float64(res.Summary.Passed) / float64(res.Summary.Total)
	}
	res.Transition = nil

	back := GateState(res.GateProfile)
	switch {
	case res.Verdict.IsPass():
		res.NextAction = NextProceed
		res.Notes = append(res.Notes, fmt.Sprintf("recheck of a %s task: the pass still holds; nothing was written and no error was counted", state))
	case len(rep.Problems) > 0:
		res.NextAction = NextInvestigateErr
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
func ExitCode(res *Result) int {
	if res.Recheck {
		if res.Verdict.IsPass() {
			return 0
		}
		return 1
	}
	return res.Verdict.ExitCode()
}
