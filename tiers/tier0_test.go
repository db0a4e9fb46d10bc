package tiers

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// TestTier0 covers each row of SPEC §5.1: the check that does not hold, its status and cause, and
// that a blocking or erroring tier 0 stops tiers 1 and 2.
func TestTier0(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		noGit    bool
		setup    func(f *fixture)
		check    string
		status   Status
		code     vocab.CauseCode
		evidence string
	}{
		{name: "contract does not parse", setup: func(f *fixture) { f.write(taskFile("contract.json"), "{") },
			check: "contract_valid", status: StatusError, code: vocab.CauseContractInvalid, evidence: "contract.json"},
		{name: "contract has an unknown field", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["eval_command"] = "make test" })
		}, check: "contract_valid", status: StatusError, code: vocab.CauseContractInvalid, evidence: "eval_command"},
		{name: "record does not parse", setup: func(f *fixture) { f.write(taskFile("record.json"), `{"version": "1.0",`) },
			check: "record_valid", status: StatusError, code: vocab.CauseRecordInvalid, evidence: "record.json"},
		{name: "record violates the schema", setup: func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["confidence"] = 9 })
		}, check: "record_valid", status: StatusError, code: vocab.CauseRecordInvalid, evidence: "confidence"},
		{name: "implementation_change needs integrated", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["status"] = "reviewed" })
		}, check: "state_eligible", status: StatusError, code: vocab.CauseStateIneligible, evidence: "state is reviewed; implementation_change needs integrated"},
		{name: "artifact_only needs reviewed", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "artifact_only" })
		}, check: "state_eligible", status: StatusError, code: vocab.CauseStateIneligible, evidence: "state is integrated; artifact_only needs reviewed"},
		{name: "closure_ready needs reviewed or integrated", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "closure_ready"; m["status"] = "implementing" })
		}, check: "state_eligible", status: StatusError, code: vocab.CauseStateIneligible, evidence: "closure_ready needs reviewed or integrated"},
		{name: "a verified task is not eligible", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["status"] = "verified" })
		}, check: "state_eligible", status: StatusError, code: vocab.CauseStateIneligible, evidence: "state is verified"},
		{name: "self_check missing", setup: func(f *fixture) {
			f.record(func(m map[string]any) { delete(m, "self_check") })
		}, check: "self_check", status: StatusBlock, code: vocab.CauseMissingSelfCheck, evidence: "no self_check section in record.json"},
		{name: "no record.json at all", setup: func(f *fixture) { f.remove(taskFile("record.json")) },
			check: "self_check", status: StatusBlock, code: vocab.CauseMissingSelfCheck, evidence: "no self_check section"},
		{name: "required reviewer has no evidence", setup: func(f *fixture) { f.remove(taskFile("evidence/qa-engineer.json")) },
			check: "review:qa-engineer", status: StatusBlock, code: vocab.CauseMissingReview, evidence: "no evidence file of agent qa-engineer (evidence files: design-authority.json, software-engineer.json)"},
		{name: "required reviewer wrote as the implementer", setup: func(f *fixture) {
			f.evidence("qa-engineer.json", func(m map[string]any) { m["role"] = "implementer"; m["files_changed"] = []string{} })
		}, check: "review:qa-engineer", status: StatusBlock, code: vocab.CauseMissingReview, evidence: "qa-engineer.json has role implementer"},
		{name: "evidence violates the schema", setup: func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) {
				m["rubric_scores"] = []any{map[string]any{"dimension": "code_quality", "score": 7}}
			})
		}, check: "evidence:design-authority.json", status: StatusBlock, code: vocab.CauseEvidenceInvalid, evidence: "design-authority.json"},
		{name: "evidence does not parse", setup: func(f *fixture) { f.write(taskFile("evidence/notes.json"), "not json") },
			check: "evidence:notes.json", status: StatusBlock, code: vocab.CauseEvidenceInvalid, evidence: "notes.json"},
		{name: "integration missing", setup: func(f *fixture) {
			f.record(func(m map[string]any) { delete(m, "integration") })
		}, check: "integration", status: StatusBlock, code: vocab.CauseMissingIntegration, evidence: "no integration.json (geas task integrate writes it)"},
		{name: "integration not merged", setup: func(f *fixture) {
			f.record(func(m map[string]any) { m["integration"] = map[string]any{"status": "conflict"} })
		}, check: "integration", status: StatusBlock, code: vocab.CauseMissingIntegration, evidence: "integration.status is conflict"},
		{name: "base_snapshot empty", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["base_snapshot"] = "" })
		}, check: "baseline", status: StatusBlock, code: vocab.CauseBaselineMismatch, evidence: "base_snapshot is empty"},
		{name: "base_snapshot does not resolve", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["base_snapshot"] = "no-such-branch" })
		}, check: "baseline", status: StatusBlock, code: vocab.CauseBaselineMismatch, evidence: "base_snapshot no-such-branch"},
		{name: "base_snapshot is not an ancestor of the head", setup: func(f *fixture) {
			f.git("checkout", "-q", "-b", "side")
			f.write("side.txt", "x\n")
			side := f.commit("side")
			f.git("checkout", "-q", "main")
			f.contract(func(m map[string]any) { m["base_snapshot"] = side })
		}, check: "baseline", status: StatusBlock, code: vocab.CauseBaselineMismatch, evidence: "is not an ancestor of head"},
		{name: "integration.commit is the head", setup: func(f *fixture) {
			first := f.git("rev-parse", "HEAD")
			f.write("greeter/more.go", "package main\n")
			second := f.commit("more")
			f.contract(func(m map[string]any) { m["base_snapshot"] = second })
			f.record(func(m map[string]any) { m["integration"] = map[string]any{"status": "merged", "commit": first} })
		}, check: "baseline", status: StatusBlock, code: vocab.CauseBaselineMismatch, evidence: "is not an ancestor of head"},
		{name: "integration.commit does not resolve", setup: func(f *fixture) {
			f.record(func(m map[string]any) {
				m["integration"] = map[string]any{"status": "merged", "commit": "0123456789012345678901234567890123456789"}
			})
		}, check: "baseline", status: StatusBlock, code: vocab.CauseBaselineMismatch, evidence: "integration head 0123456789012345678901234567890123456789"},
		{name: "no git repository", noGit: true,
			check: "baseline", status: StatusError, code: vocab.CauseNoRepository, evidence: "no git repository"},
		{name: "policy invalid", setup: func(f *fixture) { f.write(".geas/gate-policy.json", `{"stub_cap": {"normal": -1}}`) },
			check: "policy_valid", status: StatusError, code: vocab.CausePolicyInvalid, evidence: "gate-policy.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, !tc.noGit)
			if tc.setup != nil {
				tc.setup(f)
			}
			_, res, _ := f.evaluate()
			c := findCheck(t, res.Checks, tc.check)
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Equal(t, tc.code, c.Code)
			assert.False(t, c.Passed)
			assert.True(t, c.Blocking)
			assert.Equal(t, 0, c.Tier)
			assert.Contains(t, c.Evidence, tc.evidence)

			assertNotPass(t, res, vocab.Verdict(tc.status), tc.code)
			for _, c := range res.Checks {
				assert.Equal(t, 0, c.Tier, "tier 0 did not pass, yet %s ran", c.Name)
			}
			assert.Equal(t, TierResult{Status: StatusSkipped, Details: "not run: tier 0 did not pass"}, res.TierResults["tier_1"])
			assert.Equal(t, TierResult{Status: StatusSkipped, Details: "not run: tier 0 did not pass"}, res.TierResults["tier_2"])
			assert.Equal(t, tc.status, res.TierResults["tier_0"].Status)
			assert.Empty(t, res.EvalRuns, "no eval command ran")
		})
	}
}

