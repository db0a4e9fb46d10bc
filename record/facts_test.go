package record

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFactsAreWhatTheRecordAnswers: the facts of a record are, field by field, what its getters and
// the history's readers answer, so that a check that reads a fact judges what it judged when it
// asked the record.
func TestFactsAreWhatTheRecordAnswers(t *testing.T) {
	r := chained(t)
	_, err := r.AppendHistory(Approval("design-authority", "scope agreed", "rules-1", testNow), testNow)
	require.NoError(t, err)
	for _, e := range []HistoryEntry{
		{Kind: KindGateRun, RunID: "gate-3", Verdict: "error", Causes: json.RawMessage(`[{"code":"eval_unstartable","check":"eval","detail":"x"}]`), RetryBudgetBefore: intp(2), RetryBudgetAfter: intp(2), RulesSHA256: "rules-1"},
		{Kind: KindGateRun, RunID: "gate-4", Verdict: "error", Causes: json.RawMessage(`[{"code":"eval_unstartable","check":"eval","detail":"x"}]`), RetryBudgetBefore: intp(2), RetryBudgetAfter: intp(2), RulesSHA256: "rules-1"},
	} {
		_, err := r.AppendHistory(e, testNow)
		require.NoError(t, err)
	}
	require.NoError(t, r.SetSection("self_check", json.RawMessage(`{"confidence":3,"summary":"ok","known_risks":["slow"],"possible_stubs":[],"untested_paths":[]}`), testNow))

	f := FactsOf(r, nil)
	assert.Equal(t, r.TaskID(), f.TaskID)
	assert.Equal(t, r.History(), f.History)
	assert.NoError(t, f.ChainErr)
	assert.Nil(t, f.BadSignatures)
	assert.False(t, f.Signed)
	assert.Equal(t, BudgetProblems(r.History()), f.BudgetProblems)
	last, at, ok := LastRun(r)
	assert.Equal(t, []any{last, at, ok}, []any{f.LastRun, f.LastRunAt, f.HaveRun})
	assert.Equal(t, "gate-4", f.LastRun.RunID)
	budget, at, ok := LatestBudget(r)
	assert.Equal(t, []any{budget, at, ok}, []any{f.Budget, f.BudgetAt, f.HaveBudget})
	pin, ok := PinnedRules(r)
	assert.True(t, ok)
	assert.Equal(t, pin, f.Pin)
	assert.True(t, f.Pinned)
	assert.Equal(t, KindApproval, f.Pin.Entry.Kind)
	n, cause := ConsecutiveErrors(r)
	assert.Equal(t, 2, n)
	assert.Equal(t, []any{n, cause}, []any{f.ErrorStreak, f.ErrorCause})
	sc, ok := r.SelfCheck()
	require.True(t, ok)
	assert.Equal(t, sc, f.SelfCheck)
	assert.Nil(t, f.Integration, "no integration.json")
	assert.Nil(t, f.Implementation)
	raw, _ := r.Section("self_check")
	assert.Equal(t, map[string]json.RawMessage{"self_check": raw}, f.Inputs, "the agent-written sections, not the gate's")
}

// TestFactsOfATamperedHistoryKeepWhatDoesNotVerify: an entry edited in place is the chain's error,
// and one forged and re-chained is a bad signature under the key the facts were computed with,
// and only under it: facts computed without a key do not answer for a keyed reader.
func TestFactsOfATamperedHistoryKeepWhatDoesNotVerify(t *testing.T) {
	key := []byte("k1")
	t.Setenv(SigningKeyEnv, string(key))

	edited := chained(t)
	edited.history[0].Verdict = "pass"
	f := FactsOf(edited, nil)
	var ce *ChainError
	require.ErrorAs(t, f.ChainErr, &ce)
	assert.Equal(t, 0, ce.Index)

	forged := chained(t)
	forged.history[0].Verdict, forged.history[0].Causes = "pass", json.RawMessage(`[]`)
	rechain(t, forged.history)
	f = FactsOf(forged, key)
	assert.NoError(t, f.ChainErr, "the chain alone cannot see it")
	require.Len(t, f.BadSignatures, 2)
	assert.Equal(t, 0, f.BadSignatures[0].Index)
	assert.True(t, f.Signed)
	assert.True(t, f.For(key))
	assert.False(t, f.For(nil))
	assert.False(t, f.For([]byte("k2")))

	unkeyed := FactsOf(forged, nil)
	assert.Empty(t, unkeyed.BadSignatures, "control: without the key nothing is checked")
	assert.False(t, unkeyed.For(key))
	assert.True(t, unkeyed.For(nil))
}

// TestFactsOfNoRecordAreThoseOfAnEmptyHistory: the readers answer a nil record as an empty
// history; so do its facts.
func TestFactsOfNoRecordAreThoseOfAnEmptyHistory(t *testing.T) {
	f := FactsOf(nil, nil)
	assert.Empty(t, f.History)
	assert.NoError(t, f.ChainErr)
	assert.False(t, f.HaveRun)
	assert.False(t, f.HaveBudget)
	assert.False(t, f.Pinned)
	assert.Equal(t, -1, f.LastRunAt)
	assert.Equal(t, -1, f.BudgetAt)
}

// TestThePinIsTheLatestApprovalElseTheFirstRunThatReadRules: one pass over the history finds the
// pin SPEC §4.4 names: without an approval, the earliest gate run that recorded its rules (not a
// later one, nor a run without a verdict); with approvals, the latest of them, wherever it stands.
func TestThePinIsTheLatestApprovalElseTheFirstRunThatReadRules(t *testing.T) {
	hist := []HistoryEntry{
		{Kind: KindGateRun, RunID: "gate-1", RulesSHA256: "rules-0"}, // no verdict: not a run
		{Kind: KindGateRun, RunID: "gate-2", Verdict: "fail", RulesSHA256: "rules-1"},
		{Kind: KindGateRun, RunID: "gate-3", Verdict: "fail", RulesSHA256: "rules-2"},
	}
	var f Facts
	f.scan(hist)
	require.True(t, f.Pinned)
	assert.Equal(t, 1, f.Pin.Index)
	assert.Equal(t, "rules-1", f.Pin.RulesSHA256)
	assert.Contains(t, f.Pin.By, "gate run gate-2")

	approvals := append(slices.Clone(hist),
		Approval("lead", "first", "rules-a", testNow), HistoryEntry{Kind: KindGateRun, RunID: "gate-4", Verdict: "pass"},
		Approval("design-authority", "second", "rules-b", testNow), Approval("x", "none", "", testNow))
	f = Facts{}
	f.scan(approvals)
	require.True(t, f.Pinned)
	assert.Equal(t, 5, f.Pin.Index, "the latest approval that names rules")
	assert.Equal(t, "rules-b", f.Pin.RulesSHA256)
	assert.Contains(t, f.Pin.By, "approval by design-authority")
	assert.Equal(t, "gate-4", f.LastRun.RunID)

	f = Facts{}
	f.scan(hist[:1])
	assert.False(t, f.Pinned, "control: a run without a verdict pins nothing")
}
