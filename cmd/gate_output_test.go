package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/report"
	"github.com/geas-dev/geas/tiers"
)

// goldenResults are the four recorded gate runs of report/testdata/results.json (fail, pass,
// error, block) whose volatile fields (times, durations, hashes, commits) were fixed by hand;
// between them they hold every check status, checks with locations, and evidence with characters
// every format must escape.
func goldenResults(t *testing.T) []*tiers.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "results.json"))
	require.NoError(t, err)
	var results []*tiers.Result
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results, 4)
	return results
}

// checkGolden compares got with the golden file report/testdata/NAME, which the report package's
// tests keep (and rewrite under -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("..", "report", "testdata", name))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "%s differs; run go test ./report -run TestGolden -update if the change is intended", name)
}

// TestGateOutputGolden renders the recorded runs in every --format of geas gate, as writeGate
// prints them, and compares each with its golden file in report/testdata. The github format also appends a job
// summary to $GITHUB_STEP_SUMMARY; the other formats leave that file alone.
func TestGateOutputGolden(t *testing.T) {
	results := goldenResults(t)
	for _, tc := range []struct {
		format, golden, summary string
		results                 []*tiers.Result
	}{
		{format: formatText, golden: "gate.txt", results: results},
		{format: formatJSON, golden: "gate-one.json", results: results[:1]},
		{format: formatJSON, golden: "gate.json", results: results},
		{format: formatJUnit, golden: "gate.junit.xml", results: results},
		{format: formatGitHub, golden: "gate.github.txt", summary: "gate.github-summary.md", results: results},
		{format: report.SARIF, golden: "gate.sarif", results: results},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			summary := filepath.Join(t.TempDir(), "summary.md")
			require.NoError(t, os.WriteFile(summary, []byte("# earlier step\n\n"), 0o644))
			t.Setenv(stepSummaryEnv, summary)
			var stdout, stderr bytes.Buffer
			g := &globalOptions{format: tc.format, stdout: &stdout, stderr: &stderr}
			require.NoError(t, g.writeGate(tc.results))
			assert.Empty(t, stderr.String())
			checkGolden(t, tc.golden, stdout.Bytes())
			got, err := os.ReadFile(summary)
			require.NoError(t, err)
			if tc.summary == "" {
				assert.Equal(t, "# earlier step\n\n", string(got), "only --format github writes the job summary")
				return
			}
			require.True(t, bytes.HasPrefix(got, []byte("# earlier step\n\n")), "the summary is appended, not replaced")
			checkGolden(t, tc.summary, bytes.TrimPrefix(got, []byte("# earlier step\n\n")))
		})
	}
}

// TestGitHubFormatWithoutStepSummary: outside GitHub Actions the workflow commands are printed and
// nothing else is written; an unwritable summary is reported on stderr without hiding the verdict.
func TestGitHubFormatWithoutStepSummary(t *testing.T) {
	results := goldenResults(t)
	t.Setenv(stepSummaryEnv, "")
	var stdout, stderr bytes.Buffer
	g := &globalOptions{format: formatGitHub, stdout: &stdout, stderr: &stderr}
	require.NoError(t, g.writeGate(results))
	assert.Contains(t, stdout.String(), "::notice title=geas gate m1/t1::verdict FAIL")
	assert.Empty(t, stderr.String())

	t.Setenv(stepSummaryEnv, filepath.Join(t.TempDir(), "missing", "summary.md"))
	stdout.Reset()
	require.NoError(t, g.writeGate(results))
	assert.Contains(t, stdout.String(), "::notice title=geas gate m1/t1::verdict FAIL")
	assert.Contains(t, stderr.String(), "geas: write GITHUB_STEP_SUMMARY")
}
