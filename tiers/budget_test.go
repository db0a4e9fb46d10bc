package tiers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// gateRun is a gate_history entry of a run with the given verdict, first cause and budget after.
func gateRun(verdict string, after int, cause vocab.CauseCode) record.HistoryEntry {
	e := record.HistoryEntry{Kind: record.KindGateRun, RunID: "gate-x", Verdict: verdict, RetryBudgetAfter: intp(after), RetryBudgetBefore: intp(after)}
	if verdict == "fail" {
		e.RetryBudgetBefore = intp(after + 1)
	}
	if cause != "" {
		e.Causes = json.RawMessage(`[{"code":"` + string(cause) + `","check":"c","detail":"d"}]`)
	} else {
		e.Causes = json.RawMessage(`[]`)
	}
	return e
}

func grant(after int) record.HistoryEntry {
	return record.HistoryEntry{Kind: record.KindBudgetGrant, RunID: "grant-1", RetryBudgetAfter: intp(after)}
}

// withHistory is a record whose gate_history holds entries, chained.
func withHistory(t *testing.T, entries ...record.HistoryEntry) *record.Record {
	t.Helper()
	rec := unitRecord(t, map[string]any{"self_check": selfCheck(4, nil)})
	for _, e := range entries {
		_, err := rec.AppendHistory(e, testNow)
		require.NoError(t, err)
	}
	return rec
}

