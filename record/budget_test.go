package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// run builds a history entry for a gate run; causes are cause codes.
func run(verdict string, before, after *int, causes ...string) HistoryEntry {
	var cs []map[string]string
	for _, c := range causes {
		cs = append(cs, map[string]string{"code": c, "check": "some.check", "detail": "d"})
	}
	raw, _ := json.Marshal(cs)
	return HistoryEntry{RunID: fmt.Sprintf("gate-%s", verdict), Verdict: verdict, Causes: raw, RetryBudgetBefore: before, RetryBudgetAfter: after}
}

func grant(before, after int) HistoryEntry {
	return HistoryEntry{Kind: "budget_grant", RetryBudgetBefore: &before, RetryBudgetAfter: &after}
}

func withHistory(h ...HistoryEntry) *Record { return &Record{history: h} }

func TestBudgetLeft(t *testing.T) {
	tests := []struct {
		name     string
		contract int
		r        *Record
		want     int
	}{
		{"no record", 3, nil, 3},
		{"no history", 3, withHistory(), 3},
		{"after a fail", 3, withHistory(run("fail", intp(3), intp(2))), 2},
		{"block spends nothing", 3, withHistory(run("fail", intp(3), intp(2)), run("block", intp(2), intp(2))), 2},
		{"spent", 1, withHistory(run("fail", intp(1), intp(0))), 0},
		{"the latest entry that records a budget", 3, withHistory(run("fail", intp(3), intp(1)), run("error", nil, nil)), 1},
		{"no entry records a budget", 5, withHistory(run("error", nil, nil)), 5},
		{"a grant counts", 3, withHistory(run("fail", intp(1), intp(0)), grant(0, 2)), 2},
		{"the history wins over the contract", 10, withHistory(run("fail", intp(3), intp(2))), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, BudgetLeft(tc.contract, tc.r))
		})
	}
}

func TestConsecutiveErrors(t *testing.T) {
	tests := []struct {
		name      string
		r         *Record
		wantN     int
		wantCause string
	}{
		{"no record", nil, 0, ""},
		{"no history", withHistory(), 0, ""},
		{"last is a pass", withHistory(run("error", nil, nil, "no_repository"), run("pass", nil, nil)), 0, ""},
		{"last is a fail", withHistory(run("error", nil, nil, "no_repository"), run("fail", nil, nil, "scope_violation")), 0, ""},
		{"one error", withHistory(run("error", nil, nil, "no_repository")), 1, "no_repository"},
		{"three of the same", withHistory(run("pass", nil, nil), run("error", nil, nil, "eval_unstartable"), run("error", nil, nil, "eval_unstartable", "other"), run("error", nil, nil, "eval_unstartable")), 3, "eval_unstartable"},
		{"a different cause breaks the run", withHistory(run("error", nil, nil, "a"), run("error", nil, nil, "b"), run("error", nil, nil, "b")), 2, "b"},
		{"only the first cause counts", withHistory(run("error", nil, nil, "b", "a"), run("error", nil, nil, "a", "b")), 1, "a"},
		{"a block breaks the run", withHistory(run("error", nil, nil, "a"), run("block", nil, nil, "missing_review"), run("error", nil, nil, "a")), 1, "a"},
		{"a grant neither breaks nor extends it", withHistory(run("error", nil, nil, "a"), grant(0, 1), run("error", nil, nil, "a")), 2, "a"},
		{"errors without causes", withHistory(run("error", nil, nil), run("error", nil, nil)), 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, cause := ConsecutiveErrors(tc.r)
			assert.Equal(t, tc.wantN, n)
			assert.Equal(t, tc.wantCause, cause)
		})
	}
}

func TestLastVerdict(t *testing.T) {
	tests := []struct {
		name string
		r    *Record
		want string
	}{
		{"no record", nil, ""},
		{"no history", withHistory(), ""},
		{"one run", withHistory(run("fail", nil, nil)), "fail"},
		{"latest run", withHistory(run("fail", nil, nil), run("pass", nil, nil)), "pass"},
		{"a grant is not a run", withHistory(run("fail", nil, nil), grant(0, 1)), "fail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, LastVerdict(tc.r))
		})
	}
}

