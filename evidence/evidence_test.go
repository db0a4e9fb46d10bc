package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "evidence", name))
	require.NoError(t, err)
	return b
}

func TestParseFull(t *testing.T) {
	e, err := Parse("full.json", fixture(t, "full.json"))
	require.NoError(t, err)
	assert.Equal(t, "qa-engineer-retest", e.Agent)
	assert.Equal(t, vocab.Tester, e.Role)
	assert.Equal(t, "provider-b", e.ProviderID)
	require.Len(t, e.CriteriaResults, 2)
	assert.Equal(t, "readme", e.CriteriaResults[0].ID)
	assert.False(t, e.CriteriaResults[1].Passed)
	assert.Equal(t, 3.5, e.RubricScores[0].Score)
	require.Len(t, e.RiskHandling, 3)
	assert.Equal(t, "D-1", e.RiskHandling[0].DebtID)
	require.Len(t, e.Judgments, 1)
	require.NotNil(t, e.Judgments[0].Score)
	assert.Equal(t, 4.0, *e.Judgments[0].Score)
	assert.Equal(t, 81.5, e.Metrics["coverage"])
	assert.Len(t, e.SHA256, 64)
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"score above 5", `{"version":"1.0","agent":"a","task_id":"t","role":"reviewer","summary":"s","verdict":"approved","concerns":[],"rubric_scores":[{"dimension":"d","score":7}]}`, "/rubric_scores/0/score"},
		{"tester without a verdict", `{"version":"1.0","agent":"a","task_id":"t","role":"tester","summary":"s","criteria_results":[]}`, "/verdict"},
		{"reviewer without a verdict in geas v1.4.0's shape", `{"agent":"a","task_id":"t","role":"reviewer","summary":"s","revision_ref":"abc123f"}`, "/verdict"},
		{"revision_ref not a string", `{"agent":"a","task_id":"t","role":"implementer","summary":"s","revision_ref":7}`, "/revision_ref"},
		{"artifact_refs not a list of strings", `{"agent":"a","task_id":"t","role":"implementer","summary":"s","artifact_refs":[1]}`, "/artifact_refs/0"},
		{"bad role", `{"version":"1.0","agent":"a","task_id":"t","role":"boss","summary":"s"}`, "/role"},
		{"bad risk status", `{"version":"1.0","agent":"a","task_id":"t","role":"reviewer","summary":"s","verdict":"approved","concerns":[],"risk_handling":[{"risk":"r","status":"ignored"}]}`, "/risk_handling/0/status"},
		{"metric not a number", `{"version":"1.0","agent":"a","task_id":"t","role":"reviewer","summary":"s","verdict":"approved","concerns":[],"metrics":{"m":"high"}}`, "/metrics/m"},
		{"truncated", `{"version":"1.0",`, "invalid JSON"},
		{"trailing data", `{"version":"1.0","agent":"a","task_id":"t","role":"implementer","summary":"s","files_changed":[]} {}`, "data after the JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse("ev.json", []byte(tc.data))
			require.Error(t, err)
			assert.Nil(t, e)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "ev.json")
		})
	}
}

func TestAgentType(t *testing.T) {
	known := KnownTypes("release-manager")
	for _, tc := range []struct{ agent, want string }{
		{"design-authority", "design-authority"},
		{"design-authority-review", "design-authority"},
		{"qa-engineer-2", "qa-engineer"},
		{"research-integrity-reviewer", "research-integrity-reviewer"},
		{"release-manager-final", "release-manager"},
		{"designauthority", ""},
		{"qa", ""},
		{"", ""},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			assert.Equal(t, tc.want, AgentType(tc.agent, known))
		})
	}
	assert.Len(t, KnownTypes("qa-engineer", ""), len(GeasAgentTypes))
}

func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "evidence")
	require.NoError(t, os.MkdirAll(ev, 0o755))
	for _, n := range []string{"qa-engineer.json", "design-authority.json", "full.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(ev, n), fixture(t, n), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ev, "broken.json"), []byte(`{"version":`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "notes.txt"), []byte(`ignored`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "big.json"), make([]byte, 4096), 0o644))
	outside := filepath.Join(t.TempDir(), "planted.json")
	require.NoError(t, os.WriteFile(outside, fixture(t, "qa-engineer.json"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(ev, "planted.json")))

	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	ok, bad, err := LoadAll(r, "evidence", 2048)
	require.NoError(t, err)
	var names []string
	for _, e := range ok {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"design-authority.json", "full.json", "qa-engineer.json"}, names)
	badNames := map[string]string{}
	for _, b := range bad {
		badNames[b.Name] = b.Error()
	}
	require.Len(t, badNames, 3)
	assert.Contains(t, badNames["evidence/broken.json"], "evidence/broken.json: invalid JSON")
	assert.Contains(t, badNames["evidence/big.json"], "4096 bytes exceeds the limit of 2048 bytes")
	assert.Contains(t, badNames["evidence/planted.json"], "escapes")

	var se *schemas.SyntaxError
	for _, b := range bad {
		if b.Name == "evidence/broken.json" {
			assert.ErrorAs(t, b, &se)
		}
	}

	ok, bad, err = LoadAll(r, "nothing-here", 0)
	require.NoError(t, err)
	assert.Empty(t, ok)
	assert.Empty(t, bad)
}

