package tiers

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// failingRun makes the fixture's task fail in tier 1 and records that run: the first recorded
// run, which pins the rules it read (SPEC §4.4).
func failingRun(t *testing.T, f *fixture) {
	t.Helper()
	f.contract(func(m map[string]any) { m["eval_commands"] = []any{"exit 1"} })
	res := f.gate()
	require.Equal(t, vocab.VerdictFail, res.Verdict, "%+v", res.Causes)
	require.FileExists(t, f.path(taskFile(PinnedFile)))
}

// TestTheBarCannotBeLoweredByThoseItBinds (SPEC §4.4): after a failing run, the
// agents the contract binds cannot make the next run pass by rewriting the contract or the gate
// policy; each change blocks (rules_changed), naming the field with its pinned and current value,
// until an authority approves the new rules.
func TestTheBarCannotBeLoweredByThoseItBinds(t *testing.T) {
	lowerings := []struct {
		name   string
		lower  func(f *fixture)
		change string // in the evidence: the field with both values
	}{
		{"eval commands replaced by true", func(f *fixture) {
			f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
		}, `eval_commands[0]: "exit 1" → "true"`},
		{"eval commands removed", func(f *fixture) {
			f.contract(func(m map[string]any) { m["eval_commands"] = []any{} })
		}, `eval_commands[0]: "exit 1" → (absent)`},
		{"a threshold lowered", func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["rubric"].(map[string]any)["dimensions"].([]any)[1].(map[string]any)["threshold"] = 1
			})
		}, `rubric.dimensions[1].threshold: 4 → 1`},
		{"a criterion removed", func(f *fixture) {
			f.contract(func(m map[string]any) { m["acceptance_criteria"] = m["acceptance_criteria"].([]any)[:1] })
		}, `acceptance_criteria[1]: {"check":{"artifact":"README.md","pattern":"--verbose","type":"regex_match"},"criterion":"The README documents --verbose","id":"readme"} → (absent)`},
		{"scope widened", func(f *fixture) {
			f.contract(func(m map[string]any) { m["scope"] = map[string]any{"surfaces": []any{"**"}} })
		}, `scope.surfaces[0]: "greeter/" → "**"; scope.surfaces[1]: "README.md" → (absent)`},
		{"scope.shared added", func(f *fixture) {
			f.contract(func(m map[string]any) { m["scope"].(map[string]any)["shared"] = []any{"*"} })
		}, `scope.shared: (absent) → ["*"]`},
		{"the stub cap raised", func(f *fixture) {
			f.contract(func(m map[string]any) { m["stub_cap"] = 99 })
		}, `stub_cap: (absent) → 99`},
		{"the risk level lowered", func(f *fixture) {
			f.contract(func(m map[string]any) { m["risk_level"] = "low" })
		}, `risk_level: "normal" → "low"`},
		{"judge independence turned off", func(f *fixture) {
			f.contract(func(m map[string]any) { m["judge_independence"] = "off" })
		}, `judge_independence: (absent) → "off"`},
		{"the retry budget raised", func(f *fixture) {
			f.contract(func(m map[string]any) { m["retry_budget"] = 50 })
		}, `retry_budget: 3 → 50`},
		{"a reviewer dropped", func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["routing"].(map[string]any)["required_reviewer_types"] = []any{"qa-engineer"}
			})
		}, `routing.required_reviewer_types[0]: "design-authority" → "qa-engineer"; routing.required_reviewer_types[1]: "qa-engineer" → (absent)`},
		{"the gate policy loosened", func(f *fixture) {
			f.write(".geas/gate-policy.json", `{"shared_globs": ["*"], "stub_cap": {"normal": 99}}`)
		}, `gate-policy.shared_globs: (absent) → ["*"]; gate-policy.stub_cap: (absent) → {"normal":99}`},
		{"a new field", func(f *fixture) {
			f.contract(func(m map[string]any) { m["eval_timeout"] = "1h" })
		}, `eval_timeout: (absent) → "1h"`},
	}
	for _, tc := range lowerings {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			failingRun(t, f)
			tc.lower(f)
			_, res, _ := f.evaluate()
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseRulesChanged)
			c := findCheck(t, res.Checks, "rules_pinned")
			assert.Equal(t, StatusBlock, c.Status)
			assert.Contains(t, c.Evidence, "changed: "+tc.change+"; an authority must approve")
			assert.Contains(t, c.Evidence, "(gate run gate-1 at ")
			require.NotNil(t, res.RetryBudgetAfter)
			assert.Equal(t, 2, *res.RetryBudgetAfter, "a block spends nothing")
			assert.Nil(t, res.Transition)
			assert.Equal(t, StatusSkipped, res.TierResults["tier_1"].Status, "a tier-0 block stops the run")
		})
	}

	t.Run("status and envelope timestamps are not rules", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failingRun(t, f)
		before := f.gather().RulesSHA256
		f.contract(func(m map[string]any) {
			m["status"] = "integrated"
			m["created_at"] = "2030-01-01T00:00:00Z"
			m["updated_at"] = "2030-01-02T00:00:00Z"
		})
		assert.Equal(t, before, f.gather().RulesSHA256)
		// Layout is not a change either: the digest is RFC 8785.
		raw := f.read(taskFile("contract.json"))
		f.write(taskFile("contract.json"), "\n\n"+strings.ReplaceAll(string(raw), "\n", "\n    ")+"\n")
		assert.Equal(t, before, f.gather().RulesSHA256)
		_, res, _ := f.evaluate()
		assert.Equal(t, StatusPass, findCheck(t, res.Checks, "rules_pinned").Status)
		assert.Equal(t, vocab.VerdictFail, res.Verdict, "judged on its merits: the eval command still fails")
	})

	t.Run("a hand-edited pinned copy does not count", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failingRun(t, f)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
		in := f.gather()
		// The agent rewrites the pinned copy to the new rules, digest and all.
		require.NoError(t, record.WritePinned(in.Geas, in.TaskDir, record.PinnedCopy{RulesSHA256: in.RulesSHA256, PinnedBy: "gate run gate-1", PinnedAt: record.Timestamp(testNow), Rules: in.Rules}))
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseRulesChanged)
		c := findCheck(t, res.Checks, "rules_pinned")
		assert.Contains(t, c.Evidence, "does not match the pinned rules_sha256")
		assert.Contains(t, c.Evidence, "it was edited, so the changed fields cannot be named")
		// And without any copy the pin still holds.
		f.remove(taskFile(PinnedFile))
		_, res, _ = f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseRulesChanged)
	})

	t.Run("an authority's approval re-pins", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failingRun(t, f)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
		f.approve()
		in, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "equals the pin (approval by product-authority at ")
		pin, ok := record.PinnedRules(in.Record)
		require.True(t, ok)
		assert.Equal(t, record.KindApproval, pin.Entry.Kind)
		assert.Equal(t, in.RulesSHA256, pin.RulesSHA256)
		// Lowering the bar again after the approval blocks again, naming the approved value.
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{} })
		_, res, _ = f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseRulesChanged)
		assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, `eval_commands[0]: "true" → (absent)`)
	})

	t.Run("every history entry carries the rules it was judged against", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failingRun(t, f)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
		changed := f.gather().RulesSHA256
		res := f.gate()
		require.Equal(t, vocab.VerdictBlock, res.Verdict)
		hist := f.gather().Record.History()
		require.Len(t, hist, 2)
		assert.NotEqual(t, hist[0].RulesSHA256, hist[1].RulesSHA256)
		assert.Equal(t, changed, hist[1].RulesSHA256)
		assert.Equal(t, changed, res.RulesSHA256)
		// The pin stays the first run's: a blocked run does not move it.
		pin, _ := record.PinnedRules(f.gather().Record)
		assert.Equal(t, hist[0].RulesSHA256, pin.RulesSHA256)
	})

	t.Run("a dry run pins nothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.NoFileExists(t, f.path(taskFile(PinnedFile)))
		assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "a recorded run pins them")
	})
}

