package record

import (
	"encoding/json"
	"fmt"
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
