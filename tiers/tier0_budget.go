package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

const budgetText = "the retry budget is not spent: a task whose budget is 0 re-enters the gate only after an authority's grant"

// budgetCheck is the tier-0 check budget_spent (SPEC §5.1, §7.1). Once a run (or a history reset)
// has taken the budget to 0, the task escalated and an authority's decision is pending; walking
// the task back by hand through legal transitions does not make the gate run again. Only a
// budget_grant entry, which raises the latest budget above 0, does. It is not computed over a
// history that does not verify (that run is history_tampered), nor for geas gate verify, which
// re-checks a pass and spends nothing. before are the run's checks so far.
func budgetCheck(pass *Pass, before []Check) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	in := pass.in
	if in.Record == nil || in.Contract == nil || pass.opts.Verify {
		return
	}
	if historyTampered(before) {
		add(skippedCheck(0, "budget", budgetText, "not computed: the gate history does not verify"))
		return
	}
	e, at, ok := in.Facts.Budget, in.Facts.BudgetAt, in.Facts.HaveBudget
	if !ok {
		add(passCheck(0, "budget", budgetText, fmt.Sprintf("no run has spent any of it yet: %d left (contract retry_budget)", in.Contract.RetryBudget)))
		return
	}
	name := e.RunID
	if name == "" {
		name = e.Kind
	}
	left := *e.RetryBudgetAfter
	if left > 0 {
		add(passCheck(0, "budget", budgetText, fmt.Sprintf("%d left (gate_history entry %d %s)", left, at+1, name)))
		return
	}
	// The budget is spent when, in the trailing run of entries at 0, a fail (the last retry) or a
	// history reset that granted nothing put it there. A contract whose retry_budget is 0 has
	// spent nothing yet: runs that block or error at 0 -> 0 do not spend, and its first fail
	// escalates. Name the earliest such entry, not the runs refused since.
	hist := in.Facts.History
	spent := -1
	for i := at; i >= 0; i-- {
		a := hist[i].RetryBudgetAfter
		if a == nil {
			continue
		}
		if *a != 0 {
			break
		}
		if k := hist[i].Kind; k == record.KindHistoryReset || (hist[i].IsGateRun() && hist[i].Verdict == string(vocab.VerdictFail)) {
			spent = i
		}
	}
	if spent < 0 {
		add(passCheck(0, "budget", budgetText, fmt.Sprintf("0 left (gate_history entry %d %s), none spent yet: the contract's retry_budget is 0, and the first fail escalates", at+1, name)))
		return
	}
	e, at = hist[spent], spent
	name = e.RunID
	if name == "" {
		name = e.Kind
	}
	from := "?"
	if e.RetryBudgetBefore != nil {
		from = fmt.Sprint(*e.RetryBudgetBefore)
	}
	how := fmt.Sprintf("%s %s -> 0", verdictOrKind(e), from)
	if e.Kind == record.KindHistoryReset {
		how = "a history reset that granted 0"
	}
	add(failCheck(0, "budget", budgetText, fmt.Sprintf(
		"retry budget is 0 since gate_history entry %d %s (%s) and no grant followed; state %s does not reopen it: an authority decides (geas task budget grant --task %s --retries N --by AUTHORITY --reason TEXT)",
		at+1, name, how, in.Contract.Status, in.Task), StatusBlock, vocab.CauseBudgetSpent))
	return
}

func verdictOrKind(e record.HistoryEntry) string {
	if e.Verdict != "" {
		return e.Verdict
	}
	return e.Kind
}
