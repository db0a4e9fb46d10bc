package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

func TestIndexForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix, text string
		n            int
		ok           bool
	}{
		{"AC", "3", 3, true},
		{"AC", "AC3", 3, true},
		{"AC", "ac3", 3, true},
		{"AC", "AC-3", 3, true},
		{"AC", "AC 3", 3, true},
		{"AC", "  AC3  ", 3, true},
		{"AC", "AC3 isTTY guard", 3, true},
		{"AC", "AC3: isTTY guard", 3, true},
		{"AC", "3 retries at most", 0, false},
		{"AC", "3 failed logins lock the account", 0, false},
		{"AC", "3: lockout", 3, true},
		{"AC", "3. lockout", 3, true},
		{"AC", "3) lockout", 3, true},
		{"AC", "3 - lockout", 3, true},
		{"AC", "3.5 seconds", 0, false},
		{"AC", "3-4 retries", 0, false},
		{"AC", "AC3.", 3, true},
		{"AC", "AC12", 12, true},
		{"AC", "AC30", 30, true},
		{"AC", "AC0", 0, false},
		{"AC", "3D rendering", 0, false},
		{"AC", "AC3x", 0, false},
		{"AC", "AC_3", 0, false},
		{"AC", "ACME 3", 0, false},
		{"AC", "R3", 0, false},
		{"AC", "criterion 3", 0, false},
		{"AC", "", 0, false},
		{"R", "R1", 1, true},
		{"R", "r-2", 2, true},
		{"R", "risk 1", 1, true},
		{"R", "Risk-4 stale cache", 4, true},
		{"R", "R10", 10, true},
		{"R", "AC1", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.prefix+"/"+tc.text, func(t *testing.T) {
			n, ok := indexForm(tc.prefix, tc.text)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.n, n)
		})
	}
}

func TestCriterionMatches(t *testing.T) {
	t.Parallel()
	third := contract.Criterion{Criterion: "The README documents --verbose"} // criterion 3, no id
	withID := contract.Criterion{ID: "readme", Criterion: "The README documents --verbose"}
	first := contract.Criterion{Criterion: "prints the configuration"}
	second := contract.Criterion{Criterion: "masks secrets"}
	tests := []struct {
		name   string
		result evidence.CriterionResult
		idx    int
		c      contract.Criterion
		match  bool
	}{
		{"by id", evidence.CriterionResult{ID: "readme", Criterion: "whatever"}, 3, withID, true},
		{"id written as the text", evidence.CriterionResult{Criterion: "readme"}, 3, withID, true},
		{"bare index", evidence.CriterionResult{Criterion: "3"}, 3, third, true},
		{"AC3", evidence.CriterionResult{Criterion: "AC3"}, 3, third, true},
		{"AC-3", evidence.CriterionResult{Criterion: "AC-3"}, 3, third, true},
		{"AC 3", evidence.CriterionResult{Criterion: "AC 3"}, 3, third, true},
		{"AC3 followed by text", evidence.CriterionResult{Criterion: "AC3 isTTY guard"}, 3, third, true},
		{"3: followed by text", evidence.CriterionResult{Criterion: "3: lockout"}, 3, third, true},
		{"3) followed by text", evidence.CriterionResult{Criterion: "3) lockout"}, 3, third, true},
		{"3 - followed by text", evidence.CriterionResult{Criterion: "3 - lockout"}, 3, third, true},
		{"index in the entry id", evidence.CriterionResult{ID: "AC3", Criterion: "something else"}, 3, third, true},
		{"index against a criterion with an id", evidence.CriterionResult{Criterion: "AC3"}, 3, withID, true},
		{"normalized text", evidence.CriterionResult{Criterion: "  the readme   DOCUMENTS\t--verbose "}, 3, third, true},
		{"normalized text with an id", evidence.CriterionResult{Criterion: "the README documents --verbose"}, 3, withID, true},

		{"3 followed by a word is text", evidence.CriterionResult{Criterion: "3 failed logins lock the account"}, 3, third, false},
		{"AC30 is not criterion 3", evidence.CriterionResult{Criterion: "AC30"}, 3, third, false},
		{"30 is not criterion 3", evidence.CriterionResult{Criterion: "30"}, 3, third, false},
		{"13 is not criterion 3", evidence.CriterionResult{Criterion: "AC13"}, 3, third, false},
		{"3D rendering is not criterion 3", evidence.CriterionResult{Criterion: "3D rendering"}, 3, third, false},
		{"3.5 is not criterion 3", evidence.CriterionResult{Criterion: "3.5 seconds at most"}, 3, third, false},
		{"an id binds by id only", evidence.CriterionResult{ID: "AC2", Criterion: "The README documents --verbose"}, 3, third, false},
		{"another id", evidence.CriterionResult{ID: "docs", Criterion: "AC3"}, 3, withID, false},
		{"a prefix of the text", evidence.CriterionResult{Criterion: "The README documents"}, 3, third, false},
		{"empty text", evidence.CriterionResult{Criterion: ""}, 3, contract.Criterion{Criterion: ""}, false},
		{"id match is exact", evidence.CriterionResult{ID: "README"}, 3, withID, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBinder("AC", criteriaItems([]contract.Criterion{first, second, tc.c}))
			bd := b.bind(tc.result.ID, tc.result.Criterion)
			assert.Equal(t, tc.match, bd.item == tc.idx-1, "bound to %d by %s", bd.item, bd.rule)
		})
	}
}

