package record

import (
	"fmt"

	"github.com/geas-dev/geas/vocab"
)

// BudgetLeft returns the retries the task has left: the retry_budget_after of the latest history
// entry that records one (a gate run, or a grant), else contractBudget, the contract's
// retry_budget, because no run has spent anything yet. The gate extends this with grants that are
// not yet in the history.
func BudgetLeft(contractBudget int, r *Record) int {
	if r == nil {
		return contractBudget
	}
	for i := len(r.history) - 1; i >= 0; i-- {
		if after := r.history[i].RetryBudgetAfter; after != nil {
			return *after
		}
	}
	return contractBudget
}

// ConsecutiveErrors returns the length of the trailing run of gate runs whose verdict is "error"
// with the same first cause code, and that code; 0 and "" when the latest run is not an error. The
// gate blocks the task when this reaches the consecutive-error limit (SPEC §7.2): an error that
// keeps recurring will not go away by re-running. History entries that are not gate runs (budget
// grants, revocations) neither break nor extend the streak. It is the history's scan
// (Facts.ErrorStreak, Facts.ErrorCause).
func ConsecutiveErrors(r *Record) (n int, cause string) {
	f := scanOf(r)
	return f.ErrorStreak, f.ErrorCause
}

// LastVerdict returns the verdict of the latest gate run in the history, or "" before the first run.
func LastVerdict(r *Record) string {
	if r == nil {
		return ""
	}
	for i := len(r.history) - 1; i >= 0; i-- {
		if e := r.history[i]; isRun(e) {
			return e.Verdict
		}
	}
	return ""
}

// Budget limits (SPEC §7.1): a grant adds 1..MaxGrant retries, and no grant, reset or history
// entry may hold a budget above MaxBudget.
const (
	MaxGrant  = 100
	MaxBudget = 1000
)

// LatestBudget returns the latest history entry that records a budget (retry_budget_after set),
// its index, and whether there is one: the history's scan (Facts.Budget).
func LatestBudget(r *Record) (HistoryEntry, int, bool) {
	f := scanOf(r)
	return f.Budget, f.BudgetAt, f.HaveBudget
}

// BudgetProblems checks the budget arithmetic of a history, entry by entry, and returns what does
// not add up, with the values found. A hash chain alone lets anyone who can write record.json
// re-chain an edited entry; the arithmetic makes the edit that matters (more retries) visible
// even then:
//
//   - every entry's retry_budget_before equals the previous budget's retry_budget_after;
//   - a gate run records both values or neither (neither: the contract could not be read); a
//     fail spends one (after = max(before-1, 0)), every other verdict spends nothing;
//   - a budget_grant adds its "retries", 1..MaxGrant;
//   - a history_reset is the first entry of its chain and grants 0..MaxGrant from nothing;
//   - revocations and kinds this version does not know record no budget;
//   - no value is negative, and no grant or reset takes the budget above MaxBudget.
func BudgetProblems(entries []HistoryEntry) []string {
	var problems []string
	bad := func(i int, e HistoryEntry, format string, args ...any) {
		id := e.RunID
		if id == "" {
			id = e.Kind
		}
		problems = append(problems, fmt.Sprintf("gate_history entry %d %s: ", i+1, id)+fmt.Sprintf(format, args...))
	}
	var running *int
	for i, e := range entries {
		b, a := e.RetryBudgetBefore, e.RetryBudgetAfter
		for _, v := range []*int{b, a} {
			if v != nil && *v < 0 {
				bad(i, e, "budget %d is negative", *v)
			}
		}
		// A contract may set any retry_budget; what an authority adds may not go past MaxBudget.
		if (e.Kind == KindBudgetGrant || e.Kind == KindHistoryReset) && a != nil && *a > MaxBudget {
			bad(i, e, "a %s takes the budget to %d, above %d", e.Kind, *a, MaxBudget)
		}
		follows := func() {
			if b != nil && running != nil && *b != *running {
				bad(i, e, "retry_budget_before %d does not follow the previous retry_budget_after %d", *b, *running)
			}
		}
		switch e.Kind {
		case "", KindGateRun:
			if (b == nil) != (a == nil) {
				bad(i, e, "records only one of retry_budget_before and retry_budget_after")
				continue
			}
			if b == nil {
				continue // a run on an unreadable contract: no budget, nothing changed
			}
			follows()
			want := *b
			if e.Verdict == string(vocab.VerdictFail) {
				want = max(*b-1, 0)
			}
			if *a != want {
				bad(i, e, "verdict %s takes the budget %d to %d, but retry_budget_after is %d", e.Verdict, *b, want, *a)
			}
		case KindBudgetGrant:
			n, ok := extraInt(e, "retries")
			switch {
			case b == nil || a == nil:
				bad(i, e, "a budget grant records retry_budget_before and retry_budget_after")
				continue
			case !ok || n < 1 || n > MaxGrant:
				bad(i, e, "a grant adds 1..%d retries, not %s", MaxGrant, extraText(e, "retries"))
			case *a != *b+n:
				bad(i, e, "a grant of %d takes the budget %d to %d, but retry_budget_after is %d", n, *b, *b+n, *a)
			}
			follows()
		case KindHistoryReset:
			n, ok := extraInt(e, "retries")
			switch {
			case i != 0:
				bad(i, e, "a history reset can only be the first entry of a chain")
			case b != nil || a == nil:
				bad(i, e, "a history reset records only retry_budget_after")
				continue
			case !ok || n < 0 || n > MaxGrant || *a != n:
				bad(i, e, "a reset grants 0..%d retries (retries %s), and retry_budget_after is %d", MaxGrant, extraText(e, "retries"), *a)
			}
		default:
			if b != nil || a != nil {
				bad(i, e, "a %s entry records no budget", e.Kind)
			}
			continue
		}
		if a != nil {
			v := *a
			running = &v
		}
	}
	return problems
}

// extraInt reads an integer kept in an entry's Extra.
func extraInt(e HistoryEntry, key string) (int, bool) {
	raw, ok := e.Extra[key]
	if !ok {
		return 0, false
	}
	var n int
	if err := unmarshalValue(raw, &n); err != nil {
		return 0, false
	}
	return n, true
}

func extraText(e HistoryEntry, key string) string {
	if raw, ok := e.Extra[key]; ok {
		return string(raw)
	}
	return "(none)"
}

// BudgetText shows a budget value, or "none" when the run computed none.
func BudgetText(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
