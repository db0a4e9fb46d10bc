package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordedResults are four recorded gate runs (fail, pass, error, block) whose volatile fields
// (times, durations, hashes, commits) were fixed by hand; between them they hold every check
// status, checks with locations, and evidence with characters every format must escape. The cmd
// golden tests render them too.
func recordedResults(t *testing.T) []*tiers.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "results.json"))
	require.NoError(t, err)
	var results []*tiers.Result
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results, 4)
	return results
}

// recordedResult is one run of the tiers test fixture's example project, as Evaluate returned it
// (the run's duration fixed by hand), from testdata/NAME.
func recordedResult(t *testing.T, name string) *tiers.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var res tiers.Result
	require.NoError(t, json.Unmarshal(b, &res))
	return &res
}

// checkGolden compares got with testdata/NAME, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./report -run TestGolden -update to create it")
	assert.Equal(t, string(want), string(got), "%s differs; run with -update if the change is intended", name)
}

// TestGoldenGate renders the recorded runs in every format of geas gate and compares each with
// its golden file, and the GitHub job summary with its own.
func TestGoldenGate(t *testing.T) {
	results := recordedResults(t)
	for _, tc := range []struct {
		format, golden string
		results        []*tiers.Result
	}{
		{format: Text, golden: "gate.txt", results: results},
		{format: JSON, golden: "gate-one.json", results: results[:1]},
		{format: JSON, golden: "gate.json", results: results},
		{format: JUnit, golden: "gate.junit.xml", results: results},
		{format: GitHub, golden: "gate.github.txt", results: results},
		{format: SARIF, golden: "gate.sarif", results: results},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := For(tc.format)
			require.NotNil(t, r, "format %s", tc.format)
			var out bytes.Buffer
			require.NoError(t, r.Gate(&out, tc.results))
			checkGolden(t, tc.golden, out.Bytes())
		})
	}
	t.Run("gate.github-summary.md", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, WriteGitHubSummary(&out, results))
		checkGolden(t, "gate.github-summary.md", out.Bytes())
	})
}

// TestUnknownFormatHasNoRenderer: a format the gate does not know is refused, never rendered as
// another.
func TestUnknownFormatHasNoRenderer(t *testing.T) {
	for _, name := range []string{"", "TEXT", "xml", "junit "} {
		assert.Nil(t, For(name), "format %q", name)
	}
	for _, name := range []string{Text, JSON, JUnit, GitHub, SARIF} {
		assert.NotNil(t, For(name), "format %q", name)
	}
}