func TestPartACriteriaByEvidence(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	results := func(e *evidence.Evidence, rs ...evidence.CriterionResult) *evidence.Evidence {
		e.CriteriaResults = rs
		return e
	}
	ok := func(text string) evidence.CriterionResult {
		return evidence.CriterionResult{Criterion: text, Passed: true, Details: "checked by hand"}
	}
	bad := func(text string) evidence.CriterionResult {
		return evidence.CriterionResult{Criterion: text, Passed: false}
	}

	tests := []struct {
		name     string
		ev       []*evidence.Evidence
		status   Status
		code     vocab.CauseCode
		evidence string
	}{
		{"independent pass", []*evidence.Evidence{results(qa(), ok("AC1"))},
			StatusPass, "", "qa-engineer.json passed (checked by hand)"},
		{"any independent fail", []*evidence.Evidence{results(qa(), ok("AC1")), results(design(), bad("1"))},
			StatusFail, vocab.CauseCriterionFailed, "design-authority.json failed; qa-engineer.json passed"},
		{"no entry", []*evidence.Evidence{results(qa(), ok("AC2"))},
			StatusBlock, vocab.CauseCriterionUnverified, "no independent criteria_results entry for AC1"},
		{"only the implementer's claim", []*evidence.Evidence{results(builder(), ok("AC1"))},
			StatusBlock, vocab.CauseCriterionUnverified, "the implementer's own claim is not counted: software-engineer.json passed"},
		{"the implementer's pass does not outvote a fail", []*evidence.Evidence{results(builder(), ok("AC1")), results(qa(), bad("AC1"))},
			StatusFail, vocab.CauseCriterionFailed, "qa-engineer.json failed"},
		{"the primary worker type in another role", []*evidence.Evidence{results(ev("software-engineer-review.json", "software-engineer-review", vocab.Reviewer, "provider-z"), ok("AC1"))},
			StatusBlock, vocab.CauseCriterionUnverified, "software-engineer-review.json passed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := unitContract()
			c.AcceptanceCriteria = []contract.Criterion{{Criterion: "--verbose prints the configuration"}}
			r := u.run(c, nil, tc.ev...)
			checks := partA(t.Context(), r).checks
			ch := findCheck(t, checks, "criterion:AC1")
			assert.Equal(t, tc.status, ch.Status, ch.Evidence)
			assert.Equal(t, tc.code, ch.Code)
			assert.Contains(t, ch.Evidence, tc.evidence)
			assert.Equal(t, `AC1 "--verbose prints the configuration" is confirmed by independent evidence`, ch.Text)
		})
	}
}

func TestPartAOneCheckPerCriterion(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	u.write("README.md", "--verbose\n")
	c := unitContract()
	c.AcceptanceCriteria = []contract.Criterion{
		{Criterion: "first"},
		{ID: "readme", Criterion: "second", Check: &contract.Detector{Type: "regex_match", Artifact: "README.md", Pattern: "--verbose"}},
		{Criterion: "third"},
	}
	e := qa()
	e.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC1", Passed: true}, {Criterion: "third", Passed: true}}
	r := u.run(c, nil, e)
	checks := partA(t.Context(), r).checks
	assert.Equal(t, []string{"criterion:AC1=pass", "criterion:readme=pass", "criterion:AC3=pass"}, checkNames(checks))
}