// TestBudget covers every row of SPEC §7.1 and §7.2.
func TestBudget(t *testing.T) {
	t.Parallel()
	passVerdict, _ := decide([]Check{passCheck(0, "x", "t", "e")})
	const causeA, causeB = vocab.CauseEvalUnstartable, vocab.CauseDetectorError
	tests := []struct {
		name           string
		budget         int // the contract's retry_budget
		status         vocab.State
		limit          int // consecutive-error limit; 0 keeps the default 3
		history        []record.HistoryEntry
		verdict        vocab.Verdict
		cause          vocab.CauseCode
		before, after  int
		next           string
		transition     *Transition
		escalate, note bool
	}{
		{name: "pass", budget: 3, status: "integrated", verdict: passVerdict,
			before: 3, after: 3, next: NextProceed, transition: &Transition{From: "integrated", To: "verified"}},
		{name: "pass from reviewed", budget: 3, status: "reviewed", verdict: passVerdict,
			before: 3, after: 3, next: NextProceed, transition: &Transition{From: "reviewed", To: "verified"}},
		{name: "pass on a verified task moves nothing", budget: 3, status: "verified", verdict: passVerdict,
			before: 3, after: 3, next: NextProceed},
		{name: "first fail spends one", budget: 3, status: "integrated", verdict: vocab.VerdictFail, cause: vocab.CauseBelowThreshold,
			before: 3, after: 2, next: NextFix},
		{name: "budget comes from the previous run", budget: 3, status: "integrated", history: []record.HistoryEntry{gateRun("fail", 2, "x")},
			verdict: vocab.VerdictFail, cause: vocab.CauseBelowThreshold, before: 2, after: 1, next: NextFix},
		{name: "the fail that spends the last retry escalates", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("fail", 2, "x"), gateRun("fail", 1, "x")}, verdict: vocab.VerdictFail, cause: vocab.CauseBelowThreshold,
			before: 1, after: 0, next: NextEscalate, transition: &Transition{From: "integrated", To: "escalated"}, escalate: true},
		{name: "a budget of one escalates on the first fail", budget: 1, status: "integrated", verdict: vocab.VerdictFail, cause: vocab.CauseScopeViolation,
			before: 1, after: 0, next: NextEscalate, transition: &Transition{From: "integrated", To: "escalated"}, escalate: true},
		{name: "a fail with no budget escalates and does not go negative", budget: 0, status: "integrated", verdict: vocab.VerdictFail, cause: vocab.CauseScopeViolation,
			before: 0, after: 0, next: NextEscalate, transition: &Transition{From: "integrated", To: "escalated"}, escalate: true},
		{name: "a grant adds retries", budget: 1, status: "integrated", history: []record.HistoryEntry{gateRun("fail", 0, "x"), grant(2)},
			verdict: vocab.VerdictFail, cause: vocab.CauseScopeViolation, before: 2, after: 1, next: NextFix},
		{name: "block spends nothing", budget: 3, status: "integrated", history: []record.HistoryEntry{gateRun("fail", 1, "x")},
			verdict: vocab.VerdictBlock, cause: vocab.CauseMissingReview, before: 1, after: 1, next: NextResolveBlock},
		{name: "block with no budget left does not escalate", budget: 0, status: "integrated",
			verdict: vocab.VerdictBlock, cause: vocab.CauseMissingReview, before: 0, after: 0, next: NextResolveBlock},
		{name: "error spends nothing", budget: 3, status: "integrated", verdict: vocab.VerdictError, cause: causeA,
			before: 3, after: 3, next: NextInvestigateErr},
		{name: "second consecutive error", budget: 3, status: "integrated", history: []record.HistoryEntry{gateRun("error", 3, causeA)},
			verdict: vocab.VerdictError, cause: causeA, before: 3, after: 3, next: NextInvestigateErr},
		{name: "third consecutive error with the same cause blocks", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("error", 3, causeA), gateRun("error", 3, causeA)}, verdict: vocab.VerdictError, cause: causeA,
			before: 3, after: 3, next: NextInvestigateErr, transition: &Transition{From: "integrated", To: "blocked"}, note: true},
		{name: "three errors with different causes do not block", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("error", 3, causeA), gateRun("error", 3, causeB)}, verdict: vocab.VerdictError, cause: causeA,
			before: 3, after: 3, next: NextInvestigateErr},
		{name: "the streak is the trailing one", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("error", 3, causeB), gateRun("error", 3, causeA)}, verdict: vocab.VerdictError, cause: causeB,
			before: 3, after: 3, next: NextInvestigateErr},
		{name: "another verdict breaks the streak", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("error", 3, causeA), gateRun("block", 3, vocab.CauseMissingReview), gateRun("error", 3, causeA)},
			verdict: vocab.VerdictError, cause: causeA, before: 3, after: 3, next: NextInvestigateErr},
		{name: "a grant does not break the streak", budget: 3, status: "integrated",
			history: []record.HistoryEntry{gateRun("error", 3, causeA), grant(4), gateRun("error", 4, causeA)}, verdict: vocab.VerdictError, cause: causeA,
			before: 4, after: 4, next: NextInvestigateErr, transition: &Transition{From: "integrated", To: "blocked"}, note: true},
		{name: "a blocked task is not blocked again", budget: 3, status: "blocked",
			history: []record.HistoryEntry{gateRun("error", 3, causeA), gateRun("error", 3, causeA)}, verdict: vocab.VerdictError, cause: causeA,
			before: 3, after: 3, next: NextInvestigateErr},
		{name: "the policy's error limit", budget: 3, status: "integrated", limit: 2,
			history: []record.HistoryEntry{gateRun("error", 3, causeA)}, verdict: vocab.VerdictError, cause: causeA,
			before: 3, after: 3, next: NextInvestigateErr, transition: &Transition{From: "integrated", To: "blocked"}, note: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := unitContract()
			c.RetryBudget, c.Status = tc.budget, tc.status
			in := withFacts(&Snapshot{Contract: c, Record: withHistory(t, tc.history...), Policy: policy.Default()})
			if tc.limit > 0 {
				in.Policy.ConsecutiveErrorLimit = tc.limit
			}
			res := &Result{Verdict: tc.verdict}
			if tc.cause != "" {
				res.Causes = []Cause{{Code: tc.cause, Check: "c", Detail: "d"}}
			}
			escalate := Budget(in, res)
			assert.Equal(t, tc.escalate, escalate)
			assert.Equal(t, intp(tc.before), res.RetryBudgetBefore, "before")
			assert.Equal(t, intp(tc.after), res.RetryBudgetAfter, "after")
			assert.Equal(t, tc.next, res.NextAction)
			assert.Equal(t, tc.transition, res.Transition)
			if tc.note {
				require.Len(t, res.Notes, 1)
				n := 3
				if tc.limit > 0 {
					n = tc.limit
				}
				assert.Contains(t, res.Notes[0], fmt.Sprintf("%d consecutive errors with cause %s: task blocked", n, tc.cause))
			} else {
				assert.Empty(t, res.Notes)
			}
		})
	}
}

