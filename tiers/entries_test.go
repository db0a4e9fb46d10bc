package tiers

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// typoContract has two criteria (the first without an id, so AC1; the second with id "readme")
// and two dimensions.
func typoContract() *contract.Contract {
	c := unitContract()
	c.AcceptanceCriteria = []contract.Criterion{
		{Criterion: "--verbose prints the configuration"},
		{ID: "readme", Criterion: "The README documents --verbose"},
	}
	c.Rubric.Dimensions = []contract.Dimension{{Name: "core_interaction", Threshold: 3}, {Name: "code_quality", Threshold: 3}}
	return c
}

func TestEntryProblemsNameWhatMatchesNothing(t *testing.T) {
	t.Parallel()
	cr := func(id, text string) evidence.CriterionResult {
		return evidence.CriterionResult{ID: id, Criterion: text, Passed: true}
	}
	tests := []struct {
		name    string
		result  *evidence.CriterionResult
		score   string
		kind    string
		suggest string
		message string
	}{
		{name: "an index past the last criterion", result: &evidence.CriterionResult{Criterion: "AC3", Passed: true}, kind: EntryUnmatched,
			message: "criteria_results entry 'AC3' of qa-engineer.json matches no criterion of the contract (AC1, readme)"},
		{name: "an id past the last criterion", result: &evidence.CriterionResult{ID: "AC3", Criterion: "x"}, kind: EntryUnmatched,
			message: "criteria_results id 'AC3' of qa-engineer.json matches no criterion of the contract (AC1, readme)"},
		{name: "an id in another case", result: ptr(cr("ac1", "")), kind: EntryUnmatched, suggest: "AC1"},
		{name: "an index as the id of a criterion with an id", result: ptr(cr("AC2", "")), kind: EntryUnmatched, suggest: "readme"},
		{name: "an id with a dash", result: ptr(cr("AC-1", "")), kind: EntryUnmatched, suggest: "AC1"},
		{name: "an id in Cyrillic look-alikes", result: ptr(cr("\u0410\u04211", "")), kind: EntryUnmatched, suggest: "AC1",
			message: "U+0410 U+0421"},
		{name: "an id in fullwidth letters", result: ptr(cr("ＲＥＡＤＭＥ", "")), kind: EntryUnmatched, suggest: "readme"},
		{name: "an id with a zero-width space", result: ptr(cr("read\u200bme", "")), kind: EntryUnmatched, suggest: "readme", message: "U+200B"},
		{name: "a misspelt id", result: ptr(cr("redme", "")), kind: EntryUnmatched, suggest: "readme"},
		{name: "a misspelt text", result: ptr(cr("", "--verbose prints the configuraton")), kind: EntryUnmatched,
			suggest: `AC1 "--verbose prints the configuration"`},
		{name: "an unrelated text", result: ptr(cr("", "the tests pass")), kind: EntryUnmatched},
		{name: "a dimension run together", score: "codequality", kind: EntryUnmatched, suggest: "code_quality",
			message: "rubric_scores entry 'codequality' of qa-engineer.json matches no dimension of the contract (core_interaction, code_quality); did you mean code_quality?"},
		{name: "a dimension in words", score: "Code Quality", kind: EntryUnmatched, suggest: "code_quality"},
		{name: "a dimension with white space", score: " code_quality", kind: EntryUnmatched, suggest: "code_quality"},
		{name: "a misspelt dimension", score: "core_interacton", kind: EntryUnmatched, suggest: "core_interaction"},
		{name: "an unknown dimension", score: "performance", kind: EntryUnmatched},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := qa()
			if tc.result != nil {
				e.CriteriaResults = []evidence.CriterionResult{*tc.result}
			} else {
				e.RubricScores = []evidence.RubricScore{{Dimension: tc.score, Score: 4}}
			}
			ps := EntryProblems(typoContract(), e)
			require.Len(t, ps, 1)
			p := ps[0]
			assert.Equal(t, tc.kind, p.Kind)
			assert.Equal(t, tc.suggest, p.Suggest, p.Message)
			assert.Contains(t, p.Message, tc.message)
			if tc.suggest != "" {
				assert.Contains(t, p.Message, "did you mean "+tc.suggest+"?")
			} else {
				assert.NotContains(t, p.Message, "did you mean")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestEntryProblemsHonestEntriesHaveNone(t *testing.T) {
	t.Parallel()
	e := qa()
	e.CriteriaResults = []evidence.CriterionResult{
		{Criterion: "AC1", Passed: true}, {ID: " readme ", Criterion: "docs", Passed: true},
	}
	e.RubricScores = []evidence.RubricScore{{Dimension: "core_interaction", Score: 4}, {Dimension: "code_quality", Score: 3}}
	assert.Empty(t, EntryProblems(typoContract(), e))
	for _, text := range []string{"1", "AC-1: prints", "  --VERBOSE prints   the configuration ", "readme"} {
		e.CriteriaResults = []evidence.CriterionResult{{Criterion: text, Passed: true}}
		assert.Empty(t, EntryProblems(typoContract(), e), text)
	}
}

func TestEntryProblemsNameDuplicatesAndAmbiguity(t *testing.T) {
	t.Parallel()
	e := qa()
	e.CriteriaResults = []evidence.CriterionResult{
		{Criterion: "AC1", Passed: true}, {Criterion: "--verbose prints the configuration", Passed: false},
	}
	e.RubricScores = []evidence.RubricScore{{Dimension: "code_quality", Score: 4}, {Dimension: "code_quality", Score: 2}}
	ps := EntryProblems(typoContract(), e)
	require.Len(t, ps, 2)
	assert.Equal(t, EntryDuplicate, ps[0].Kind)
	assert.Equal(t, 1, ps[0].Index)
	assert.Contains(t, ps[0].Message, "binds to AC1, as entry 'AC1' does")
	assert.Equal(t, EntryDuplicate, ps[1].Kind)
	assert.Contains(t, ps[1].Message, "scores code_quality again (as entry 0 does): the lowest counts")

	c := typoContract()
	c.AcceptanceCriteria = append(c.AcceptanceCriteria, contract.Criterion{Criterion: "--verbose prints the configuration"})
	e.CriteriaResults = []evidence.CriterionResult{{Criterion: "--verbose prints the configuration", Passed: true}}
	e.RubricScores = nil
	ps = EntryProblems(c, e)
	require.Len(t, ps, 1)
	assert.Equal(t, EntryAmbiguous, ps[0].Kind)
	assert.Contains(t, ps[0].Message, "by text it would bind to AC1 and AC3, so it binds to none")
}

// A typo is named, never counted: the entry that only looks like AC1 leaves AC1 unverified, the
// check's evidence names it with what it was meant for, and the honest entry beside it confirms
// the criterion.
func TestACriterionTypoIsNamedNeverCounted(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	c := unitContract()
	c.AcceptanceCriteria = []contract.Criterion{{Criterion: "--verbose prints the configuration"}, {Criterion: "masks secrets"}}
	for _, typo := range []evidence.CriterionResult{
		{Criterion: "AC3", Passed: true},
		{ID: "ac1", Criterion: "x", Passed: true},
		{ID: "\u0410\u04211", Criterion: "x", Passed: true},
		{Criterion: "\u0410\u04211", Passed: true},
		{Criterion: "--verbose prints the configuraton", Passed: true},
	} {
		e := qa()
		e.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC2", Passed: true}, typo}
		ch := findCheck(t, partA(t.Context(), u.run(c, nil, builder(), e)).checks, "criterion:AC1")
		assert.Equal(t, StatusBlock, ch.Status, ch.Evidence)
		assert.Equal(t, vocab.CauseCriterionUnverified, ch.Code)
		assert.Contains(t, ch.Evidence, "no independent criteria_results entry for AC1; criteria_results ")
		assert.Contains(t, ch.Evidence, "of qa-engineer.json matches no criterion of the contract (AC1, AC2)")
		if typo.Criterion != "AC3" {
			assert.Contains(t, ch.Evidence, "did you mean AC1")
		}
		assert.Equal(t, StatusPass, findCheck(t, partA(t.Context(), u.run(c, nil, builder(), e)).checks, "criterion:AC2").Status)

		honest := qa()
		honest.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC1", Passed: true}, {Criterion: "AC2", Passed: true}, typo}
		ch = findCheck(t, partA(t.Context(), u.run(c, nil, builder(), honest)).checks, "criterion:AC1")
		assert.Equal(t, StatusPass, ch.Status, ch.Evidence)
		assert.NotContains(t, ch.Evidence, "matches no criterion", "a confirmed criterion names no typo")
	}
}

// The implementer's own entries never count, typo or not: they are not named as if they could.
func TestABuildersUnmatchedEntryIsNotNamed(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	c := typoContract()
	b := builder()
	b.CriteriaResults = []evidence.CriterionResult{{Criterion: "AC9", Passed: true}}
	ch := findCheck(t, partA(t.Context(), u.run(c, nil, b, qa())).checks, "criterion:AC1")
	assert.Equal(t, StatusBlock, ch.Status)
	assert.NotContains(t, ch.Evidence, "AC9")
}

// Naming is bounded: thousands of entries that match nothing name five and count the rest.
func TestUnmatchedEntriesNamedAreBounded(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	c := typoContract()
	e := qa()
	for range 3000 {
		e.CriteriaResults = append(e.CriteriaResults, evidence.CriterionResult{Criterion: "nothing like it", Passed: true})
	}
	ch := findCheck(t, partA(t.Context(), u.run(c, nil, builder(), e)).checks, "criterion:AC1")
	assert.Equal(t, StatusBlock, ch.Status)
	assert.Equal(t, maxUnmatchedNamed, strings.Count(ch.Evidence, "matches no criterion"))
	assert.Contains(t, ch.Evidence, "and 2995 more entries that match no criterion")
}

// A dimension typo is named, never counted: the score meant for code_quality leaves it
// score_missing, and the check names the entry with what it was meant for.
func TestADimensionTypoIsNamedNeverCounted(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	c := typoContract()
	c.Rubric.Dimensions = []contract.Dimension{{Name: "code_quality", Threshold: 3, Evaluators: []string{"qa-engineer"}}}
	rec := unitRecord(t, map[string]any{"self_check": selfCheck(4, nil)})
	for _, typo := range []string{"codequality", "Code Quality", "code_quality ", "code_qualty", "c\u043ede_quality"} {
		ch := findCheck(t, partD(u.run(c, rec, builder(), scores(qa(), typo, 5))).checks, "rubric:code_quality")
		assert.Equal(t, StatusBlock, ch.Status, ch.Evidence)
		assert.Equal(t, vocab.CauseScoreMissing, ch.Code)
		assert.Contains(t, ch.Evidence, "qa-engineer.json gives no score for code_quality; rubric_scores entry '")
		assert.Contains(t, ch.Evidence, "did you mean code_quality?")

		ch = findCheck(t, partD(u.run(c, rec, builder(), scores(qa(), typo, 5, "code_quality", 4))).checks, "rubric:code_quality")
		assert.Equal(t, StatusPass, ch.Status, ch.Evidence)
		assert.Equal(t, "score 4 (minimum of qa-engineer.json 4)", ch.Evidence, "the typo's 5 is not counted")
	}
}

// A file of many typos costs what fifty do: past maxSuggested an entry is named without a
// suggestion, and the contract's criteria are listed once, at most ten of them.
func TestEntryProblemsAreBounded(t *testing.T) {
	t.Parallel()
	c := unitContract()
	for i := range 200 {
		c.AcceptanceCriteria = append(c.AcceptanceCriteria, contract.Criterion{Criterion: fmt.Sprintf("the greeter handles case number %d", i)})
	}
	e := qa()
	for range 20000 {
		e.CriteriaResults = append(e.CriteriaResults, evidence.CriterionResult{Criterion: "the greeter handles case numbr 7", Passed: true})
	}
	start := time.Now()
	ps := EntryProblems(c, e)
	elapsed := time.Since(start)
	require.Len(t, ps, 20000)
	suggested := 0
	for _, p := range ps {
		if p.Suggest != "" {
			suggested++
		}
	}
	assert.Equal(t, maxSuggested, suggested)
	assert.Equal(t, `AC8 "the greeter handles case number 7"`, ps[0].Suggest)
	assert.Contains(t, ps[0].Message, "(AC1, AC2, AC3, AC4, AC5, AC6, AC7, AC8, AC9, AC10 and 190 more)")
	assert.Less(t, elapsed, 5*time.Second)
}

// A long value is cut between characters, so the sentence stays valid UTF-8 whatever the entry holds.
func TestAnEntryIsQuotedWholeCharacters(t *testing.T) {
	t.Parallel()
	e := qa()
	e.CriteriaResults = []evidence.CriterionResult{{Criterion: "x" + strings.Repeat("АС", 60), Passed: true}}
	ps := EntryProblems(typoContract(), e)
	require.Len(t, ps, 1)
	assert.True(t, utf8.ValidString(ps[0].Message), ps[0].Message)
	assert.Contains(t, ps[0].Message, "…' of qa-engineer.json")
}
