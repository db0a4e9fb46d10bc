package record

import "encoding/json"

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
// grants, revocations) neither break nor extend the streak.
func ConsecutiveErrors(r *Record) (n int, cause string) {
	if r == nil {
		return 0, ""
	}
	for i := len(r.history) - 1; i >= 0; i-- {
		e := r.history[i]
		if !isRun(e) {
			continue
		}
		c := firstCause(e.Causes)
		if e.Verdict != "error" || (n > 0 && c != cause) {
			break
		}
		n, cause = n+1, c
	}
	return n, cause
}

// firstCause returns the code of the first entry of a causes array ([{code, check, detail}]), or ""
// when there is none or it cannot be read.
func firstCause(causes json.RawMessage) string {
	var items []json.RawMessage
	if err := json.Unmarshal(causes, &items); err != nil || len(items) == 0 {
		return ""
	}
	f, err := objectFields(items[0])
	if err != nil {
		return ""
	}
	var code string
	if err := field(f, "code", &code); err != nil {
		return ""
	}
	return code
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

// isRun reports whether a history entry is a gate run (older entries have no kind).
func isRun(e HistoryEntry) bool {
	return e.Verdict != "" && (e.Kind == "" || e.Kind == KindGateRun)
}