// TestAnUnreadableHistoryReportsNoBudget: a run that could not read record.json or its history
// (no Record: record_invalid) computes no budget, never the contract's fresh one (SPEC §7.1), and
// moves nothing, whatever its verdict.
func TestAnUnreadableHistoryReportsNoBudget(t *testing.T) {
	t.Parallel()
	for _, v := range []vocab.Verdict{vocab.VerdictError, vocab.VerdictFail, vocab.VerdictBlock} {
		t.Run(string(v), func(t *testing.T) {
			c := unitContract()
			c.Status = "integrated"
			in := &Snapshot{Contract: c, Policy: policy.Default()} // record.json or its history unreadable: no Record
			in.Policy.ConsecutiveErrorLimit = 1
			res := &Result{Verdict: v, Causes: []Cause{{Code: vocab.CauseRecordInvalid}}}
			assert.False(t, Budget(in, res))
			assert.Nil(t, res.RetryBudgetBefore, "before")
			assert.Nil(t, res.RetryBudgetAfter, "after")
			assert.Nil(t, res.Transition)
			require.Len(t, res.Notes, 1)
			assert.Contains(t, res.Notes[0], "cannot be read: this run computes no budget")
		})
	}
	// Control: the same contract over a readable history with one retry left reports that one.
	c := unitContract()
	c.Status = "integrated"
	in := withFacts(&Snapshot{Contract: c, Record: withHistory(t, gateRun("fail", 2, "x"), gateRun("fail", 1, "x")), Policy: policy.Default()})
	res := &Result{Verdict: vocab.VerdictBlock, Causes: []Cause{{Code: vocab.CauseMissingReview}}}
	Budget(in, res)
	assert.Equal(t, intp(1), res.RetryBudgetBefore)
	assert.Equal(t, intp(1), res.RetryBudgetAfter)
}

func TestNextRunID(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "gate-1", NextRunID(nil))
	assert.Equal(t, "gate-1", NextRunID(withHistory(t)))
	assert.Equal(t, "gate-3", NextRunID(withHistory(t, gateRun("fail", 2, "x"), grant(3), gateRun("block", 3, "y"))), "grants are not runs")
}

func TestApplyPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	res := f.gate()
	assertPass(t, res)
	assert.Equal(t, "verified", f.status())
	assert.Equal(t, []string{"gate_result", "task_transition"}, f.events())

	rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
	require.NoError(t, err)
	raw, ok := rec.GateResult()
	require.True(t, ok)
	var stored Result
	require.NoError(t, json.Unmarshal(raw, &stored))
	assert.True(t, stored.Verdict.IsPass())
	assert.Equal(t, "gate-1", stored.RunID)
	hist := rec.History()
	require.Len(t, hist, 1)
	assert.Equal(t, "pass", hist[0].Verdict)
	assert.Equal(t, "", hist[0].PrevHash)
	assert.Equal(t, hist[0].Hash, stored.Hash, "gate_result.hash is the latest entry's hash")
	assert.Equal(t, res.InputsSHA256, hist[0].InputsSHA256)
	require.NoError(t, record.VerifyChain(hist))
}

