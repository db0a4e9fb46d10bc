package tiers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/vocab"
)

// The tests in this file are named after SPEC §2 invariants 1 and 8, in the sharper form the
// attacks on them called for: what is read is what was checked; a refusal is not approval; the builder cannot handle its
// own risk; one result binds one criterion; stale evidence does not count.

// TestWhatIsReadIsWhatWasChecked (SPEC §2.8): every input is decoded exactly as its schema
// validated it. A key equal to a field only under case folding makes the file invalid, naming the
// pointer, instead of being read by encoding/json's case-insensitive matching.
func TestWhatIsReadIsWhatWasChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(f *fixture)
		verdict vocab.Verdict
		code    vocab.CauseCode
		want    string // in the evidence of some check
	}{
		{"a failed criterion with a Passed:true twin", func(f *fixture) {
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "Passed": true}}
			})
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid, `/criteria_results/0/Passed: key "Passed" differs from the field "passed" only by letter case`},
		{"an implementer posing as a tester by upper-case keys", func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) { m["ROLE"] = "tester"; m["AGENT"] = "qa-engineer" })
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid, `/AGENT: key "AGENT" differs from the field "agent"`},
		{"rubric scores under a folded name", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) {
				m["ruBriC_sCores"] = []any{map[string]any{"dimension": "code_quality", "score": 9}}
			})
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid, `/ruBriC_sCores`},
		{"a Kelvin sign folds like k", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) { m["ris\u212a_handling"] = []any{} })
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid, "/ris\u212a_handling"},
		{"contract eval commands under a folded name", func(f *fixture) {
			f.contract(func(m map[string]any) { m["Eval_Commands"] = []string{"false"} })
		}, vocab.VerdictError, vocab.CauseContractInvalid, `/Eval_Commands`},
		{"a criterion check under a folded name", func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["acceptance_criteria"] = []any{map[string]any{"criterion": "x", "Check": map[string]any{"type": "file_exists", "path": "nope"}}}
			})
		}, vocab.VerdictError, vocab.CauseContractInvalid, `/acceptance_criteria/0/Check`},
		{"a confidence twin in self_check", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["Confidence"] = 5 })
		}, vocab.VerdictError, vocab.CauseRecordInvalid, `/self_check/Confidence`},
		{"an integration status twin", func(f *fixture) {
			f.record(func(m map[string]any) { m["integration"].(map[string]any)["STATUS"] = "merged" })
		}, vocab.VerdictError, vocab.CauseRecordInvalid, `integration.json: /STATUS`},
		{"a policy shared_globs twin", func(f *fixture) {
			f.write(".geas/gate-policy.json", `{"Shared_Globs": ["*"]}`)
		}, vocab.VerdictError, vocab.CausePolicyInvalid, `/Shared_Globs`},
		{"a debt item status twin", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "stale cache", "status": "deferred", "debt_id": "d1"}}
			})
			f.write(".geas/missions/m1/evolution/debt-register.json", `{"version":"1.0","artifact_type":"debt_register","artifact_id":"debt-m1","producer_type":"design-authority","scope":"mission","items":[{"debt_id":"d1","title":"t","status":"resolved","Status":"open"}]}`)
		}, vocab.VerdictError, vocab.CauseRiskUnhandled, `/items/0/Status`},
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
		want          vocab.Verdict
		code          vocab.CauseCode
	}{
		{"design-authority.json", "changes_requested", vocab.VerdictFail, vocab.CauseReviewRejected},
		{"design-authority.json", "blocked", vocab.VerdictBlock, vocab.CauseReviewBlocked},
		{"qa-engineer.json", "iterate", vocab.VerdictFail, vocab.CauseReviewRejected},
		{"qa-engineer.json", "fail", vocab.VerdictFail, vocab.CauseReviewRejected},
		{"qa-engineer.json", "escalate", vocab.VerdictBlock, vocab.CauseReviewBlocked},
		{"qa-engineer.json", "block", vocab.VerdictBlock, vocab.CauseReviewBlocked},
		{"qa-engineer.json", "error", vocab.VerdictBlock, vocab.CauseReviewBlocked},
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
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseReviewRejected)
		c := findCheck(t, res.Checks, "verdict:design-authority-review.json")
		assert.Contains(t, c.Evidence, "design-authority-review (agent type design-authority), role reviewer")
	})
	t.Run("a refusal under a case-folded agent name", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.writeEvidence("da-2.json", map[string]any{
			"version": "1.0", "agent": "Design-Authority", "task_id": "t1", "role": "reviewer",
			"summary": "no", "verdict": "blocked", "concerns": []string{"x"},
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseReviewBlocked)
		assert.Contains(t, findCheck(t, res.Checks, "verdict:da-2.json").Evidence, `Design-Authority, role reviewer, wrote da-2.json with verdict "blocked"`)
	})
	t.Run("a tester that is not a required reviewer", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.writeEvidence("security-engineer.json", map[string]any{
			"version": "1.0", "agent": "security-engineer", "task_id": "t1", "role": "tester",
			"summary": "injection", "verdict": "fail", "criteria_results": []any{},
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseReviewRejected)
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

// TestTheBuilderCannotHandleItsOwnRisk (SPEC §2.1, §5.3 C, §5.4): the implementer's own
// risk_handling is shown and never counts, whatever its status; a debt_id listed twice in the
// register is not a valid target; and provider ids are compared after trimming and case folding.
func TestTheBuilderCannotHandleItsOwnRisk(t *testing.T) {
	t.Parallel()
	withRisk := func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["known_risks"] = []string{"secrets in verbose output"}
		})
	}
	register := func(f *fixture, items string) {
		f.write(".geas/missions/m1/evolution/debt-register.json", `{"version":"1.0","artifact_type":"debt_register","artifact_id":"debt-m1","producer_type":"design-authority","scope":"mission","items":[`+items+`]}`)
	}
	item := func(id, status string) string {
		return fmt.Sprintf(`{"debt_id":%q,"severity":"low","kind":"risk","title":"t","description":"d","status":%q}`, id, status)
	}
	tests := []struct {
		name    string
		edit    func(f *fixture)
		verdict vocab.Verdict
		code    vocab.CauseCode
		want    string
	}{
		{"mitigated by the implementer", func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "mitigated", "evidence": "I checked"}}
			})
		}, vocab.VerdictFail, vocab.CauseRiskUnhandled, "the implementer cannot handle its own risk, not counted: software-engineer.json mitigated"},
		{"deferred by the implementer to its own debt item", func(f *fixture) {
			register(f, item("d1", "open"))
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "deferred", "debt_id": "d1"}}
			})
		}, vocab.VerdictFail, vocab.CauseRiskUnhandled, "software-engineer.json deferred"},
		{"the primary worker in another role", func(f *fixture) {
			f.writeEvidence("Software-Engineer-Review.json", map[string]any{
				"version": "1.0", "agent": "Software-Engineer-review", "task_id": "t1", "role": "reviewer", "summary": "s",
				"verdict": "approved", "concerns": []string{},
				"risk_handling": []any{map[string]any{"risk": "R1", "status": "mitigated", "evidence": "fine"}},
			})
		}, vocab.VerdictFail, vocab.CauseRiskUnhandled, "Software-Engineer-Review.json mitigated"},
		{"a debt_id listed twice", func(f *fixture) {
			register(f, item("d1", "resolved")+","+item("d1", "open"))
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "deferred", "debt_id": "d1"}}
			})
		}, vocab.VerdictFail, vocab.CauseRiskUnhandled, "lists more than once (statuses resolved, open)"},
		{"accepted on the builder's provider, spelled differently", func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) { m["provider_id"] = " Anthropic/opus " })
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["provider_id"] = "anthropic/sonnet"
				m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "accepted", "rationale": "fine"}}
			})
		}, vocab.VerdictBlock, vocab.CauseJudgeNotIndependent, `judge and builder both ran on anthropic/sonnet (the builder's " Anthropic/opus ")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			withRisk(f)
			tc.edit(f)
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.verdict, tc.code)
			assert.Contains(t, findCheck(t, res.Checks, "risk:R1").Evidence, tc.want)
		})
	}
	t.Run("control: an independent mitigation", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		withRisk(f)
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "mitigated", "evidence": "secrets masked; TestMask"}}
		})
		_, res, _ := f.evaluate()
		assertPass(t, res)
	})
}

// TestProviderIDsAreNormalized (SPEC §5.4): Claude, " claude", "CLAUDE" and "claude/opus" are the
// provider claude; a zero-width space does not make another provider.
func TestProviderIDsAreNormalized(t *testing.T) {
	t.Parallel()
	for _, judge := range []string{"Claude", " claude", "CLAUDE", "claude\u200b", "Claude/opus", "claude / sonnet"} {
		t.Run(judge, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.evidence("software-engineer.json", func(m map[string]any) { m["provider_id"] = "claude" })
			f.evidence("design-authority.json", func(m map[string]any) { m["provider_id"] = judge })
			_, res, _ := f.evaluate()
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseJudgeNotIndependent)
			assert.Contains(t, findCheck(t, res.Checks, "rubric:code_quality").Evidence, "judgment refused: judge and builder both ran on")
		})
	}
	assert.Equal(t, "anthropic", providerKey("Anthropic/sonnet"))
	assert.Equal(t, providerKey("anthropic/opus"), providerKey(" ANTHROPIC "))
	assert.NotEqual(t, providerKey("openai"), providerKey("anthropic"))
}

// TestOneResultBindsOneCriterion (SPEC §5.3 A): an entry binds to at most one criterion (or risk),
// by the first rule that applies; one the same rule would bind to two binds to none and warns.
func TestOneResultBindsOneCriterion(t *testing.T) {
	t.Parallel()
	criteria := []any{"lock the account after 3 failed logins", "3 failed logins lock the account", "show a lockout message"}
	tests := []struct {
		name    string
		results []any
		verdict vocab.Verdict
		code    vocab.CauseCode
		check   string // a check whose evidence has want
		want    string
	}{
		{"a text that starts with a number is text, not an index", []any{
			map[string]any{"criterion": "3 failed logins lock the account", "passed": true},
			map[string]any{"criterion": "AC1", "passed": true},
		}, vocab.VerdictBlock, vocab.CauseCriterionUnverified, "criterion:AC3", "no independent criteria_results entry for AC3"},
		{"an entry with an id binds by id only", []any{
			map[string]any{"id": "AC2", "criterion": "show a lockout message", "passed": true},
			map[string]any{"criterion": "AC1", "passed": true},
		}, vocab.VerdictBlock, vocab.CauseCriterionUnverified, "criterion:AC3", "no independent criteria_results entry for AC3"},
		{"a text equal to two criteria binds to none", []any{
			map[string]any{"criterion": "AC1", "passed": true},
			map[string]any{"criterion": "AC2", "passed": true},
			map[string]any{"criterion": "Show a lockout   message", "passed": true},
		}, vocab.VerdictBlock, vocab.CauseCriterionUnverified, "criteria_results:qa-engineer.json/2", `by text it would bind to AC3 and AC4, so it binds to none`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			crs := criteria
			if strings.Contains(tc.name, "two criteria") {
				crs = append(append([]any{}, criteria...), "show a lockout message")
			}
			f.contract(func(m map[string]any) { m["acceptance_criteria"] = crs })
			f.evidence("qa-engineer.json", func(m map[string]any) { m["criteria_results"] = tc.results })
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.verdict, tc.code)
			assert.Contains(t, findCheck(t, res.Checks, tc.check).Evidence, tc.want)
		})
	}
	t.Run("a risk entry binds one risk", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["known_risks"] = []string{"2 users share a cache", "stale cache"}
		})
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["risk_handling"] = []any{map[string]any{"risk": "2 users share a cache", "status": "mitigated", "evidence": "keyed by user"}}
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseRiskUnhandled)
		assert.True(t, findCheck(t, res.Checks, "risk:R1").Passed)
		assert.Equal(t, "no risk_handling entry for this risk in any evidence file", findCheck(t, res.Checks, "risk:R2").Evidence)
	})
	t.Run("control: every form binds its own criterion", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["acceptance_criteria"] = criteria })
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = []any{
				map[string]any{"criterion": "1: lockout", "passed": true},
				map[string]any{"id": "AC3", "criterion": "whatever", "passed": true},
				map[string]any{"criterion": "3 FAILED logins lock the account", "passed": true},
			}
		})
		_, res, _ := f.evaluate()
		assertPass(t, res)
	})
}

// TestMetricsAreReadStrictly (SPEC §2.8, §5.5): a captured metric is a plain decimal number, a
// line longer than 64 KiB is never matched, and conflicting independent reports must all satisfy.
func TestMetricsAreReadStrictly(t *testing.T) {
	t.Parallel()
	threshold := func(f *fixture, metric, op string, value float64) {
		f.contract(func(m map[string]any) {
			m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any),
				map[string]any{"id": "m", "criterion": metric, "check": map[string]any{"type": "threshold", "metric": metric, "op": op, "value": value}})
		})
	}
	capture := func(f *fixture, shell, metric, expr string) {
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{map[string]any{"run": shell, "metrics": map[string]any{metric: expr}}}
		})
	}
	t.Run("12,5% is not 125", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		capture(f, "echo 'coverage: 12,5%'", "coverage", `coverage: (\S+)`)
		threshold(f, "coverage", "gte", 80)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		assert.Contains(t, findCheck(t, res.Checks, "criterion:m").Evidence, "metric coverage was not reported")
	})
	t.Run("a cut line is not matched", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		capture(f, `printf '%65536s"failures": 1500\n' x`, "failures", `"failures": ([0-9]+)`)
		threshold(f, "failures", "lt", 20)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		assert.Contains(t, findCheck(t, res.Checks, "criterion:m").Evidence, "metric failures was not reported")
	})
	t.Run("conflicting independent reports must all satisfy", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		threshold(f, "coverage", "gte", 80)
		f.evidence("design-authority.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 50} })
		f.evidence("qa-engineer.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 95} })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		assert.Equal(t, "coverage reported 2 times with different values: 50 (reported in design-authority.json); 95 (reported in qa-engineer.json); each must satisfy >= 80; does not hold for 50 (reported in design-authority.json)",
			findCheck(t, res.Checks, "criterion:m").Evidence)
	})
	t.Run("control: agreeing reports pass", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		threshold(f, "coverage", "gte", 80)
		f.evidence("design-authority.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 95} })
		f.evidence("qa-engineer.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 95} })
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Equal(t, "coverage = 95 (reported in design-authority.json, qa-engineer.json) >= 80 holds", findCheck(t, res.Checks, "criterion:m").Evidence)
	})
}

// TestStaleEvidenceDoesNotCount (SPEC §5.1, stale_evidence): an evidence file that carries a
// commit other than the head blocks the run, naming the file and both commits; an abbreviation
// counts as the head only when the head starts with it and it is unambiguous.
func TestStaleEvidenceDoesNotCount(t *testing.T) {
	t.Parallel()
	// setup makes a second, in-scope commit on top of the reviewed one and returns both.
	setup := func(t *testing.T) (f *fixture, old, head string) {
		f = newFixture(t, true)
		old = f.git("rev-parse", "HEAD")
		f.contract(func(m map[string]any) { m["base_snapshot"] = old })
		f.write("greeter/main.go", "package main\n\nfunc main() { println(\"verbose\") }\n")
		head = f.commit("print more")
		return f, old, head
	}
	tests := []struct {
		name   string
		commit func(old, head string) string
		why    string // "" when the file names the head
	}{
		{"the old head, full", func(old, _ string) string { return old }, "another commit"},
		{"the old head, abbreviated", func(old, _ string) string { return old[:10] }, "an abbreviation the head does not start with"},
		{"a branch name", func(_, _ string) string { return "main" }, "which is not a commit id"},
		{"HEAD", func(_, _ string) string { return "HEAD" }, "which is not a commit id"},
		{"too short to be an abbreviation", func(_, head string) string { return head[:3] }, "which is not a commit id"},
		{"the head in upper case", func(_, head string) string { return strings.ToUpper(head) }, ""},
		{"the head, abbreviated", func(_, head string) string { return head[:7] }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, old, head := setup(t)
			c := tc.commit(old, head)
			f.evidence("design-authority.json", func(m map[string]any) { m["commit"] = c })
			_, res, _ := f.evaluate()
			if tc.why == "" {
				assertPass(t, res)
				assert.Equal(t, "design-authority.json name the head "+head[:12], findCheck(t, res.Checks, "stale_evidence").Evidence)
				return
			}
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseStaleEvidence)
			ch := findCheck(t, res.Checks, "stale:design-authority.json")
			assert.Equal(t, fmt.Sprintf("design-authority.json (agent design-authority) carries commit %q, %s; the head is %s", c, tc.why, head), ch.Evidence)
		})
	}
	t.Run("one stale file among fresh ones", func(t *testing.T) {
		t.Parallel()
		f, old, head := setup(t)
		f.evidence("qa-engineer.json", func(m map[string]any) { m["commit"] = head })
		f.evidence("design-authority.json", func(m map[string]any) { m["commit"] = old })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseStaleEvidence)
		assert.False(t, hasCheck(res.Checks, "stale:qa-engineer.json"))
		assert.True(t, hasCheck(res.Checks, "stale:design-authority.json"))
	})
}