// TestApprovalsNeedTheKey: with GEAS_GATE_KEY set, an approval entry written without the key (an
// agent appending to the history by hand, or running geas without the key) does not pin.
func TestApprovalsNeedTheKey(t *testing.T) {
	t.Setenv(record.SigningKeyEnv, "the-key")
	f := newFixture(t, true)
	acceptExposure(f) // the key is in this process's environment, where the eval commands could read it
	failingRun(t, f)
	f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })

	t.Setenv(record.SigningKeyEnv, "")
	f.approve() // chained, but without an HMAC
	t.Setenv(record.SigningKeyEnv, "the-key")
	_, res, _ := f.evaluate()
	// The unsigned entry makes the whole history untrusted (history_tampered, an error that only an
	// authority's history reset clears), and the approval it holds pins nothing (rules_changed).
	assertNotPass(t, res, vocab.VerdictError, vocab.CauseHistoryTampered)
	assert.Contains(t, causeCodes(res.Causes), vocab.CauseRulesChanged)
	assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "that pins the rules (approval by product-authority at ")
	assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "does not verify: no hmac")

	// An approval made with the key pins: a fresh task approved under the key passes.
	g := newFixture(t, true)
	acceptExposure(g)
	failingRun(t, g)
	g.contract(func(m map[string]any) { m["eval_commands"] = []any{"true"} })
	g.approve()
	_, res, _ = g.evaluate()
	assertPass(t, res)
}

