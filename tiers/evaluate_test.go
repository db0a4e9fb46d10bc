package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// TestAStageIsAFunctionOfThePass: a stage reads the Pass and returns what it found; it keeps
// nothing in the Pass. Run twice on the same Pass, part A finds the same contradictions and
// returns the same checks, and the Pass's claims are still the ones it was given: a second run
// of a stage that appended to shared state would find the claims already set aside and list
// other checks. Parts C and D, over the claims part A returned, are as repeatable.
func TestAStageIsAFunctionOfThePass(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	c := unitContract()
	c.AcceptanceCriteria = []contract.Criterion{
		{Criterion: "coverage holds", Check: &contract.Detector{Type: contract.DetectThreshold, Metric: "coverage", Op: "gte", Value: 80}},
		{Criterion: "documented"},
	}
	c.Rubric.Dimensions = []contract.Dimension{{Name: "core_interaction", Threshold: 3}}
	liar := scores(qa(), "core_interaction", 5)
	liar.Metrics = map[string]float64{"coverage": 95}
	liar.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC1", Passed: true}, {Criterion: "AC2", Passed: true}}
	honest := scores(design(), "core_interaction", 4)
	honest.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC2", Passed: true}}
	pass := u.run(c, nil, builder(), liar, honest)
	pass.metrics["coverage"] = 50 // what tier 1 measured
	// A claim tier 1 contradicted, as the run records it before part A.
	pass.claims.contradict(ev("tester-2.json", "tester-2", vocab.Tester, "provider-d"), "verdict pass", "eval command 1 `make test` exited 1")
	pass.claims.warned = 1

	first := partA(t.Context(), pass)
	second := partA(t.Context(), pass)
	require.Len(t, first.claims.list, 2, "tier 1's claim, and the liar's criteria_results entry for AC1 (its file is then set aside)")
	assert.Equal(t, first.checks, second.checks)
	assert.Equal(t, first.claims, second.claims)
	assert.Len(t, pass.claims.list, 1, "the Pass keeps the claims it was given")
	assert.Len(t, pass.claims.setAside, 1, "the Pass keeps the files it set aside")
	assert.Equal(t, 1, pass.claims.warned)
	assert.Equal(t, StatusFail, findCheck(t, first.checks, "criterion:AC1").Status)
	assert.Equal(t, vocab.CauseClaimContradicted, findCheck(t, first.checks, "claims:qa-engineer.json").Code)

	// The run records part A's facts; the later stages read them, and read them again alike.
	pass.claims = first.claims
	assert.Equal(t, partC(pass), partC(pass))
	d1, d2 := partD(pass), partD(pass)
	assert.Equal(t, d1, d2)
	rubric := findCheck(t, d1.checks, "rubric:core_interaction")
	assert.Equal(t, StatusFail, rubric.Status, "its one evaluator is set aside: %s", rubric.Evidence)
	assert.Contains(t, rubric.Evidence, "not counted, their claims contradicted by the gate's measurements: qa-engineer.json")
	assert.Equal(t, []string{"core_interaction"}, d1.blockingDims)

	// Control: without the measurement nothing is contradicted, and the liar's score counts.
	pass = u.run(c, nil, builder(), liar, honest)
	clean := partA(t.Context(), pass)
	assert.Empty(t, clean.claims.list)
	pass.claims = clean.claims
	rubric = findCheck(t, partD(pass).checks, "rubric:core_interaction")
	assert.Equal(t, StatusPass, rubric.Status, rubric.Evidence)
}
