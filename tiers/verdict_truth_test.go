package tiers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The tests in this file are named after SPEC §2 invariants 1 and 8 as issue 8 and 9 sharpened
// them: what is read is what was checked; a refusal is not approval; the builder cannot handle its
// own risk; one result binds one criterion; stale evidence does not count.

// TestWhatIsReadIsWhatWasChecked (SPEC §2.8): every input is decoded exactly as its schema
// validated it. A key equal to a field only under case folding makes the file invalid, naming the
// pointer, instead of being read by encoding/json's case-insensitive matching.
func TestWhatIsReadIsWhatWasChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(f *fixture)
		verdict Verdict
		code    string
		want    string // in the evidence of some check
	}{
		{"a failed criterion with a Passed:true twin", func(f *fixture) {
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "Passed": true}}
			})
		}, VerdictBlock, CauseEvidenceInvalid, `/criteria_results/0/Passed: key "Passed" differs from the field "passed" only by letter case`},
		{"an implementer posing as a tester by upper-case keys", func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) { m["ROLE"] = "tester"; m["AGENT"] = "qa-engineer" })
		}, VerdictBlock, CauseEvidenceInvalid, `/AGENT: key "AGENT" differs from the field "agent"`},
		{"rubric scores under a folded name", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) {
				m["ruBriC_sCores"] = []any{map[string]any{"dimension": "code_quality", "score": 9}}
			})
		}, VerdictBlock, CauseEvidenceInvalid, `/ruBriC_sCores`},
		{"a Kelvin sign folds like k", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) { m["ris\u212a_handling"] = []any{} })
		}, VerdictBlock, CauseEvidenceInvalid, "/ris\u212a_handling"},
		{"contract eval commands under a folded name", func(f *fixture) {
			f.contract(func(m map[string]any) { m["Eval_Commands"] = []string{"false"} })
		}, VerdictError, CauseContractInvalid, `/Eval_Commands`},
		{"a criterion check under a folded name", func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["acceptance_criteria"] = []any{map[string]any{"criterion": "x", "Check": map[string]any{"type": "file_exists", "path": "nope"}}}
			})
		}, VerdictError, CauseContractInvalid, `/acceptance_criteria/0/Check`},
		{"a confidence twin in self_check", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["Confidence"] = 5 })
		}, VerdictError, CauseRecordInvalid, `/self_check/Confidence`},
		{"an integration status twin", func(f *fixture) {
			f.record(func(m map[string]any) { m["integration"].(map[string]any)["STATUS"] = "merged" })
		}, VerdictError, CauseRecordInvalid, `/integration/STATUS`},
		{"a policy shared_globs twin", func(f *fixture) {
			f.write(".geas/gate-policy.json", `{"Shared_Globs": ["*"]}`)
		}, VerdictError, CausePolicyInvalid, `/Shared_Globs`},
		{"a debt item status twin", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "stale cache", "status": "deferred", "debt_id": "d1"}}
			})
			f.write(".geas/missions/m1/evolution/debt-register.json", `{"version":"1.0","artifact_type":"debt_register","artifact_id":"debt-m1","producer_type":"design-authority","scope":"mission","items":[{"debt_id":"d1","title":"t","status":"resolved","Status":"open"}]}`)
		}, VerdictError, CauseRiskUnhandled, `/items/0/Status`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.edit(f)
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.verdict, tc.code)
			found := false
			for _, c := range res.Checks {
				if strings.Contains(c.Evidence, tc.want) {
					found = true
				}
			}
			assert.True(t, found, "no check names %q: %+v", tc.want, res.Checks)
		})
	}
	t.Run("control: exact keys pass", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		assertPass(t, f.gate())
	})
}

// TestARefusingReviewIsNotApproval (SPEC §2.1, §5.1): a required reviewer that refuses
// (changes_requested, blocked) or a tester that does not pass the work (v1.0 iterate, escalate;
// v1.3 fail, block, error) is never read as approval, and one refusal among several files of an
// agent type is a refusal.
func TestARefusingReviewIsNotApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, verdict string
		want          Verdict
		code          string
	}{
		{"design-authority.json", "changes_requested", VerdictFail, CauseReviewRejected},
		{"design-authority.json", "blocked", VerdictBlock, CauseReviewBlocked},
		{"qa-engineer.json", "iterate", VerdictFail, CauseReviewRejected},
		{"qa-engineer.json", "fail", VerdictFail, CauseReviewRejected},
		{"qa-engineer.json", "escalate", VerdictBlock, CauseReviewBlocked},
		{"qa-engineer.json", "block", VerdictBlock, CauseReviewBlocked},
		{"qa-engineer.json", "error", VerdictBlock, CauseReviewBlocked},
	}
	for _, tc := range tests {
		t.Run(tc.file+" "+tc.verdict, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.evidence(tc.file, func(m map[string]any) { m["verdict"] = tc.verdict })
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.want, tc.code)
			c := findCheck(t, res.Checks, "verdict:"+tc.file)
			assert.Equal(t, tc.code, c.Code)
			assert.Contains(t, c.Evidence, fmt.Sprintf("wrote %s with verdict %q", tc.file, tc.verdict))
		})
	}
	t.Run("one refusal among several files of a type", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.writeEvidence("design-authority-review.json", map[string]any{
			"version": "1.0", "agent": "design-authority-review", "task_id": "t1", "role": "reviewer",
			"summary": "the flag leaks secrets", "verdict": "changes_requested", "concerns": []string{"secrets"},
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, VerdictFail, CauseReviewRejected)
		c := findCheck(t, res.Checks, "verdict:design-authority-review.json")
		assert.Contains(t, c.Evidence, "design-authority-review (agent type design-authority), role reviewer")
	})
	t.Run("a tester that is not a required reviewer", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.writeEvidence("security-engineer.json", map[string]any{
			"version": "1.0", "agent": "security-engineer", "task_id": "t1", "role": "tester",
			"summary": "injection", "verdict": "fail", "criteria_results": []any{},
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, VerdictFail, CauseReviewRejected)
	})
	t.Run("control: approvals and a passing tester", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		_, res, _ := f.evaluate()
		assertPass(t, res)
		c := findCheck(t, res.Checks, "review_verdicts")
		assert.Equal(t, "verdicts read: design-authority.json approved, qa-engineer.json pass", c.Evidence)
	})
}
