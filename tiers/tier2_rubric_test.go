package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

func scores(e *evidence.Evidence, kv ...any) *evidence.Evidence {
	for i := 0; i < len(kv); i += 2 {
		e.RubricScores = append(e.RubricScores, evidence.RubricScore{Dimension: kv[i].(string), Score: float64(kv[i+1].(int))})
	}
	return e
}

func TestPartDRubric(t *testing.T) {
	t.Parallel()
	dim := func(name string, threshold int, evaluators ...string) contract.Dimension {
		return contract.Dimension{Name: name, Threshold: threshold, Evaluators: evaluators}
	}
	tests := []struct {
		name       string
		confidence int
		dim        contract.Dimension
		evaluators map[string][]string // policy overrides
		ev         []*evidence.Evidence
		status     Status
		code       vocab.CauseCode
		evidence   string
		score      *RubricScore // the reported rubric score, when one is computed
		warn       bool
	}{
		{name: "threshold as given", confidence: 4, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 3)},
			status: StatusPass, evidence: "score 3 (minimum of qa-engineer.json 3)",
			score: &RubricScore{Dimension: "core_interaction", Score: 3, Threshold: 3, Passed: true, Evaluators: []string{"qa-engineer.json"}}},
		{name: "confidence 2 raises the threshold", confidence: 2, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 3)},
			status: StatusFail, code: vocab.CauseBelowThreshold, evidence: "score 3 < threshold 4 (self_check confidence 2 raised it from 3) (minimum of qa-engineer.json 3)",
			score: &RubricScore{Dimension: "core_interaction", Score: 3, Threshold: 4, Passed: false, Evaluators: []string{"qa-engineer.json"}}},
		{name: "confidence 1 raises the threshold", confidence: 1, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 4)},
			status: StatusPass, evidence: "score 4",
			score: &RubricScore{Dimension: "core_interaction", Score: 4, Threshold: 4, Passed: true, Evaluators: []string{"qa-engineer.json"}}},
		{name: "confidence 3 does not", confidence: 3, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 3)},
			status: StatusPass, evidence: "score 3"},
		{name: "the raised threshold is capped at 5", confidence: 2, dim: dim("core_interaction", 5), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 5)},
			status: StatusPass, evidence: "score 5",
			score: &RubricScore{Dimension: "core_interaction", Score: 5, Threshold: 5, Passed: true, Evaluators: []string{"qa-engineer.json"}}},
		{name: "minimum over evaluators", confidence: 4, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{
			scores(qa(), "core_interaction", 5),
			scores(ev("qa-engineer-regression.json", "qa-engineer-regression", vocab.Tester, "provider-b"), "core_interaction", 2)},
			status: StatusFail, code: vocab.CauseBelowThreshold, evidence: "score 2 < threshold 3 (minimum of qa-engineer.json 5, qa-engineer-regression.json 2)",
			score: &RubricScore{Dimension: "core_interaction", Score: 2, Threshold: 3, Passed: false, Evaluators: []string{"qa-engineer.json", "qa-engineer-regression.json"}}},
		{name: "minimum over one file's scores", confidence: 4, dim: dim("core_interaction", 4), ev: []*evidence.Evidence{scores(qa(), "core_interaction", 5, "core_interaction", 3)},
			status: StatusFail, code: vocab.CauseBelowThreshold, evidence: "score 3 < threshold 4"},
		{name: "default evaluator table", confidence: 4, dim: dim("code_quality", 3), ev: []*evidence.Evidence{scores(qa(), "code_quality", 5)},
			status: StatusBlock, code: vocab.CauseMissingReview, evidence: "no evidence from design-authority"},
		{name: "the table's evaluator", confidence: 4, dim: dim("code_quality", 3), ev: []*evidence.Evidence{scores(qa(), "code_quality", 2), scores(design(), "code_quality", 4)},
			status: StatusPass, evidence: "score 4 (minimum of design-authority.json 4)"},
		{name: "contract evaluator overrides the table", confidence: 4, dim: dim("code_quality", 3, "qa-engineer"), ev: []*evidence.Evidence{scores(qa(), "code_quality", 4), scores(design(), "code_quality", 1)},
			status: StatusPass, evidence: "score 4 (minimum of qa-engineer.json 4)"},
		{name: "policy evaluators override the table", confidence: 4, dim: dim("core_interaction", 3), evaluators: map[string][]string{"core_interaction": {"design-authority"}},
			ev: []*evidence.Evidence{scores(qa(), "core_interaction", 5)}, status: StatusBlock, code: vocab.CauseMissingReview, evidence: "no evidence from design-authority"},
		{name: "one of several table evaluators", confidence: 4, dim: dim("ux_clarity", 3),
			ev:     []*evidence.Evidence{scores(ev("technical-writer.json", "technical-writer", vocab.Reviewer, "provider-d"), "ux_clarity", 3)},
			status: StatusPass, evidence: "minimum of technical-writer.json 3"},
		{name: "a dimension without a table entry takes any independent evaluator", confidence: 4, dim: dim("performance", 3),
			ev:     []*evidence.Evidence{scores(builder(), "performance", 5), scores(design(), "performance", 3)},
			status: StatusPass, evidence: "score 3 (minimum of design-authority.json 3); software-engineer.json's own score 5 is not counted"},
		{name: "the builder's own score is not counted", confidence: 4, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(builder(), "core_interaction", 5), qa()},
			status: StatusBlock, code: vocab.CauseScoreMissing, evidence: "qa-engineer.json gives no score for core_interaction; software-engineer.json's own score 5 is not counted"},
		{name: "no evaluator evidence", confidence: 4, dim: dim("core_interaction", 3), ev: []*evidence.Evidence{scores(design(), "core_interaction", 5)},
			status: StatusBlock, code: vocab.CauseMissingReview, evidence: "no evidence from qa-engineer"},
		{name: "evaluator on the builder's provider is refused", confidence: 4, dim: dim("core_interaction", 3),
			ev:     []*evidence.Evidence{scores(ev("qa-engineer.json", "qa-engineer", vocab.Tester, "provider-a"), "core_interaction", 5)},
			status: StatusBlock, code: vocab.CauseJudgeNotIndependent, evidence: "judgment refused: judge and builder both ran on provider-a (qa-engineer.json)"},
		{name: "unknown evaluator provider warns", confidence: 4, dim: dim("core_interaction", 3),
			ev:     []*evidence.Evidence{scores(ev("qa-engineer.json", "qa-engineer", vocab.Tester, ""), "core_interaction", 4)},
			status: StatusPass, evidence: "score 4", warn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnitProject(t)
			c := unitContract()
			c.Rubric.Dimensions = []contract.Dimension{tc.dim}
			rec := unitRecord(t, map[string]any{"self_check": selfCheck(tc.confidence, nil)})
			r := u.run(c, rec, append([]*evidence.Evidence{builder()}, tc.ev...)...)
			for k, v := range tc.evaluators {
				r.in.Policy.Evaluators[k] = v
			}
			d := partD(r)
			ch := findCheck(t, d.checks, "rubric:"+tc.dim.Name)
			assert.Equal(t, tc.status, ch.Status, ch.Evidence)
			assert.Equal(t, tc.code, ch.Code)
			assert.Contains(t, ch.Evidence, tc.evidence)
			if tc.score != nil {
				assert.Equal(t, []RubricScore{*tc.score}, d.rubric)
			}
			if tc.status == StatusFail {
				assert.Equal(t, []string{tc.dim.Name}, d.blockingDims)
			} else {
				assert.Empty(t, d.blockingDims)
			}
			assert.Equal(t, tc.warn, hasCheck(d.checks, "rubric:"+tc.dim.Name+":independence"))
			assert.False(t, hasCheck(d.checks, "stubs"), "no stubs, no stub check")
		})
	}
}

