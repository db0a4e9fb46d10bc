package tiers

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

func TestGather(t *testing.T) {
	t.Parallel()
	t.Run("example", func(t *testing.T) {
		t.Parallel()
		in := newFixture(t, false).gather()
		require.NoError(t, in.ContractErr)
		require.NoError(t, in.RecordErr)
		require.NoError(t, in.PolicyErr)
		require.NoError(t, in.EvidenceErr)
		assert.False(t, in.RecordMissing)
		assert.Equal(t, "t1", in.Contract.TaskID)
		assert.Len(t, in.Evidence, 3)
		assert.Empty(t, in.BadEvidence)
	})
	t.Run("problems are kept, not returned", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, false)
		f.remove(taskFile("record.json"))
		f.write(taskFile("evidence/zz.json"), "[]")
		f.write(".geas/gate-policy.json", "{")
		in := f.gather()
		assert.True(t, in.RecordMissing)
		require.NotNil(t, in.Record, "a missing record reads as an empty one")
		assert.NoError(t, in.RecordErr)
		require.Len(t, in.BadEvidence, 1)
		assert.Contains(t, in.BadEvidence[0].Name, "zz.json")
		assert.Error(t, in.PolicyErr)
		assert.Len(t, in.Evidence, 3)
	})
}

// TestProfiles covers SPEC §5's profile table: which tiers and parts run.
func TestProfiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		profile, status string
		tier1           string // the tier-1 check, and its status
		tier1Status     Status
		parts           []string // tier-2 checks beyond the criteria
	}{
		{"implementation_change", "integrated", "eval_command_1", StatusPass, []string{"scope", "known_risks", "rubric:core_interaction", "rubric:code_quality", "stubs"}},
		{"artifact_only", "reviewed", "eval_commands", StatusSkipped, []string{"scope", "known_risks", "rubric:core_interaction", "rubric:code_quality", "stubs"}},
		{"closure_ready", "reviewed", "eval_commands", StatusSkipped, nil},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.contract(func(m map[string]any) {
				m["gate_profile"], m["status"] = tc.profile, tc.status
				m["eval_commands"] = []any{"true"}
			})
			_, res, _ := f.evaluate()
			assertPass(t, res)
			c := findCheck(t, res.Checks, tc.tier1)
			assert.Equal(t, tc.tier1Status, c.Status)
			if tc.tier1Status == StatusSkipped {
				assert.Equal(t, "profile does not require mechanical verification", c.Evidence)
				assert.Empty(t, res.EvalRuns, "the eval commands did not run")
				// Tier 1 still checks the tests' integrity on base..head (SPEC §5.2a): the eval
				// commands are skipped, tests_modified and tests_weakened are not.
				assert.Equal(t, TierResult{Status: StatusPass, Details: "2 of 2 checks passed"}, res.TierResults["tier_1"])
				assert.Equal(t, StatusPass, findCheck(t, res.Checks, "tests_modified").Status)
				assert.Equal(t, StatusPass, findCheck(t, res.Checks, "tests_weakened").Status)
			}
			var tier2 []string
			for _, c := range res.Checks {
				if c.Tier == 2 {
					tier2 = append(tier2, c.Name)
				}
			}
			assert.Equal(t, append([]string{"criterion:AC1", "criterion:readme"}, tc.parts...), tier2)
			assert.Equal(t, tc.profile, string(res.GateProfile))
		})
	}
}

// TestTesterClaimIsContradicted: the fresh run is the truth; a tester's claim that the work passes
// is named in the evidence of the failing command.
func TestTesterClaimIsContradicted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["eval_commands"] = []any{"echo 2 tests failed; exit 1"} })
	_, res, _ := f.evaluate()
	assertNotPass(t, res, vocab.VerdictFail, vocab.CauseEvalFailed)
	c := findCheck(t, res.Checks, "eval_command_1")
	assert.Contains(t, c.Evidence, "last output: 2 tests failed")
	assert.Contains(t, c.Evidence, "qa-engineer.json claims pass, the fresh run failed")
}

// TestEvalTimeoutPrecedence: a command's timeout, else the contract's top-level eval_timeout, else
// the policy's.
func TestEvalTimeoutPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  string
		command map[string]any
		extra   map[string]any // top-level contract fields
		want    string
	}{
		{"the policy's", `{"eval_timeout": "200ms"}`, map[string]any{"run": "sleep 1", "env": map[string]any{"eval_timeout": "1h"}}, nil, "timed out after 200ms"},
		{"the contract's over the policy's", `{"eval_timeout": "1h"}`, map[string]any{"run": "sleep 1"}, map[string]any{"eval_timeout": "150ms"}, "timed out after 150ms"},
		{"the command's over the contract's", "", map[string]any{"run": "sleep 1", "timeout": "100ms"}, map[string]any{"eval_timeout": "1h"}, "timed out after 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			if tc.policy != "" {
				policyInBase(f, tc.policy) // the base's policy judges the change (SPEC §5.3 B)
			}
			f.contract(func(m map[string]any) {
				m["eval_commands"] = []any{tc.command}
				for k, v := range tc.extra {
					m[k] = v
				}
			})
			_, res, _ := f.evaluate()
			c := findCheck(t, res.Checks, "eval_command_1")
			assert.Equal(t, StatusFail, c.Status, c.Evidence)
			assert.Equal(t, vocab.CauseEvalTimeout, c.Code)
			assert.Contains(t, c.Evidence, tc.want)
		})
	}
}

