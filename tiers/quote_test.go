package tiers

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// TestSummedChecksKeepTheVerdict: whatever checks a run has, bounding them (each quote cut, the
// checks of a kind past the bound summed) leaves the verdict and the set of cause codes' worst
// status exactly as they were; the result is only smaller. Random runs of many kinds and sizes.
func TestSummedChecksKeepTheVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	statuses := []Status{StatusPass, StatusPass, StatusPass, StatusFail, StatusBlock, StatusError, StatusWarn, StatusSkipped}
	kinds := []string{"criterion", "risk", "risk_handling", "stale", "verdict", "budget"}
	for round := range 300 {
		n := r.IntN(400)
		checks := make([]Check, n)
		for i := range checks {
			st := statuses[r.IntN(len(statuses))]
			if r.IntN(20) > 0 && st != StatusWarn && st != StatusSkipped {
				st = StatusPass // mostly passing, as real runs are
			}
			c := Check{Name: fmt.Sprintf("%s:%d", kinds[r.IntN(len(kinds))], i), Tier: 2, Text: "t",
				Status: st, Passed: st == StatusPass, Blocking: st != StatusWarn && st != StatusSkipped && r.IntN(10) > 0,
				Evidence: strings.Repeat("e", r.IntN(3000)), Advisory: r.IntN(30) == 0}
			if st != StatusPass {
				c.Code = vocab.CauseCode("code_" + string(st))
			}
			checks[i] = c
		}
		before, beforeCauses := decide(bindingChecks(checks))
		bounded := boundChecks(checks)
		after, afterCauses := decide(bindingChecks(bounded))
		require.Equal(t, before, after, "round %d: %d checks", round, n)
		if len(beforeCauses) > 0 {
			assert.Equal(t, beforeCauses[0].status, afterCauses[0].status, "round %d: the worst cause", round)
		}
		assert.LessOrEqual(t, len(bounded), len(checks))
		perKind := map[string]int{}
		for _, c := range bounded {
			perKind[checkFamily(c)]++
		}
		for kind, k := range perKind {
			assert.LessOrEqual(t, k, maxChecksPerFamily+1, "round %d: kind %s", round, kind)
		}
	}
}

// bindingChecks is the checks decide folds: the advisory ones take no part in the verdict.
func bindingChecks(checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		if !c.Advisory {
			out = append(out, c)
		}
	}
	return out
}

// TestASummedCheckNamesWhatItSums: 200 risks of which one fails: 50 are reported one by one, the
// rest in one check that fails with the failing risk's cause, counts them and names it. The
// control: 40 risks (under the bound) are all reported one by one.
func TestASummedCheckNamesWhatItSums(t *testing.T) {
	risks := func(n, failing int) []Check {
		out := make([]Check, n)
		for i := range out {
			out[i] = passCheck(2, fmt.Sprintf("risk:R%d", i+1), "known risk handled", "mitigated per qa-engineer.json")
		}
		if failing >= 0 {
			out[failing] = failCheck(2, fmt.Sprintf("risk:R%d", failing+1), "known risk handled", "no handling for R", StatusFail, vocab.CauseRiskUnhandled)
		}
		return out
	}
	control := boundChecks(risks(40, -1))
	require.Len(t, control, 40)

	got := boundChecks(risks(200, 150))
	require.Len(t, got, maxChecksPerFamily+1)
	sum := got[maxChecksPerFamily]
	assert.Equal(t, "risk:+150 more", sum.Name)
	assert.Equal(t, StatusFail, sum.Status)
	assert.True(t, sum.Blocking)
	assert.Equal(t, vocab.CauseRiskUnhandled, sum.Code)
	assert.Contains(t, sum.Evidence, "149 pass")
	assert.Contains(t, sum.Evidence, "1 fail")
	assert.Contains(t, sum.Evidence, "risk_unhandled ×1")
	assert.Contains(t, sum.Evidence, "not passing: risk:R151")
	v, causes := decide(got)
	assert.Equal(t, vocab.VerdictFail, v)
	require.Len(t, causes, 1)
	assert.Equal(t, vocab.CauseRiskUnhandled, causes[0].Code)
}

// TestAQuoteIsCutAtACharacterBoundary: a long evidence string is cut to the bound, says how much
// was left out, and stays valid UTF-8; a short one is left alone (the control).
func TestAQuoteIsCutAtACharacterBoundary(t *testing.T) {
	short := "prints name and greeting"
	assert.Equal(t, short, cutText(short, maxCheckEvidenceBytes))
	long := strings.Repeat("é", maxCheckEvidenceBytes)
	got := cutText(long, maxCheckEvidenceBytes)
	assert.LessOrEqual(t, len(got), maxCheckEvidenceBytes)
	assert.True(t, utf8.ValidString(got))
	assert.Contains(t, got, "more bytes not shown")
}