func TestStubPatterns(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	for _, line := range []string{
		"// TODO: wire the flag", "# fixme later", "xxx", "return errors.New(\"Not Implemented\")",
		"unimplemented!()", `panic("todo")`, `panic("TODO: later")`, "raise NotImplementedError",
		"raise NotImplemented", `throw new Error("not implemented")`, `throw new Error('Not implemented yet')`,
	} {
		_, ok := p.IsStub(line)
		assert.True(t, ok, "%q is a stub", line)
	}
	for _, line := range []string{"return nil", "fmt.Println(cfg)", `panic("unreachable")`, "implemented in v2"} {
		_, ok := p.IsStub(line)
		assert.False(t, ok, "%q is not a stub", line)
	}
}

func TestPartDStubs(t *testing.T) {
	t.Parallel()
	const mainGo = "package main\n\nfunc main() {\n\t// TODO: print the configuration\n}\n\nfunc verbose() { panic(\"todo\") }\n"
	tests := []struct {
		name     string
		risk     vocab.Risk
		stubCap  *int
		stubs    []any // self_check.possible_stubs
		count    int
		cap      int
		status   Status // of the stubs check; "" when there is none
		code     vocab.CauseCode
		evidence string
		capped   bool // feature_completeness and output_completeness capped at 2
	}{
		{name: "a confirmed stub under the cap", risk: "normal", stubs: []any{"greeter/main.go:4"}, count: 1, cap: 2,
			status: StatusWarn, code: "stub_confirmed", evidence: `1 confirmed stubs (cap 2): greeter/main.go:4 "// TODO: print the configuration"`, capped: true},
		{name: "a location object", risk: "normal", stubs: []any{map[string]any{"path": "greeter/main.go", "line": 7}}, count: 1, cap: 2,
			status: StatusWarn, code: "stub_confirmed", evidence: "greeter/main.go:7", capped: true},
		{name: "a file without a line confirms every matching line", risk: "normal", stubs: []any{"greeter/main.go"}, count: 2, cap: 2,
			status: StatusWarn, code: "stub_confirmed", evidence: "2 confirmed stubs (cap 2)", capped: true},
		{name: "each place counts once", risk: "normal", stubs: []any{"greeter/main.go:4", map[string]any{"path": "greeter/main.go", "line": 4}}, count: 1, cap: 2,
			status: StatusWarn, code: "stub_confirmed", capped: true},
		{name: "a line that is not a stub", risk: "normal", stubs: []any{"greeter/main.go:3"}, count: 0, cap: 2},
		{name: "a file that does not exist", risk: "normal", stubs: []any{"greeter/gone.go:1"}, count: 0, cap: 2},
		{name: "more stubs than the cap", risk: "normal", stubs: []any{"greeter/main.go:4", "greeter/main.go:7", "greeter/util.go:1"}, count: 3, cap: 2,
			status: StatusBlock, code: vocab.CauseStubCapExceeded, evidence: "3 confirmed stubs > cap 2", capped: true},
		{name: "high risk allows none", risk: "high", stubs: []any{"greeter/main.go:4"}, count: 1, cap: 0,
			status: StatusBlock, code: vocab.CauseStubCapExceeded, evidence: "1 confirmed stubs > cap 0", capped: true},
		{name: "critical risk allows none", risk: "critical", stubs: []any{"greeter/main.go:4"}, count: 1, cap: 0,
			status: StatusBlock, code: vocab.CauseStubCapExceeded, capped: true},
		{name: "low risk allows three", risk: "low", stubs: []any{"greeter/main.go:4", "greeter/main.go:7", "greeter/util.go:1"}, count: 3, cap: 3,
			status: StatusWarn, code: "stub_confirmed", capped: true},
		{name: "the contract's stub_cap overrides the risk level", risk: "high", stubCap: intp(1), stubs: []any{"greeter/main.go:4"}, count: 1, cap: 1,
			status: StatusWarn, code: "stub_confirmed", capped: true},
		{name: "a stub_cap of 0 on low risk", risk: "low", stubCap: intp(0), stubs: []any{"greeter/main.go:4"}, count: 1, cap: 0,
			status: StatusBlock, code: vocab.CauseStubCapExceeded, capped: true},
		// The builder's own claim, unreadable: not confirmed, never an error that would turn a fail
		// into one that spends no retry (stubs_possible_stub_unreadable_stays_a_fail.txtar).
		{name: "a location outside the project is not confirmed", risk: "normal", stubs: []any{"escape/secret.go:1"}, count: 0, cap: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newUnitProject(t)
			u.write("greeter/main.go", mainGo)
			u.write("greeter/util.go", "// FIXME: handle errors\n")
			outside := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.go"), []byte("// TODO\n"), 0o644))
			require.NoError(t, os.Symlink(outside, filepath.Join(u.dir, "escape")))
			c := unitContract()
			c.RiskLevel = tc.risk
			c.StubCap = tc.stubCap
			c.Rubric.Dimensions = []contract.Dimension{
				{Name: "feature_completeness", Threshold: 2}, {Name: "output_completeness", Threshold: 3}, {Name: "core_interaction", Threshold: 3},
			}
			rec := unitRecord(t, map[string]any{"self_check": selfCheck(4, map[string]any{"possible_stubs": tc.stubs})})
			r := u.run(c, rec, builder(), scores(qa(), "feature_completeness", 5, "output_completeness", 5, "core_interaction", 5))
			d := partD(r)
			assert.Equal(t, tc.count, d.stubCount)
			assert.Equal(t, tc.cap, d.stubCap)
			if tc.status == "" {
				assert.False(t, hasCheck(d.checks, "stubs"))
			} else {
				ch := findCheck(t, d.checks, "stubs")
				assert.Equal(t, tc.status, ch.Status, ch.Evidence)
				assert.Equal(t, tc.code, ch.Code)
				assert.Contains(t, ch.Evidence, tc.evidence)
				if tc.count > 0 {
					assert.Len(t, ch.Locations, tc.count)
				}
			}
			want := map[string]float64{"feature_completeness": 5, "output_completeness": 5, "core_interaction": 5}
			if tc.capped {
				want["feature_completeness"], want["output_completeness"] = 2, 2
			}
			got := map[string]float64{}
			for _, s := range d.rubric {
				got[s.Dimension] = s.Score
			}
			assert.Equal(t, want, got)
			if tc.capped {
				fc := findCheck(t, d.checks, "rubric:feature_completeness")
				assert.Equal(t, StatusPass, fc.Status, "2 meets threshold 2: %s", fc.Evidence)
				assert.Contains(t, fc.Evidence, "capped from 5 to 2 by")
				oc := findCheck(t, d.checks, "rubric:output_completeness")
				assert.Equal(t, StatusFail, oc.Status)
				assert.Equal(t, vocab.CauseBelowThreshold, oc.Code)
				assert.Contains(t, oc.Evidence, "score 2 < threshold 3")
				assert.Equal(t, []string{"output_completeness"}, d.blockingDims)
			}
			assert.Equal(t, StatusPass, findCheck(t, d.checks, "rubric:core_interaction").Status, "other dimensions are not capped")
		})
	}
}

// TestPartDStubsInTheDiff: a line the diff adds that matches a stub pattern is a confirmed stub,
// whatever the implementer declared.
func TestPartDStubsInTheDiff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	base := f.git("rev-parse", "HEAD")
	f.write("greeter/main.go", "package main\n\nfunc main() {\n\tpanic(\"todo: verbose\")\n}\n")
	f.write(".geas/missions/m1/tasks/t1/scratch.md", "TODO in bookkeeping is not code\n")
	f.commit("stub")
	f.contract(func(m map[string]any) {
		m["base_snapshot"] = base
		m["risk_level"] = "high"
	})
	_, res, _ := f.evaluate()
	c := findCheck(t, res.Checks, "stubs")
	assert.Equal(t, StatusBlock, c.Status, c.Evidence)
	assert.Equal(t, vocab.CauseStubCapExceeded, c.Code)
	assert.Equal(t, []Location{{Path: "greeter/main.go", Line: 4}}, c.Locations)
	assert.Equal(t, 1, res.StubCount)
	assert.Equal(t, 0, res.StubCap)
	assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseStubCapExceeded)
}