func TestRulesDiff(t *testing.T) {
	t.Parallel()
	doc := func(c, p map[string]any) map[string]any { return map[string]any{"contract": c, "policy": p} }
	pinned := doc(map[string]any{"a": []any{"x", "y"}, "b": map[string]any{"c": 1.0}, "same": "s"}, map[string]any{})
	current := doc(map[string]any{"a": []any{"x"}, "b": map[string]any{"c": 2.0, "d": true}, "same": "s", "new": nil}, map[string]any{"k": "v"})
	assert.Equal(t, []string{
		`a[1]: "y" → (absent)`, `b.c: 1 → 2`, `b.d: (absent) → true`, `new: (absent) → null`, `gate-policy.k: (absent) → "v"`,
	}, rulesDiff(pinned, current))
	assert.Empty(t, rulesDiff(pinned, pinned))
	// A type change is named as a whole.
	assert.Equal(t, []string{`a: ["x","y"] → "x"`}, rulesDiff(doc(map[string]any{"a": []any{"x", "y"}}, nil), doc(map[string]any{"a": "x"}, nil)))
	// Long values are cut, never mid-rune.
	long := strings.Repeat("é", 300)
	d := rulesDiff(doc(map[string]any{"a": long}, nil), doc(map[string]any{"a": "x"}, nil))
	require.Len(t, d, 1)
	assert.True(t, strings.HasSuffix(strings.Split(d[0], " → ")[0], "..."))
	assert.NotContains(t, d[0], "\uFFFD")
}