func TestBudgetFromAParsedRecord(t *testing.T) {
	r, err := Parse("full.record.json", fixture(t, "full.record.json"))
	if !assert.NoError(t, err) {
		return
	}
	assert.Equal(t, 2, BudgetLeft(3, r))
	assert.Equal(t, "fail", LastVerdict(r))
	n, cause := ConsecutiveErrors(r)
	assert.Equal(t, 0, n)
	assert.Empty(t, cause)
}

func TestBudgetProblems(t *testing.T) {
	n := func(v int) *int { return &v }
	g := func(before, after, retries int) HistoryEntry {
		e := grant(before, after)
		e.Extra = map[string]json.RawMessage{"retries": json.RawMessage(fmt.Sprint(retries))}
		return e
	}
	reset := func(after int, retries string) HistoryEntry {
		return HistoryEntry{Kind: KindHistoryReset, RetryBudgetAfter: &after, Extra: map[string]json.RawMessage{"retries": json.RawMessage(retries)}}
	}
	for _, tc := range []struct {
		name string
		hist []HistoryEntry
		want string // "" when the budgets add up
	}{
		{"fail spends one", []HistoryEntry{run("fail", n(3), n(2)), run("fail", n(2), n(1))}, ""},
		{"the last fail stays at 0", []HistoryEntry{run("fail", n(1), n(0)), run("fail", n(0), n(0))}, ""},
		{"block and error spend nothing", []HistoryEntry{run("block", n(3), n(3)), run("error", n(3), n(3)), run("pass", n(3), n(3))}, ""},
		{"a contract budget above 1000 is the contract's business", []HistoryEntry{run("fail", n(100000), n(99999))}, ""},
		{"no budget on an unreadable contract", []HistoryEntry{run("error", nil, nil), run("fail", n(3), n(2))}, ""},
		{"grant", []HistoryEntry{run("fail", n(1), n(0)), g(0, 2, 2), run("fail", n(2), n(1))}, ""},
		{"reset first", []HistoryEntry{reset(1, "1"), run("fail", n(1), n(0))}, ""},
		{"revocation records no budget", []HistoryEntry{run("pass", n(3), n(3)), {Kind: KindRevocation}, run("pass", n(3), n(3))}, ""},

		{"after raised", []HistoryEntry{run("fail", n(3), n(50))}, "verdict fail takes the budget 3 to 2, but retry_budget_after is 50"},
		{"a pass that adds", []HistoryEntry{run("pass", n(3), n(4))}, "verdict pass takes the budget 3 to 3, but retry_budget_after is 4"},
		{"before does not follow", []HistoryEntry{run("fail", n(3), n(2)), run("fail", n(50), n(49))}, "retry_budget_before 50 does not follow the previous retry_budget_after 2"},
		{"negative", []HistoryEntry{run("fail", n(-1), n(0))}, "budget -1 is negative"},
		{"only one budget", []HistoryEntry{run("fail", n(3), nil)}, "records only one of"},
		{"grant without retries", []HistoryEntry{grant(0, 50)}, "a grant adds 1..100 retries, not (none)"},
		{"grant of 101", []HistoryEntry{g(0, 101, 101)}, "a grant adds 1..100 retries, not 101"},
		{"grant that does not add up", []HistoryEntry{g(0, 50, 2)}, "a grant of 2 takes the budget 0 to 2, but retry_budget_after is 50"},
		{"grant above 1000", []HistoryEntry{g(950, 1050, 100)}, "a budget_grant takes the budget to 1050, above 1000"},
		{"reset not first", []HistoryEntry{run("fail", n(1), n(0)), reset(5, "5")}, "a history reset can only be the first entry of a chain"},
		{"reset that does not match its retries", []HistoryEntry{reset(50, "1")}, "a reset grants 0..100 retries (retries 1), and retry_budget_after is 50"},
		{"unknown kind with a budget", []HistoryEntry{{Kind: "approval", RetryBudgetAfter: n(9)}}, "a approval entry records no budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BudgetProblems(tc.hist)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.NotEmpty(t, got)
			found := false
			for _, p := range got {
				found = found || strings.Contains(p, tc.want)
			}
			assert.True(t, found, "want %q in %q", tc.want, got)
		})
	}
}
