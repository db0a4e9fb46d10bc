package gate

import (
	"fmt"
	"strings"

	"github.com/geas-dev/geas/vocab"
)

// StopDecision is a stop hook's answer, in no harness's shape (SPEC §9): the agent may stop
// silently (Block false, Message ""), it may stop and Message says why to the user (an allowed
// stop explains itself), or the stop is held and Message is the agent's next instruction. Each
// harness's adapter writes it in that harness's output shape.
type StopDecision struct {
	Block   bool
	Message string
}

// StopSignal is the harness's "already continuing" signal: Active says this stop follows a stop
// the hook held (Claude Code's and Codex's stop_hook_active, Cursor's loop_count above 0), Name is
// how the messages name it. It only ever relaxes the hook: a block, a state set by hand and a gate
// that cannot run hold the first stop only; a fail of a new attempt holds every stop.
type StopSignal struct {
	Active bool
	Name   string
}

// stopAllow lets the agent stop with msg for the user.
func stopAllow(msg string) StopDecision { return StopDecision{Message: msg} }

// stopBlock holds the stop with msg as the agent's next instruction.
func stopBlock(msg string) StopDecision { return StopDecision{Block: true, Message: msg} }

// DecideStop is the stop hook's answer from a HookCheck of task t (SPEC §9). It trusts no state it
// did not verify: a verified or passed task was re-checked, an escalated, blocked or cancelled task
// lets the agent stop only when that state is backed (StateBacking), and every other task was
// gated.
func DecideStop(t Task, h *HookCheck, s StopSignal) StopDecision {
	switch {
	case h.NotGated && !h.Backed:
		return stopUnbacked(t.ID, h.State, h.Why, s)
	case h.NotGated:
		return stopAllow(notGatedMessage(t, h.State) + " Backed: " + h.Why + ".")
	case h.Result.Recheck:
		return stopRecheck(h.Result, h.RecheckState(), s)
	}
	return stopVerdict(h.Result, s, h.ContractErr != nil)
}

// StopCannotRun answers when the gate cannot run at all (a task that cannot be opened, a lock or
// log directory that cannot be created): fail closed, but never a loop. The first stop is held
// with the error as the reason; the next one, which the harness marks as already continuing, is
// allowed with a message saying the task was not gated.
func StopCannotRun(what string, err error, s StopSignal) StopDecision {
	if s.Active {
		return stopAllow(fmt.Sprintf(
			"geas gate could not run on %s, so the task is NOT verified: %v. The stop is allowed because the previous stop "+
				"was already held for this (%s), so the hook never loops; fix the cause and run geas gate.", what, err, s.Name))
	}
	return stopBlock(fmt.Sprintf(
		"geas gate could not run on %s, so the task is not verified and you may not stop yet: %v.\n"+
			"Fix the cause if it is in your reach (for example a file or directory in the way under .geas), then finish your turn: "+
			"the gate runs again when you stop. If you cannot fix it, say so; the next stop is allowed.", what, err))
}

// stopUnbacked answers for an escalated, blocked or cancelled task whose state the records do not
// back (set by hand): the state is not taken on trust, so the first stop is held with what was
// checked; the next is allowed with a message (an authority may have set it for a reason of its
// own, and the hook must not loop).
func stopUnbacked(task string, state vocab.State, why string, s StopSignal) StopDecision {
	if s.Active {
		return stopAllow(fmt.Sprintf(
			"geas gate: task %s is %s, but nothing the gate or geas recorded backs that state: %s. The stop is allowed because "+
				"the previous stop was already held for this (%s); the task is not done.", task, state, why, s.Name))
	}
	return stopBlock(fmt.Sprintf(
		"geas gate: task %s is %s, but nothing the gate or geas recorded backs that state: %s.\n"+
			"A state set by hand does not end the work: move the task back to where it was (geas task transition) and let the gate "+
			"judge it, or, if an authority set it, say so and finish your turn.", task, state, why))
}

// stopRecheck answers for a verified or passed task, re-checked as geas gate verify does. A pass
// that holds lets the agent stop silently. One that does not holds the stop. For a verified task
// whose records do not back the state (state_unverified: verified set by hand) or whose fresh
// verdict is a fail or an error, every stop is held: the way out is in the agent's reach (geas
// gate verify --apply, or geas task transition back to the gate state) and leads to gate runs
// whose budget ends the loop. A passed task (terminal: no geas command moves it back) and a fresh
// block are held on the first stop only, as a block is, so that what the agent cannot lift does
// not loop; the message of the allowed stop says the pass is not valid.
func stopRecheck(res *Result, state string, s StopSignal) StopDecision {
	if res.Verdict.IsPass() {
		return StopDecision{}
	}
	unbacked := false
	for _, c := range res.Causes {
		if c.Code == vocab.CauseStateUnverified {
			unbacked = true
		}
	}
	report := fmt.Sprintf("geas gate re-checked task %s, which is %s, and the pass does not hold. %s", res.TaskID, state, HookReport(res))
	for _, n := range res.Notes {
		report += "\nNote: " + n
	}
	// A re-check refused before anything ran (the signing key would be exposed) is the setup's,
	// not the agent's to lift: held once, as a block is.
	soft := state == string(vocab.Passed) || (!unbacked && res.Verdict == vocab.VerdictBlock) || res.Refused()
	if s.Active && soft {
		return stopAllow(report + "\nThe stop is allowed because the previous stop was already held for this " +
			"(" + s.Name + "), so what the agent cannot lift does not loop; the pass is not valid.")
	}
	return stopBlock(report + "\nDo not stop yet: do the next action, then finish your turn.")
}