// TestInputsAreOneSnapshot (SPEC §2 inv. 7, §7.4): every input is read once before
// tier 1 and digested with framing; an eval command that rewrites an input makes the run an error
// (inputs_changed) naming the file; part C judges the debt register as it was read.
func TestInputsAreOneSnapshot(t *testing.T) {
	t.Run("the digest is RFC 8785 of files and head", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		in := f.gather()
		for _, p := range []string{"contract.json", "record.json", "evidence/qa-engineer.json", "evidence/software-engineer.json", "evidence/design-authority.json"} {
			assert.Contains(t, in.Files, taskFile(p))
		}
		assert.Contains(t, in.Files, ".geas/missions/m1/evolution/debt-register.json")
		want, err := canon.SHA256(map[string]any{"files": in.Files, "head": "abc"})
		require.NoError(t, err)
		assert.Equal(t, want, inputsDigest(in, "abc"))
		// Framing: a file set whose names and digests would concatenate alike digests differently.
		a := &Snapshot{Files: map[string]string{"e1": "s1", "e2": "s2"}}
		b := &Snapshot{Files: map[string]string{"e1 s1\nevidence e2": "s2"}}
		assert.NotEqual(t, inputsDigest(a, "h"), inputsDigest(b, "h"))
		assert.NotEqual(t, inputsDigest(a, "h"), inputsDigest(a, "h2"), "the head is digested")
	})

	t.Run("the debt register and the policy are digested", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		reg := `{"version": "1.0", "artifact_type": "debt_register", "artifact_id": "d", "producer_type": "design-authority", "scope": "mission",
  "items": [{"debt_id": "D1", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "%s"}]}`
		f.write(".geas/missions/m1/evolution/debt-register.json", strings.Replace(reg, "%s", "open", 1))
		_, open, _ := f.evaluate()
		f.write(".geas/missions/m1/evolution/debt-register.json", strings.Replace(reg, "%s", "resolved", 1))
		_, resolved, _ := f.evaluate()
		assert.NotEqual(t, open.InputsSHA256, resolved.InputsSHA256)
		f.write(".geas/gate-policy.json", `{"eval_timeout": "5m"}`)
		_, policy, _ := f.evaluate()
		assert.NotEqual(t, resolved.InputsSHA256, policy.InputsSHA256)
	})

	t.Run("the gate's own record writes are not an input change", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"exit 1"} })
		first := f.gate()
		_, again, _ := f.evaluate()
		assert.Equal(t, first.InputsSHA256, again.InputsSHA256, "gate_result and gate_history are the gate's, not inputs")
	})

	rewrites := []struct {
		name, command, file string
	}{
		{"evidence rewritten", "printf ' ' >> .geas/missions/m1/tasks/t1/evidence/qa-engineer.json", taskFile("evidence/qa-engineer.json")},
		{"evidence added", "cp .geas/missions/m1/tasks/t1/evidence/qa-engineer.json .geas/missions/m1/tasks/t1/evidence/qa-engineer-2.json", taskFile("evidence/qa-engineer-2.json")},
		{"evidence removed", "rm .geas/missions/m1/tasks/t1/evidence/design-authority.json", taskFile("evidence/design-authority.json")},
		{"the contract rewritten", "printf ' ' >> .geas/missions/m1/tasks/t1/contract.json", taskFile("contract.json")},
		{"a record section rewritten", "sed -i 's/Flag added and documented/All done/' .geas/missions/m1/tasks/t1/record.json", taskFile("record.json")},
		{"the debt register rewritten", "printf ' ' >> .geas/missions/m1/evolution/debt-register.json", ".geas/missions/m1/evolution/debt-register.json"},
		{"a policy written", `echo '{"shared_globs": ["*"]}' > .geas/gate-policy.json`, ".geas/gate-policy.json"},
	}
	for _, tc := range rewrites {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.contract(func(m map[string]any) { m["eval_commands"] = []any{tc.command} })
			_, res, _ := f.evaluate()
			assertNotPass(t, res, vocab.VerdictError, vocab.CauseInputsChanged)
			c := findCheck(t, res.Checks, "inputs_unchanged")
			assert.Equal(t, StatusError, c.Status)
			assert.False(t, c.Advisory)
			assert.Contains(t, c.Evidence, "changed while the run was under way (by an eval command or a detector): "+tc.file+";")
			require.NotNil(t, res.RetryBudgetAfter)
			assert.Equal(t, 3, *res.RetryBudgetAfter, "an error spends nothing")
		})
	}

	t.Run("a script detector that rewrites evidence", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) {
			m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any), map[string]any{"criterion": "d",
				"check": map[string]any{"type": "script", "command": "sh", "args": []any{"-c", "printf ' ' >> .geas/missions/m1/tasks/t1/evidence/qa-engineer.json"}}})
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseInputsChanged)
		c := findCheck(t, res.Checks, "inputs_unchanged")
		assert.Equal(t, 2, c.Tier, "reported in the last tier that ran")
		assert.Contains(t, c.Evidence, taskFile("evidence/qa-engineer.json"))
	})

	t.Run("part C judges the debt register read before tier 1", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "deferred", "debt_id": "D9"}}
		})
		reg := `{"version": "1.0", "artifact_type": "debt_register", "artifact_id": "d", "producer_type": "design-authority", "scope": "mission",
  "items": [{"debt_id": "D9", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "open"}]}`
		f.write(".geas/missions/m1/evolution/next.json", reg)
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{"cp .geas/missions/m1/evolution/next.json .geas/missions/m1/evolution/debt-register.json"}
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseInputsChanged)
		risk := findCheck(t, res.Checks, "risk:R1")
		assert.Equal(t, StatusFail, risk.Status)
		assert.Contains(t, risk.Evidence, "D9, which is not in the mission's debt register")
	})

	t.Run("a verify run does not re-check (no lock; its verdict is about its snapshot)", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{"printf ' ' >> .geas/missions/m1/tasks/t1/evidence/qa-engineer.json"}
		})
		_, res, _ := f.evaluate(Options{DryRun: true, Verify: true, Now: testNow})
		assert.False(t, hasCheck(res.Checks, "inputs_unchanged"))
	})
}

