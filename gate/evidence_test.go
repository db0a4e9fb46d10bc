package gate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --strict refuses evidence with an entry that counts for nothing and writes nothing; without it
// the file is written with the warning; honest evidence is written without one either way.
func TestStrictEvidenceRefusesEntriesThatCountForNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	tk := f.task()
	typo := []byte(`{"summary":"s","verdict":"pass","criteria_results":[{"criterion":"AC3","passed":true}],"rubric_scores":[{"dimension":"codequality","score":4}]}`)
	_, err := AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-typo", Payload: typo, Strict: true})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "criteria_results entry 'AC3' of qa-typo.json matches no criterion of the contract (AC1, readme)")
	assert.Contains(t, err.Error(), "did you mean code_quality?")
	assert.NoFileExists(t, f.Path(".geas/"+testTaskDir+"/evidence/qa-typo.json"))

	done, err := AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-typo", Payload: typo})
	require.NoError(t, err)
	assert.Len(t, done.Warnings, 2)
	assert.FileExists(t, f.Path(".geas/"+testTaskDir+"/evidence/qa-typo.json"))

	honest := []byte(`{"summary":"s","verdict":"pass","criteria_results":[{"criterion":"AC1","passed":true}],"rubric_scores":[{"dimension":"core_interaction","score":4}]}`)
	done, err = AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-honest", Payload: honest, Strict: true})
	require.NoError(t, err)
	assert.Empty(t, done.Warnings)
}

// Entries that cannot be checked are never taken as checked: without a readable contract the file
// is written with a warning that says so, and --strict refuses it.
func TestEvidenceEntriesUncheckedWithoutAContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	tk := f.task()
	f.Write(".geas/"+testTaskDir+"/contract.json", "{")
	payload := []byte(`{"summary":"s","verdict":"pass","criteria_results":[{"criterion":"AC1","passed":true}]}`)
	_, err := AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-2", Payload: payload, Strict: true})
	require.ErrorContains(t, err, "evidence not written: --strict checks its entries against the contract, which cannot be read")
	assert.NoFileExists(t, f.Path(".geas/"+testTaskDir+"/evidence/qa-2.json"))

	done, err := AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-2", Payload: payload})
	require.NoError(t, err)
	require.Len(t, done.Warnings, 1)
	assert.Contains(t, done.Warnings[0], "entries not checked against the contract, which cannot be read")
	assert.FileExists(t, f.Path(".geas/"+testTaskDir+"/evidence/qa-2.json"))
}

// Thirty entries that count for nothing give twenty warnings and a count of the rest; --strict
// counts them all.
func TestEvidenceEntryWarningsAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	tk := f.task()
	payload := []byte(`{"summary":"s","verdict":"pass","criteria_results":[` + strings.Repeat(`{"criterion":"AC9","passed":true},`, 29) + `{"criterion":"AC9","passed":true}]}`)
	done, err := AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-2", Payload: payload})
	require.NoError(t, err)
	require.Len(t, done.Warnings, maxEntryWarnings+1)
	assert.Equal(t, "and 10 more entries that count for nothing", done.Warnings[maxEntryWarnings])
	_, err = AddEvidence(t.Context(), tk, EvidenceOptions{Agent: "qa-engineer", Role: "tester", Name: "qa-3", Payload: payload, Strict: true})
	require.ErrorContains(t, err, "30 entries count for nothing")
}