// TestTier0Holds covers the rows of SPEC §5.1 when they hold: the check passes (or is absent when
// the profile does not ask for it) and the run goes on.
func TestTier0Holds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(f *fixture)
		check    string
		status   Status // "" means the check is not made
		evidence string
	}{
		{name: "example task", check: "state_eligible", status: StatusPass, evidence: "state is integrated"},
		{name: "artifact_only from reviewed", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "artifact_only"; m["status"] = "reviewed" })
		}, check: "state_eligible", status: StatusPass, evidence: "state is reviewed"},
		{name: "closure_ready from reviewed", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "closure_ready"; m["status"] = "reviewed" })
		}, check: "state_eligible", status: StatusPass, evidence: "state is reviewed"},
		{name: "closure_ready from integrated", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "closure_ready" })
		}, check: "state_eligible", status: StatusPass, evidence: "state is integrated"},
		{name: "artifact_only does not need integration", setup: func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "artifact_only"; m["status"] = "reviewed" })
			f.record(func(m map[string]any) { delete(m, "integration") })
		}, check: "integration"},
		{name: "artifact_only without a base needs no repository", setup: func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["gate_profile"] = "artifact_only"
				m["status"] = "reviewed"
				m["base_snapshot"] = ""
			})
			require.NoError(t, os.RemoveAll(f.path(".git")))
		}, check: "baseline"},
		{name: "reviewer file named by step", setup: func(f *fixture) {
			f.remove(taskFile("evidence/design-authority.json"))
			f.writeEvidence("design-authority-review.json", map[string]any{
				"version": "1.0", "agent": "design-authority-review", "task_id": "t1", "role": "reviewer",
				"summary": "ok", "verdict": "approved", "concerns": []string{},
				"rubric_scores": []any{map[string]any{"dimension": "code_quality", "score": 4}}, "provider_id": "provider-c",
			})
		}, check: "review:design-authority", status: StatusPass, evidence: "found design-authority-review.json"},
		{name: "integration merged", check: "integration", status: StatusPass, evidence: "merged"},
		{name: "unpinned base resolves", setup: unpinnedBase, check: "baseline", status: StatusPass, evidence: "(HEAD)"},
		{name: "unpinned base warns", setup: unpinnedBase, check: "base_pinned", status: StatusWarn, evidence: `base_snapshot "HEAD~1" is not pinned; it resolved to `},
		{name: "a pinned base does not warn", setup: func(f *fixture) {
			sha := f.git("rev-parse", "HEAD~1")
			f.contract(func(m map[string]any) { m["base_snapshot"] = sha })
		}, check: "base_pinned"},
		{name: "a base behind the head", setup: func(f *fixture) {
			base := f.git("rev-parse", "HEAD")
			f.write("greeter/more.go", "package main\n")
			f.commit("more")
			f.contract(func(m map[string]any) { m["base_snapshot"] = base })
		}, check: "baseline", status: StatusPass, evidence: "is an ancestor of head"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			if tc.setup != nil {
				tc.setup(f)
			}
			_, res, _ := f.evaluate()
			if tc.status == "" {
				assert.False(t, hasCheck(res.Checks, tc.check), "%s should not be checked: %v", tc.check, checkNames(res.Checks))
			} else {
				c := findCheck(t, res.Checks, tc.check)
				assert.Equal(t, tc.status, c.Status, c.Evidence)
				assert.Contains(t, c.Evidence, tc.evidence)
			}
			for _, c := range res.Checks {
				if c.Tier == 0 {
					assert.Contains(t, []Status{StatusPass, StatusWarn, StatusSkipped}, c.Status, "%s: %s", c.Name, c.Evidence)
				}
			}
			assert.True(t, hasCheck(res.Checks, "eval_commands") || hasCheck(res.Checks, "eval_command_1"), "tier 1 ran or was skipped by profile")
			assertPass(t, res)
		})
	}
}