func TestEvaluateInterrupted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
	}{
		{"in tier 1", func(f *fixture) { f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} }) }},
		{"in a script detector", func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "closure_ready" })
			addCriterion(f, map[string]any{"type": "script", "command": "true"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.setup(f)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			res, err := Evaluate(ctx, f.gather(), DefaultEnv(), Options{RunID: "gate-1", DryRun: true, Now: testNow})
			require.ErrorIs(t, err, ErrInterrupted)
			assert.Nil(t, res)
		})
	}
}

func TestInputsDigest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	digest := func() string { return inputsDigest(f.gather(), "head") }
	d0 := digest()
	assert.Equal(t, d0, digest(), "the same inputs, the same digest")
	assert.NotEqual(t, d0, inputsDigest(f.gather(), "another head"))

	// A blocked run writes record.json (and nothing else): the inputs are what they were.
	qaEvidence := f.read(taskFile("evidence/qa-engineer.json"))
	f.remove(taskFile("evidence/qa-engineer.json"))
	d1 := digest()
	res := f.gate()
	require.Equal(t, vocab.VerdictBlock, res.Verdict)
	assert.Equal(t, inputsDigest(f.gather(), res.Head), res.InputsSHA256)
	assert.Equal(t, d1, digest(), "the gate's rewrite of record.json is not a change of the inputs")
	rec := f.read(taskFile("record.json"))
	f.write(taskFile("record.json"), string(bytes.Replace(rec, []byte(`"verdict": "block"`), []byte(`"verdict": "fail"`), 1)))
	require.Contains(t, string(f.read(taskFile("record.json"))), `"verdict": "fail"`)
	assert.Equal(t, d1, digest(), "the gate's own sections are not inputs")

	f.write(taskFile("evidence/qa-engineer.json"), string(qaEvidence))
	d2 := digest()
	assert.Equal(t, d0, d2, "the same evidence again, the same digest")
	f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "changed" })
	assert.NotEqual(t, d2, digest(), "evidence is an input")
	f.write(taskFile("evidence/qa-engineer.json"), string(qaEvidence))
	f.write(taskFile("evidence/zz.json"), "{")
	assert.NotEqual(t, d2, digest(), "so is invalid evidence")
	f.remove(taskFile("evidence/zz.json"))
	f.record(func(m map[string]any) { m["self_check"].(map[string]any)["confidence"] = 2 })
	assert.NotEqual(t, d2, digest(), "so are the agent-written record sections")
	f.contract(func(m map[string]any) { m["retry_budget"] = 4 })
	assert.NotEqual(t, d2, digest(), "and the contract")
}

// TestResultDocument checks the shape of the --format json output of SPEC §9.
func TestResultDocument(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	_, res, _ := f.evaluate()
	assertPass(t, res)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, key := range []string{
		"run_id", "mission_id", "task_id", "gate_profile", "verdict", "tier_results", "checks", "causes",
		"rubric_scores", "blocking_dimensions", "eval_runs", "stub_count", "stub_cap",
		"retry_budget_before", "retry_budget_after", "transition", "next_action",
		"base_snapshot", "head", "inputs_sha256", "hash", "summary", "started_at", "finished_at", "duration_ms",
	} {
		assert.Contains(t, doc, key)
	}
	assert.Equal(t, "pass", doc["verdict"])
	assert.Equal(t, []any{}, doc["causes"])
	assert.Equal(t, []any{}, doc["blocking_dimensions"])
	assert.Equal(t, []any{}, doc["eval_runs"])
	assert.Equal(t, map[string]any{"from": "integrated", "to": "verified"}, doc["transition"])
	assert.Regexp(t, `^[0-9a-f]{40}$`, doc["base_snapshot"], "the resolved base is recorded as a full SHA")
	assert.Equal(t, f.git("rev-parse", "HEAD~1"), doc["base_snapshot"])
	assert.Equal(t, f.git("rev-parse", "HEAD"), doc["head"])
	assert.Equal(t, "2026-11-02T10:00:00Z", doc["started_at"])
	assert.ElementsMatch(t, []string{"tier_0", "tier_1", "tier_2"}, keysOf(doc["tier_results"]))
	skipped, counted := 0, 0
	for _, c := range res.Checks {
		switch {
		case c.Status == StatusSkipped:
			skipped++
		case c.Blocking && c.Status != StatusWarn:
			counted++
		}
	}
	require.Positive(t, skipped)
	summary := doc["summary"].(map[string]any)
	assert.Equal(t, float64(counted), summary["total"], "only blocking checks that ran are counted")

	f.remove(taskFile("evidence/qa-engineer.json"))
	_, res, _ = f.evaluate()
	b, err = json.Marshal(res)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"transition":null`)
	assert.Contains(t, string(b), `"next_action":"resolve_block"`)
}

func keysOf(v any) []string {
	var out []string
	for k := range v.(map[string]any) {
		out = append(out, k)
	}
	return out
}
