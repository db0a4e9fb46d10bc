package policy

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// TestDefaultPolicy pins the defaults of SPEC §10.
func TestDefaultPolicy(t *testing.T) {
	t.Parallel()
	p := Default()
	assert.Equal(t, map[string][]string{
		"code_quality":         {"design-authority"},
		"output_quality":       {"design-authority"},
		"core_interaction":     {"qa-engineer"},
		"feature_completeness": {"qa-engineer"},
		"output_completeness":  {"qa-engineer"},
		"regression_safety":    {"qa-engineer"},
		"ux_clarity":           {"qa-engineer", "technical-writer"},
		"visual_coherence":     {"qa-engineer", "technical-writer"},
	}, p.Evaluators)
	assert.Equal(t, map[vocab.Risk]int{"low": 3, "normal": 2, "high": 0, "critical": 0}, p.StubCap)
	assert.Equal(t, []string{"go.mod", "go.sum", "package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock",
		"Cargo.toml", "Cargo.lock", "*.lock", ".gitignore"}, p.SharedGlobs)
	assert.Equal(t, 10*time.Minute, p.EvalTimeout)
	assert.Equal(t, 8192, p.OutputTailBytes)
	assert.Equal(t, 3, p.ConsecutiveErrorLimit)
	assert.Equal(t, "enforce", p.JudgeIndependence)

	assert.Equal(t, 2, p.StubCapFor("NORMAL"))
	assert.Equal(t, 0, p.StubCapFor("unheard-of"), "an unknown risk level gets the strictest cap")
	Default().Evaluators["code_quality"][0] = "x"
	assert.Equal(t, "design-authority", Default().Evaluators["code_quality"][0], "each call is a fresh copy")
}

func TestLoadPolicy(t *testing.T) {
	t.Parallel()
	t.Run("absent", func(t *testing.T) {
		p, err := Load(geasDir(t, ""))
		require.NoError(t, err)
		assert.Equal(t, Default().Evaluators, p.Evaluators)
		assert.Equal(t, Default().SharedGlobs, p.SharedGlobs)
	})
	t.Run("overrides", func(t *testing.T) {
		geas := geasDir(t, `{
			"evaluators": {"code_quality": ["qa-engineer", "design-authority"], "performance": ["platform-engineer"]},
			"stub_cap": {"high": 1},
			"stub_patterns": ["HACK", "for now"],
			"shared_globs": ["docs/**"],
			"eval_timeout": "90s",
			"output_tail_bytes": 1024,
			"consecutive_error_limit": 5,
			"judge_independence": "strict",
			"max_evidence_bytes": 4096
		}`)
		p, err := Load(geas)
		require.NoError(t, err)
		assert.Equal(t, []string{"qa-engineer", "design-authority"}, p.Evaluators["code_quality"])
		assert.Equal(t, []string{"platform-engineer"}, p.Evaluators["performance"])
		assert.Equal(t, []string{"qa-engineer"}, p.Evaluators["core_interaction"], "rows not named keep their default")
		assert.Equal(t, map[vocab.Risk]int{"low": 3, "normal": 2, "high": 1, "critical": 0}, p.StubCap)
		assert.Equal(t, []string{"docs/**"}, p.SharedGlobs)
		assert.Equal(t, 90*time.Second, p.EvalTimeout)
		assert.Equal(t, 1024, p.OutputTailBytes)
		assert.Equal(t, 5, p.ConsecutiveErrorLimit)
		assert.Equal(t, "strict", p.JudgeIndependence)
		assert.Equal(t, int64(4096), p.MaxEvidenceBytes)

		for line, want := range map[string]bool{
			"// HACK around it": true, "// hack around it": true, "works FOR NOW": true,
			"// TODO later": false, // the list replaces the defaults
		} {
			_, ok := p.IsStub(line)
			assert.Equal(t, want, ok, "%q: stub patterns match case-insensitively (SPEC §10)", line)
		}
	})
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{`, "gate-policy.json"},
		{"unknown field", `{"stub_caps": {"low": 1}}`, "stub_caps"},
		{"bad regex", `{"stub_patterns": ["(todo"]}`, "/stub_patterns/0"},
		{"negative cap", `{"stub_cap": {"low": -1}}`, "stub_cap"},
		{"unknown independence mode", `{"judge_independence": "lenient"}`, "judge_independence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(geasDir(t, tc.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// geasDir is a .geas directory, opened as a root, that holds policy as its gate-policy.json
// ("": no policy file).
func geasDir(t *testing.T, policy string) *os.Root {
	t.Helper()
	dir := t.TempDir()
	if policy != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(policy), 0o644))
	}
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = root.Close() })
	return root
}
