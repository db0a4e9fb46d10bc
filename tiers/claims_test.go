package tiers

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// TestClaimsAreCheckedAgainstMeasurements (SPEC §2 invariant 10, §5.2a.7): an independent file
// whose claim the gate's own measurement contradicts is named in a claim_contradicted warning, its
// criteria_results and rubric_scores stop counting in that run, and the verdict stays the
// measurement's fail (never the milder block that setting the liar aside could give). Each cheat
// has its honest control beside it.
func TestClaimsAreCheckedAgainstMeasurements(t *testing.T) {
	t.Parallel()
	breakReadme := func(f *fixture) {
		f.write("README.md", "# greeter\n")
		f.commit("readme without the flag")
	}
	claimReadme := func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = append(m["criteria_results"].([]any), map[string]any{"criterion": "The README documents --verbose", "passed": true, "details": "README documents it"})
		})
	}

	t.Run("a criterion claimed passed whose detector failed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		breakReadme(f)
		claimReadme(f)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		w := findCheck(t, res.Checks, "claims:qa-engineer.json")
		assert.Equal(t, StatusWarn, w.Status)
		assert.Equal(t, vocab.CauseClaimContradicted, w.Code)
		assert.Contains(t, w.Evidence, "claims criteria_results readme passed")
		assert.Contains(t, w.Evidence, "regex_match detector of readme failed")
		// AC1 rested on the liar alone: not counted, and a fail rather than a block.
		ac1 := findCheck(t, res.Checks, "criterion:AC1")
		assert.Equal(t, StatusFail, ac1.Status)
		assert.Equal(t, vocab.CauseCriterionUnverified, ac1.Code)
		assert.Contains(t, ac1.Evidence, "contradicted by the gate's measurements: qa-engineer.json")
		require.Len(t, res.ClaimsContradicted, 1)
		assert.Equal(t, "qa-engineer", res.ClaimsContradicted[0].Agent)
	})
	t.Run("control: the same failure with no false claim", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		breakReadme(f)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		assert.Equal(t, StatusPass, findCheck(t, res.Checks, "criterion:AC1").Status, "an honest tester's entry still counts")
		assert.Empty(t, res.ClaimsContradicted)
		assert.NotContains(t, causeCodes(res.Causes), vocab.CauseClaimContradicted)
	})
	t.Run("control: a claim the detector confirms", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		claimReadme(f)
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Empty(t, res.ClaimsContradicted)
	})

	t.Run("a tester's pass while an eval command failed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"echo FAIL: TestGreet; exit 1"} })
		_, res, _ := f.evaluate(Options{DryRun: true, Now: testNow, KeepGoing: true})
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseEvalFailed)
		require.Len(t, res.ClaimsContradicted, 1)
		c := res.ClaimsContradicted[0]
		assert.Equal(t, "verdict pass", c.Claim)
		assert.Contains(t, c.Measurement, "eval command 1")
		assert.Contains(t, c.Measurement, "exit")
		// The advisory part A no longer counts the tester's AC1 entry.
		ac1 := findCheck(t, res.Checks, "criterion:AC1")
		assert.True(t, ac1.Advisory)
		assert.NotEqual(t, StatusPass, ac1.Status)
		// Its rubric score is set aside too.
		assert.Contains(t, findCheck(t, res.Checks, "rubric:core_interaction").Evidence, "contradicted by the gate's measurements: qa-engineer.json")
	})
	t.Run("control: a tester's pass the eval commands confirm", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Empty(t, res.ClaimsContradicted)
	})

	metric := func(f *fixture, measured, claimed float64) {
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{map[string]any{"run": fmt.Sprintf("echo 'coverage: %g%%'", measured), "metrics": map[string]any{"coverage": `coverage: (\S+)`}}}
			m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any),
				map[string]any{"id": "cov", "criterion": "coverage", "check": map[string]any{"type": "threshold", "metric": "coverage", "op": "gte", "value": 80}})
		})
		f.evidence("design-authority.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": claimed} })
	}
	t.Run("a metric the fresh run did not reach", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		metric(f, 50, 95)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		w := findCheck(t, res.Checks, "claims:design-authority.json")
		assert.Contains(t, w.Evidence, "metric coverage = 95")
		assert.Contains(t, w.Evidence, "measured coverage = 50")
	})
	t.Run("control: a metric that agrees with the fresh run", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		metric(f, 50, 50)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		assert.Empty(t, res.ClaimsContradicted)
	})
}

// TestContradictedClaimsAreTalliedInTheHistory (SPEC §5.2a.7): a recorded run keeps, per agent,
// how many of its claims were contradicted, and the tally sums over the history.
func TestContradictedClaimsAreTalliedInTheHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["eval_commands"] = []any{"exit 1"} })
	res := f.gate()
	assertNotPass(t, res, vocab.VerdictFail, vocab.CauseEvalFailed)
	f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "ran it again" }) // a new attempt
	f.gate()
	rec := f.gather().Record
	require.NotNil(t, rec)
	h := rec.History()
	require.Len(t, h, 2)
	assert.JSONEq(t, `{"qa-engineer": 1}`, string(h[0].Extra[record.ClaimsContradictedKey]))
	assert.Equal(t, record.ClaimTally{"qa-engineer": 2}, record.ContradictedClaims(h))
	assert.Equal(t, "qa-engineer 2 claims", record.ContradictedClaims(h).String())

	// Control: a run with no contradiction records no tally.
	g := newFixture(t, true)
	g.gate()
	gh := g.gather().Record.History()
	require.Len(t, gh, 1)
	assert.NotContains(t, gh[0].Extra, record.ClaimsContradictedKey)
	assert.Empty(t, record.ContradictedClaims(gh))
}

// TestContradictionsAreBounded (SPEC §7.1): evidence files are the agents' to multiply, so a run
// lists at most maxContradictionsShown contradictions and counts the rest, and the history tally
// names at most maxTallyAgents agents.
func TestContradictionsAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["eval_commands"] = []any{"exit 1"} })
	for i := range 40 {
		f.writeEvidence(fmt.Sprintf("tester-%02d.json", i), map[string]any{
			"version": "1.0", "agent": fmt.Sprintf("tester-%02d", i), "task_id": testTask, "role": "tester",
			"summary": "all green", "verdict": "pass", "criteria_results": []any{},
		})
	}
	_, res, _ := f.evaluate()
	assertNotPass(t, res, vocab.VerdictFail, vocab.CauseEvalFailed)
	assert.Len(t, res.ClaimsContradicted, maxContradictionsShown)
	n := 0
	for _, c := range res.Checks {
		if c.Code == vocab.CauseClaimContradicted {
			n++
		}
	}
	assert.Equal(t, maxContradictionsShown+1, n, "one warning each up to the bound, then one that counts the rest")
	assert.Contains(t, findCheck(t, res.Checks, "claims:more").Evidence, "and 21 more contradicted claims")
	tally := res.claimTally
	assert.Len(t, tally, maxTallyAgents+1)
	assert.Equal(t, 21, tally[tallyOthers])
}