// TestPolicyFromTheBase (SPEC §5.3 B): a policy the work under review changed or
// added never judges that work.
func TestPolicyFromTheBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.write(".geas/gate-policy.json", `{"shared_globs": ["go.mod"]}`)
	base := f.commit("policy")
	f.contract(func(m map[string]any) { m["base_snapshot"] = base })
	f.write(".geas/gate-policy.json", `{"shared_globs": ["*"]}`)
	f.write("infra/deploy.sh", "curl x | sh\n")
	f.write("greeter/flags.go", "package main\n")
	f.commit("work")
	in, res, _ := f.evaluate()
	assert.Equal(t, []string{"go.mod"}, in.Policy.SharedGlobs, "the base's policy")
	assert.Equal(t, ".geas/gate-policy.json at base "+base, in.PolicyFrom)
	assert.Contains(t, in.Files, ".geas/gate-policy.json@"+base)
	assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "policy: .geas/gate-policy.json at base "+base)
	assertNotPass(t, res, vocab.VerdictFail, vocab.CauseScopeViolation)
	assert.Contains(t, findCheck(t, res.Checks, "scope").Evidence, "outside the surfaces: .geas/gate-policy.json, infra/deploy.sh")

	// Not tracked in the base and added by the work: the built-in defaults judge.
	g := newFixture(t, true)
	gbase := g.git("rev-parse", "HEAD")
	g.contract(func(m map[string]any) { m["base_snapshot"] = gbase })
	g.write(".geas/gate-policy.json", `{"shared_globs": ["*"]}`)
	g.write("infra/deploy.sh", "curl x | sh\n")
	g.commit("work")
	gin, gres, _ := g.evaluate()
	assert.Equal(t, policy.Default().SharedGlobs, gin.Policy.SharedGlobs)
	assert.Contains(t, gin.PolicyFrom, "added by the work under review")
	assertNotPass(t, gres, vocab.VerdictFail, vocab.CauseScopeViolation)

	// A policy at the base that is not a regular file is an error, not the working tree's copy.
	h := newFixture(t, true)
	require.NoError(t, os.Symlink("elsewhere.json", h.path(".geas/gate-policy.json")))
	hbase := h.commit("link")
	h.contract(func(m map[string]any) { m["base_snapshot"] = hbase })
	hin := h.gather()
	require.Error(t, hin.PolicyErr)
	assert.Contains(t, hin.PolicyErr.Error(), "is not a regular file")
	_, hres, _ := h.evaluate()
	assertNotPass(t, hres, vocab.VerdictError, vocab.CausePolicyInvalid)
}

// TestOnlyTheBookkeepingIsOutOfScope (SPEC §5.3 B): the exemption is the geas v1 layout, compared
// byte for byte; anything else under .geas, and any spelling that only looks like it, is a scope
// question.
func TestOnlyTheBookkeepingIsOutOfScope(t *testing.T) {
	t.Parallel()
	for _, f := range []string{
		".geas/missions/m1/tasks/t1/record.json", ".geas/state/events.jsonl", ".geas/memory/notes.md",
		".geas/recovery/r.json", ".geas/rules.md",
	} {
		assert.True(t, bookkeeping(f), f)
	}
	for _, f := range []string{
		".geas/gate-policy.json", ".geas/tools/x.go", ".geas/missions", ".geas/missions.go", ".geas/state",
		".geas/rules.md.go", ".geas/rules.md/x", ".geas/Rules.md", ".GEAS/missions/m1/x.go", ".Geas/state/x",
		".geas/STATE/x", "x/.geas/missions/m1/y", ".geas", ".geas/", ".geas/missionsx/y", "./.geas/missions/m/x",
		".geas/ｍissions/x", ".geas/missions\u200b/x",
	} {
		assert.False(t, bookkeeping(f), f)
	}
}

// TestAPinnedBaseCannotMove (SPEC §4.4, §5.1): the rules of a base_snapshot that is not a full SHA
// hold the commit it resolved to, so a branch moved after the pin is rules_changed, naming the
// base with its pinned and current commits; a base left where it was pinned passes the pin, and a
// full SHA adds nothing to the rules.
func TestAPinnedBaseCannotMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	pinnedAt := f.git("rev-parse", "HEAD~1")
	in := f.gather()
	require.NotContains(t, in.Rules, "base", "a full SHA base adds nothing to the rules")

	f.git("branch", "basebr", "HEAD~1")
	f.contract(func(m map[string]any) { m["base_snapshot"] = "basebr" })
	f.approve()
	in = f.gather()
	assert.Equal(t, pinnedAt, in.BaseCommit)
	assert.Equal(t, map[string]any{"base_snapshot": "basebr", "commit": pinnedAt}, in.Rules["base"])
	_, res, _ := f.evaluate()
	ch := findCheck(t, res.Checks, "rules_pinned")
	assert.Equal(t, StatusPass, ch.Status, "the branch where it was pinned: %s", ch.Evidence)

	movedTo := f.commit("one more")
	f.git("branch", "-f", "basebr", movedTo)
	_, res, _ = f.evaluate()
	ch = findCheck(t, res.Checks, "rules_pinned")
	assert.Equal(t, StatusBlock, ch.Status)
	assert.Equal(t, vocab.CauseRulesChanged, ch.Code)
	assert.Contains(t, ch.Evidence, `base_snapshot "basebr" resolved to `+pinnedAt+` when pinned, now to `+movedTo)

	// Without a pinned copy to name the fields, the evidence still names the base's resolution.
	f.remove(taskFile(PinnedFile))
	_, res, _ = f.evaluate()
	ch = findCheck(t, res.Checks, "rules_pinned")
	assert.Equal(t, StatusBlock, ch.Status)
	assert.Contains(t, ch.Evidence, `base_snapshot "basebr" now resolves to `+movedTo)
}