// TestTier0ReportsEveryProblemTogether: all tier-0 checks run and are reported in one run, worst
// first, so a fix loop learns everything that is wrong at once.
func TestTier0ReportsEveryProblemTogether(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["status"] = "reviewed" })
	f.record(func(m map[string]any) {
		delete(m, "self_check")
		m["integration"] = map[string]any{"status": "pending"}
	})
	f.remove(taskFile("evidence/qa-engineer.json"))
	f.write(taskFile("evidence/broken.json"), "{")
	f.contract(func(m map[string]any) { m["base_snapshot"] = "no-such-rev" })

	_, res, _ := f.evaluate()
	assert.Equal(t, vocab.VerdictError, res.Verdict)
	assert.Equal(t, []vocab.CauseCode{
		vocab.CauseStateIneligible, vocab.CauseMissingSelfCheck, vocab.CauseMissingReview, vocab.CauseEvidenceInvalid,
		vocab.CauseMissingIntegration, vocab.CauseBaselineMismatch,
	}, causeCodes(res.Causes), "every problem, worst first, in check order within a status")
	for _, c := range res.Checks {
		assert.Equal(t, 0, c.Tier, c.Name)
	}
	assert.Equal(t, StatusError, res.TierResults["tier_0"].Status)
	assert.Equal(t, "7 of 13 checks passed", res.TierResults["tier_0"].Details, "rules, history and budget pass")
	assert.Equal(t, StatusSkipped, res.TierResults["tier_1"].Status)
	assert.Equal(t, StatusSkipped, res.TierResults["tier_2"].Status)
}

// unpinnedBase names the fixture's base commit by a revision rather than a SHA.
func unpinnedBase(f *fixture) { f.contract(func(m map[string]any) { m["base_snapshot"] = "HEAD~1" }) }
