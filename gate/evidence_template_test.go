package gate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

func (f *fixture) task() Task {
	return Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
}

// The skeleton holds what the gate counts for the agent: for a tester the criteria judged by
// evidence under the ids they bind by, and the dimensions whose scores by that agent count, nothing it would
// warn about, and it is valid evidence as printed.
func TestAnEvidenceTemplateHoldsWhatTheGateCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	tk := f.task()
	tests := []struct {
		agent    string
		role     vocab.Role
		wantRole vocab.Role
		dims     []string
	}{
		{"qa-engineer", "", vocab.Tester, []string{"core_interaction"}},
		{"design-authority", "", vocab.Reviewer, []string{"code_quality"}},
		{"design-authority-review", "", vocab.Reviewer, []string{"code_quality"}},
		{"software-engineer", "", vocab.Implementer, nil},
		{"software-engineer", vocab.Tester, vocab.Tester, nil}, // the builder's scores never count, whatever its role
		{"design-authority", vocab.Tester, vocab.Tester, []string{"code_quality"}},
		{"security-engineer", "", vocab.Reviewer, nil},
		{"qa-engineer", vocab.Authority, vocab.Authority, []string{"core_interaction"}},
	}
	for _, tc := range tests {
		sk, err := EvidenceTemplate(tk, TemplateOptions{Agent: tc.agent, Role: tc.role})
		require.NoError(t, err)
		assert.Equal(t, tc.wantRole, sk.Role, tc.agent)
		if tc.wantRole == vocab.Tester {
			assert.Equal(t, []string{"AC1"}, sk.Criteria, "the readme criterion has a detector")
		} else {
			assert.Empty(t, sk.Criteria, "only a tester is asked for criteria_results")
		}
		assert.Equal(t, tc.dims, sk.Dimensions, tc.agent)
		e, err := evidence.Parse(tc.agent+".json", sk.File)
		require.NoError(t, err, string(sk.File))
		assert.Equal(t, tc.agent, e.Agent)
		assert.Equal(t, testTask, e.TaskID)
		assert.Equal(t, tc.wantRole, e.Role)
		warns, err := CheckEntries(tk, e)
		require.NoError(t, err)
		assert.Empty(t, warns, string(sk.File))
	}
}

// Written unfilled, a skeleton counts against the work: its criterion fails, its score is below
// every threshold and its verdict refuses. Filled in, the same skeleton passes the gate.
func TestAnUnfilledTemplateNeverPasses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	tk := f.task()
	write := func(agent string, fill bool) {
		sk, err := EvidenceTemplate(tk, TemplateOptions{Agent: agent})
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(sk.File, &m))
		if fill {
			m["summary"] = "checked"
			m["verdict"] = map[vocab.Role]string{vocab.Tester: "pass", vocab.Reviewer: "approved"}[sk.Role]
			results, _ := m["criteria_results"].([]any)
			for _, r := range results {
				r.(map[string]any)["passed"] = true
			}
			scores, _ := m["rubric_scores"].([]any)
			for _, s := range scores {
				s.(map[string]any)["score"] = 5
			}
		}
		m["provider_id"] = "provider-" + agent
		f.WriteEvidence(agent+".json", m)
	}
	write("qa-engineer", false)
	write("design-authority", false)
	_, res, _ := f.evaluate(tiers.Options{Now: testNow, DryRun: true, KeepGoing: true})
	assert.Equal(t, vocab.VerdictFail, res.Verdict)
	assert.Equal(t, StatusFail, findCheck(t, res.Checks, "verdict:qa-engineer.json").Status)
	assert.Equal(t, StatusFail, findCheck(t, res.Checks, "verdict:design-authority.json").Status)
	assert.Equal(t, StatusFail, findCheck(t, res.Checks, "criterion:AC1").Status)
	assert.Equal(t, StatusFail, findCheck(t, res.Checks, "rubric:core_interaction").Status)
	assert.Equal(t, StatusFail, findCheck(t, res.Checks, "rubric:code_quality").Status)

	write("qa-engineer", true)
	write("design-authority", true)
	_, res, _ = f.evaluate(tiers.Options{Now: testNow, DryRun: true})
	assert.True(t, res.Verdict.IsPass(), "%s %+v", res.Verdict, res.Causes)
}