func TestApplyEscalation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) {
		m["retry_budget"] = 1
		m["eval_commands"] = []any{"exit 1"}
		m["escalation_policy"] = "product-authority-decision"
	})
	res := f.gate()
	assert.Equal(t, vocab.VerdictFail, res.Verdict)
	assert.Equal(t, NextEscalate, res.NextAction)
	assert.Equal(t, intp(1), res.RetryBudgetBefore)
	assert.Equal(t, intp(0), res.RetryBudgetAfter)
	assert.Equal(t, "escalated", f.status())
	assert.Equal(t, ".geas/missions/m1/decisions/pending/esc-t1-gate-1.json", res.Escalation)
	assert.Equal(t, []string{"gate_result", "task_transition", "escalation"}, f.events())

	var dec map[string]any
	require.NoError(t, json.Unmarshal(f.read(res.Escalation), &dec))
	assert.Equal(t, "pending", dec["status"])
	assert.Equal(t, "product-authority-decision", dec["escalation_policy"])
	assert.Equal(t, "t1", dec["task_id"])
	failures, _ := json.Marshal(dec["failures"])
	assert.Contains(t, string(failures), vocab.CauseEvalFailed)
	assert.Contains(t, dec["context"], "budget 1 -> 0")
}

// TestApplyErrorStreak: the third consecutive error with the same cause blocks the task; errors
// with different causes do not.
func TestApplyErrorStreak(t *testing.T) {
	t.Parallel()
	unstartable := func(f *fixture) { // eval_unstartable
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{map[string]any{"run": "true", "workdir": "no-such-dir"}}
			m["acceptance_criteria"] = []any{"AC1 --verbose prints the configuration"}
		})
	}
	detector := func(f *fixture) { // detector_error
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{"true"}
			m["acceptance_criteria"] = []any{map[string]any{"criterion": "x", "check": map[string]any{"type": "script", "command": "./no-such-program"}}}
		})
	}
	for _, tc := range []struct {
		name    string
		runs    []func(*fixture)
		blocked bool
	}{
		{"same cause", []func(*fixture){unstartable, unstartable, unstartable}, true},
		{"different causes", []func(*fixture){unstartable, detector, unstartable}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			for i, setup := range tc.runs {
				setup(f)
				if i > 0 {
					f.approve() // the new rules are an authority's, not a lowered bar
				}
				res := f.gate()
				require.Equal(t, vocab.VerdictError, res.Verdict, "run %d: %+v", i+1, res.Causes)
				assert.Equal(t, intp(3), res.RetryBudgetAfter, "an error spends nothing")
				if i < 2 {
					assert.Equal(t, "integrated", f.status(), "run %d", i+1)
				}
			}
			want := "integrated"
			if tc.blocked {
				want = "blocked"
			}
			assert.Equal(t, want, f.status())
		})
	}
}

func TestEvaluateWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	before := snapshotTree(t, f.dir)
	_, res, _ := f.evaluate(Options{DryRun: true, Now: testNow})
	assertPass(t, res)
	assert.True(t, res.DryRun)
	assert.Equal(t, before, snapshotTree(t, f.dir), "Evaluate and Budget write nothing")
}

// snapshotTree maps every file under dir (outside .git) to its content.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	}))
	return out
}

// TestAnEscalatedTaskWaitsForItsDecision: the gate refuses an escalated task (an error verdict),
// and the next action says an authority decides (escalate), naming where the decision is, rather
// than asking to investigate an error. The control: the same error on an integrated task is
// investigate_error with no such note.
func TestAnEscalatedTaskWaitsForItsDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status vocab.State
		next   string
	}{{vocab.Escalated, NextEscalate}, {"integrated", NextInvestigateErr}} {
		c := unitContract()
		c.RetryBudget, c.Status = 1, tc.status
		in := withFacts(&Snapshot{Mission: "m1", Task: "t1", Contract: c, Record: withHistory(t, gateRun("fail", 0, vocab.CauseEvalFailed)), Policy: policy.Default()})
		res := &Result{Verdict: vocab.VerdictError, Causes: []Cause{{Code: vocab.CauseStateIneligible, Check: "state_eligible", Detail: "d"}}}
		assert.False(t, Budget(in, res), "no new escalation")
		assert.Equal(t, tc.next, res.NextAction, "status %s", tc.status)
		if tc.status == vocab.Escalated {
			require.Len(t, res.Notes, 1)
			assert.Contains(t, res.Notes[0], "task t1 is escalated: an authority decides (the pending decision under .geas/missions/m1/decisions/pending)")
		} else {
			assert.Empty(t, res.Notes)
		}
	}
}