// TestLoadAllBoundsTheTotal: all evidence of a task together is bounded (SPEC §10); a directory
// whose files add up to more than the limit is refused as a whole before any file is read, naming
// the total, the limit and the largest files. Exactly the limit is read.
func TestLoadAllBoundsTheTotal(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "evidence")
	require.NoError(t, os.MkdirAll(ev, 0o755))
	qa := fixture(t, "qa-engineer.json")
	da := fixture(t, "design-authority.json")
	require.NoError(t, os.WriteFile(filepath.Join(ev, "qa-engineer.json"), qa, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "design-authority.json"), da, 0o644))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	exact := int64(len(qa) + len(da))

	ok, bad, err := LoadAllBounded(r, "evidence", 0, exact)
	require.NoError(t, err)
	assert.Len(t, ok, 2, "evidence of exactly the total limit is read")
	assert.Empty(t, bad)

	ok, bad, err = LoadAllBounded(r, "evidence", 0, exact-1)
	require.NoError(t, err)
	assert.Empty(t, ok, "one byte over the total: nothing is read")
	require.Len(t, bad, 1)
	assert.Equal(t, "evidence", bad[0].Name)
	var tl *TotalTooLargeError
	require.ErrorAs(t, bad[0], &tl)
	assert.Equal(t, exact, tl.Total)
	assert.Contains(t, bad[0].Error(), fmt.Sprintf("2 evidence files total %d bytes, over the limit of %d bytes for all evidence of a task", exact, exact-1))
	assert.Contains(t, bad[0].Error(), "none was read")

	// Forty sparse files of 15 MiB: each under the per-file limit, 600 MiB together. Refused from
	// their sizes alone (a read of any of them would be a parse error instead).
	for i := range 40 {
		f, err := os.Create(filepath.Join(ev, fmt.Sprintf("f%02d.json", i)))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(15<<20))
		require.NoError(t, f.Close())
	}
	ok, bad, err = LoadAll(r, "evidence", 0)
	require.NoError(t, err)
	assert.Empty(t, ok)
	require.Len(t, bad, 1)
	assert.Contains(t, bad[0].Error(), fmt.Sprintf("42 evidence files total %d bytes, over the limit of %d bytes", exact+40*15<<20, DefaultMaxTotalBytes))
	assert.Contains(t, bad[0].Error(), "largest: f00.json 15728640 bytes, f01.json 15728640 bytes, f02.json 15728640 bytes")
}

// TestGeasV14EvidenceNamesItsWorkAsV10Does: artifact_refs and revision_ref are read beside
// files_changed and commit, in a file of either version, each name once and both revisions kept.
func TestGeasV14EvidenceNamesItsWorkAsV10Does(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "schemas", "evidence", "geas-v1.4-software.json"))
	require.NoError(t, err)
	e, err := Parse("software-engineer.json", b)
	require.NoError(t, err)
	assert.Empty(t, e.Version)
	assert.Equal(t, []string{"src/features/auth/login.ts", "src/features/auth/signup.ts", "src/features/auth/reset-password.ts", "src/api/auth.ts"}, e.Declared())
	assert.Equal(t, []Revision{{"revision_ref", "abc123f"}}, e.Revisions())

	both := &Evidence{FilesChanged: []string{"a.go", "b.go"}, ArtifactRefs: []string{"b.go", "c.go"}, Commit: "abc1234", RevisionRef: " def5678 "}
	assert.Equal(t, []string{"a.go", "b.go", "c.go"}, both.Declared())
	assert.Equal(t, []Revision{{"commit", "abc1234"}, {"revision_ref", " def5678 "}}, both.Revisions())

	v10 := &Evidence{FilesChanged: []string{"a.go"}, Commit: "abc1234", RevisionRef: "  "}
	assert.Equal(t, []string{"a.go"}, v10.Declared())
	assert.Equal(t, []Revision{{"commit", "abc1234"}}, v10.Revisions(), "a blank revision_ref names nothing, as a blank commit")
}