// stopVerdict maps a recorded run to the hook's answer. fail and error block: a fail spends a
// retry, so the loop ends in escalation, and three errors with one cause move the task to blocked.
// A block spends nothing and may wait on something the agent cannot supply (a human review), so it
// blocks only the first stop.
func stopVerdict(res *Result, s StopSignal, contractUnreadable bool) StopDecision {
	if res.Verdict.IsPass() {
		return StopDecision{}
	}
	if tr := res.Transition; tr != nil && (tr.To == vocab.Escalated || tr.To == vocab.Blocked) {
		return stopAllow(fmt.Sprintf("geas gate moved task %s to %s, so the agent may stop: %s", res.TaskID, tr.To, HookReport(res)))
	}
	if s.Active {
		switch {
		case res.Verdict == vocab.VerdictBlock:
			return stopAllow(fmt.Sprintf(
				"geas gate still blocks task %s; the stop is allowed because it already followed a block (%s), "+
					"so a block the agent cannot lift does not loop: %s", res.TaskID, s.Name, HookReport(res)))
		case res.RepeatOf != "":
			// SPEC §7.1: the same attempt spends nothing, so no budget would ever end this loop;
			// the fail stands (the task is not verified) and the stop it already held is allowed.
			return stopAllow(fmt.Sprintf(
				"geas gate still fails task %s and nothing changed since %s; the stop is allowed because it already followed a block (%s), "+
					"so an unchanged attempt does not loop; the task is not done: %s", res.TaskID, res.RepeatOf, s.Name, HookReport(res)))
		case res.Verdict == vocab.VerdictError && (contractUnreadable || res.Hash == ""):
			return stopAllow(fmt.Sprintf(
				"geas gate still errors on task %s; the stop is allowed because this error could not be recorded, "+
					"so repeated errors could never move the task to blocked: %s", res.TaskID, HookReport(res)))
		}
	}
	return stopBlock(fmt.Sprintf(
		"geas gate: task %s is not done, so do not stop yet. %s\nDo the next action, then finish your turn: the gate runs again when you stop.",
		res.TaskID, HookReport(res)))
}

// HookReport is the verdict, each cause with its evidence, the next action and the budget left.
func HookReport(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict: %s (run %s, task %s, mission %s).\n", res.Verdict, res.RunID, res.TaskID, res.MissionID)
	if res.RepeatOf != "" {
		fmt.Fprintf(&b, "Same attempt as %s: nothing changed since; nothing run, no retry spent. Change the work, the evidence or the rules before the gate runs again.\n", res.RepeatOf)
	}
	if len(res.Causes) > 0 {
		b.WriteString("Causes:\n")
		for _, c := range res.Causes {
			fmt.Fprintf(&b, "- %s (check %s): %s\n", c.Code, c.Check, c.Detail)
		}
	}
	if len(res.BlockingDimensions) > 0 {
		fmt.Fprintf(&b, "Blocking rubric dimensions: %s.\n", strings.Join(res.BlockingDimensions, ", "))
	}
	fmt.Fprintf(&b, "Next action: %s.\n", hookNextAction(res))
	fmt.Fprintf(&b, "Retry budget left: %s (this run: %s -> %s; a fail spends one, at 0 the task escalates).",
		BudgetText(res.RetryBudgetAfter), BudgetText(res.RetryBudgetBefore), BudgetText(res.RetryBudgetAfter))
	if res.Escalation != "" {
		fmt.Fprintf(&b, "\nEscalation: %s.", res.Escalation)
	}
	return b.String()
}

func hookNextAction(res *Result) string {
	switch res.NextAction {
	case NextFix:
		return "fix: address the causes above"
	case NextEscalate:
		return "escalate: the retry budget is spent; an authority decides (see the pending decision)"
	case NextResolveBlock:
		return "resolve_block: supply what is missing (no retry spent)"
	case NextInvestigateErr:
		if res.NextCommand != "" {
			return "investigate_error: the task is not in a state the gate judges; run " + res.NextCommand + " (no retry spent)"
		}
		return "investigate_error: the gate could not decide; fix the cause (no retry spent; 3 errors in a row with one cause block the task)"
	case NextRevoke:
		return fmt.Sprintf("revoke: the pass no longer holds; geas gate verify --apply --task %s records that (and moves a verified task back), then fix the causes", res.TaskID)
	}
	return res.NextAction
}

// notGatedMessage says why a stop is allowed without a gate run.
func notGatedMessage(t Task, state vocab.State) string {
	why := map[vocab.State]string{
		vocab.Escalated: "its retry budget is spent and an authority decides what happens next (see the pending decision under .geas/missions/" + t.Mission + "/decisions/pending)",
		vocab.Blocked:   "the gate could not decide it repeatedly; someone must resolve the cause and move it out of blocked",
		vocab.Cancelled: "it was cancelled",
	}[state]
	msg := fmt.Sprintf("geas gate: task %s is %s, so the hook did not gate it and the agent may stop: %s.", t.ID, state, why)
	if st, err := LoadTaskStatus(t); err == nil {
		last := st.LastVerdict
		if last == "" {
			last = "none"
		}
		msg += fmt.Sprintf(" Last verdict: %s; retry budget left: %s", last, BudgetText(st.BudgetLeft))
		if st.ConsecutiveErrors > 0 {
			msg += fmt.Sprintf("; %d errors in a row (%s)", st.ConsecutiveErrors, st.ConsecutiveErrorCause)
		}
		msg += "."
	}
	return msg
}
