package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/contract"

	"github.com/geas-dev/geas/vocab"
)

// Budget computes a run's retry budget, transition and next action from the record's history
// (SPEC §7.1, §7.2). It fills res and reports whether the run escalates. A run on an unreadable
// contract, on a record or history that cannot be read, or over a history that does not verify,
// computes no budget (null before and after) and moves nothing: the next run takes its budget
// from the history as if this one had not happened, and neither tampering nor an unreadable
// history ever yields the contract's fresh budget.
func Budget(in *Snapshot, res *Result) (escalate bool) {
	res.RetryBudgetBefore, res.RetryBudgetAfter = nil, nil
	if in.Contract == nil || in.Record == nil || res.tampered || res.refused {
		res.Transition = nil
		switch {
		case res.Verdict == vocab.VerdictFail:
			res.NextAction = NextFix
		case res.Verdict == vocab.VerdictBlock:
			res.NextAction = NextResolveBlock
		default:
			res.NextAction = NextInvestigateErr
		}
		switch {
		case in.Contract == nil || res.refused:
		case in.Record == nil:
			res.Notes = append(res.Notes, "record.json or the gate history cannot be read: this run computes no budget (the contract's retry_budget is not what is left)")
		default:
			res.Notes = append(res.Notes, "the gate history does not verify: this run records nothing and computes no budget until an authority runs geas task history reset")
		}
		return false
	}
	before := budgetLeft(in)
	after := before
	if res.RepeatOf != "" { // SPEC §7.1: the same attempt spends nothing and moves nothing
		res.Transition, res.NextAction = nil, NextFix
		res.RetryBudgetBefore, res.RetryBudgetAfter = &before, &after
		return false
	}
	status := in.Contract.Status
	switch res.Verdict {
	case vocab.VerdictFail:
		after = max(before-1, 0)
		if after == 0 {
			escalate = true
			res.NextAction = NextEscalate
			res.Transition = transitionIfLegal(status, vocab.Escalated)
		} else {
			res.NextAction = NextFix
		}
	case vocab.VerdictBlock:
		res.NextAction = NextResolveBlock
	case vocab.VerdictError:
		res.NextAction = NextInvestigateErr
		if status == vocab.Escalated {
			// The gate refuses an escalated task (state_ineligible): nothing is to investigate,
			// the task waits for the authority's decision.
			res.NextAction = NextEscalate
			res.Notes = append(res.Notes, fmt.Sprintf("task %s is escalated: an authority decides (the pending decision under .geas/missions/%s/decisions/pending); the gate judges it again once the decision moves it", in.Task, in.Mission))
		} else if len(res.Causes) > 0 && res.Causes[0].Code == vocab.CauseStateIneligible && in.Contract != nil {
			res.NextCommand = TransitionCommand(in.Task, status, contract.EligibleStates(in.Contract.GateProfile))
		}
		n, cause := in.Facts.ErrorStreak, in.Facts.ErrorCause
		code := ""
		if len(res.Causes) > 0 {
			code = string(res.Causes[0].Code)
		}
		if n == 0 || cause != code {
			n = 0
		}
		if n+1 >= in.Policy.ConsecutiveErrorLimit && status != vocab.Blocked {
			res.Transition = transitionIfLegal(status, vocab.Blocked)
			if res.Transition != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%d consecutive errors with cause %s: task blocked", n+1, code))
			}
		}
	default:
		if res.Verdict.IsPass() {
			res.NextAction = NextProceed
			res.Transition = transitionIfLegal(status, vocab.Verified)
		}
	}
	res.RetryBudgetBefore, res.RetryBudgetAfter = &before, &after
	return escalate
}

// budgetLeft is the retries in's task has left (record.BudgetLeft): the retry_budget_after of the
// latest history entry that records one, else the contract's retry_budget. in has a contract and
// a record.
func budgetLeft(in *Snapshot) int {
	if f := in.Facts; f.HaveBudget {
		return *f.Budget.RetryBudgetAfter
	}
	return in.Contract.RetryBudget
}

func transitionIfLegal(from, to vocab.State) *Transition {
	if from == "" || vocab.CheckTransition(from, to, true) != nil {
		return nil
	}
	return &Transition{From: from, To: to}
}
