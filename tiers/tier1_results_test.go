package tiers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/vocab"
)

// tapOf prints TAP with sh's printf.
func tapOf(lines ...string) string {
	return "printf '" + strings.Join(lines, `\n`) + `\n'`
}

// TestMeasuredResultsBeatTheExitCode (SPEC §5.2a, invariant 10): a command that declares its
// results passes only when they say tests ran and none failed; the exit code alone does not.
func TestMeasuredResultsBeatTheExitCode(t *testing.T) {
	tap := &contract.Results{Format: contract.ResultsTAP}
	gojson := &contract.Results{Format: contract.ResultsGoTestJSON}
	junit := &contract.Results{Format: contract.ResultsJUnit, Glob: "reports/*.xml"}
	for _, tc := range []struct {
		name     string
		cmd      contract.EvalCommand
		status   Status
		code     vocab.CauseCode
		evidence []string
	}{
		{"tap all pass", contract.EvalCommand{Run: tapOf("1..2", "ok 1 - adds", "ok 2 - subtracts # SKIP no"), Results: tap},
			StatusPass, "", []string{"exit 0 in ", "tests: 1 passed, 0 failed, 1 skipped (TAP output)"}},
		{"tap failure under exit 0", contract.EvalCommand{Run: tapOf("1..2", "ok 1 - adds", "not ok 2 - farewell says goodbye"), Results: tap},
			StatusFail, vocab.CauseEvalFailed, []string{"exit 0 in ", " but tests: 1 passed, 1 failed, 0 skipped (TAP output); failing: \"farewell says goodbye\""}},
		{"tap plan cut short under exit 0", contract.EvalCommand{Run: tapOf("1..5", "ok 1 - a", "ok 2 - b", "ok 3 - c"), Results: tap},
			StatusFail, vocab.CauseEvalFailed, []string{`failing: "plan 1..5 but 3 test points"`}},
		{"tap zero tests", contract.EvalCommand{Run: tapOf("1..0"), Results: tap},
			StatusFail, vocab.CauseTestsMissing, []string{"its results (TAP output) say no test ran (0 passed, 0 failed, 0 skipped)"}},
		{"echo ok is a test point without a plan", contract.EvalCommand{Run: "echo ok farewell", Results: tap},
			StatusFail, vocab.CauseEvalFailed, []string{`1 passed, 1 failed`, `failing: "no plan: 1 test points`}},
		{"output that is not TAP", contract.EvalCommand{Run: "echo all good", Results: tap},
			StatusFail, vocab.CauseTestsMissing, []string{"no test ran"}},
		{"all skipped is no test ran", contract.EvalCommand{Run: tapOf("1..1", "ok 1 - a # SKIP"), Results: tap},
			StatusFail, vocab.CauseTestsMissing, []string{"say no test ran (0 passed, 0 failed, 1 skipped)"}},
		{"go json package failure", contract.EvalCommand{Run: `echo '{"Action":"fail","Package":"example.com/m"}'`, Results: gojson},
			StatusFail, vocab.CauseEvalFailed, []string{`failing: "example.com/m [package failed]"`}},
		{"go json nonzero exit keeps eval_failed and names the test", contract.EvalCommand{Run: `echo '{"Action":"fail","Package":"p","Test":"TestX"}'; exit 1`, Results: gojson},
			StatusFail, vocab.CauseEvalFailed, []string{"must exit 0 — exited 1 in ", `tests: 0 passed, 1 failed, 0 skipped (go test -json output); failing: "p.TestX"; full log: `}},
		{"junit written", contract.EvalCommand{Run: `mkdir -p reports && printf '<testsuite><testcase classname="c" name="ok"/></testsuite>' > reports/a.xml`, Results: junit},
			StatusPass, "", []string{"tests: 1 passed, 0 failed, 0 skipped (JUnit files reports/*.xml)"}},
		{"junit missing", contract.EvalCommand{Run: `true`, Results: junit},
			StatusFail, vocab.CauseTestsMissing, []string{`its results (JUnit files reports/*.xml) cannot be read: no results file: nothing matches "reports/*.xml"`}},
		{"junit missing with nonzero exit stays eval_failed", contract.EvalCommand{Run: `exit 2`, Results: junit},
			StatusFail, vocab.CauseEvalFailed, []string{"must exit 0 — exited 2 in ", "cannot be read: no results file"}},
		{"no results declared: the exit code decides", contract.EvalCommand{Run: tapOf("not ok 1 - x")},
			StatusPass, "", []string{"exit 0 in "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tier1Project(t, tc.cmd)
			checks, runs, _ := tier1(t.Context(), in)
			require.Len(t, checks, 1)
			require.Len(t, runs, 1)
			c := checks[0]
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Equal(t, tc.code, c.Code)
			for _, want := range tc.evidence {
				assert.Contains(t, c.Evidence, want)
			}
			if tc.cmd.Results != nil {
				assert.Contains(t, c.Text, "list tests run, none failed")
			}
		})
	}
}

// TestAJUnitReportLeftBeforeTheRunDoesNotCount: a report committed or left in the tree (all
// green), even one written an instant before the run, cannot stand for a run that wrote none.
func TestAJUnitReportLeftBeforeTheRunDoesNotCount(t *testing.T) {
	in := tier1Project(t, contract.EvalCommand{Run: "true", Results: &contract.Results{Format: contract.ResultsJUnit, Glob: "reports/*.xml"}})
	p := filepath.Join(in.ProjectDir, "reports", "junit.xml")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(`<testsuite><testcase name="forged"/></testsuite>`), 0o644))
	checks, runs, _ := tier1(t.Context(), in)
	require.Len(t, checks, 1)
	assert.Equal(t, StatusFail, checks[0].Status)
	assert.Equal(t, vocab.CauseTestsMissing, checks[0].Code)
	assert.Contains(t, checks[0].Evidence, "reports/junit.xml: stale: it was there before the command ran")
	require.NotNil(t, runs[0].Tests)
	assert.Contains(t, runs[0].Tests.Error, "stale")
	assert.Nil(t, runs[0].TestResults, "results that could not be read give no names to compare")

	// The honest control: the command writes the same report itself.
	in = tier1Project(t, contract.EvalCommand{Run: `mkdir -p reports && printf '<testsuite><testcase name="real"/></testsuite>' > reports/junit.xml`,
		Results: &contract.Results{Format: contract.ResultsJUnit, Glob: "reports/*.xml"}})
	checks, runs, _ = tier1(t.Context(), in)
	require.Len(t, checks, 1)
	assert.Equal(t, StatusPass, checks[0].Status, checks[0].Evidence)
	require.NotNil(t, runs[0].TestResults)
	assert.Contains(t, runs[0].TestResults.Names, "real")
	assert.Equal(t, &TestCounts{Results: "junit", Passed: 1}, runs[0].Tests)
}

// TestDeclaredResultsKeepEveryNameForAComparison: the run carries every test's outcome by name.
func TestDeclaredResultsKeepEveryNameForAComparison(t *testing.T) {
	in := tier1Project(t, contract.EvalCommand{Run: tapOf("1..3", "ok 1 - a", "ok 2 - b # SKIP", "ok 3 - c"), Results: &contract.Results{Format: contract.ResultsTAP}})
	_, runs, _ := tier1(t.Context(), in)
	require.Len(t, runs, 1)
	require.NotNil(t, runs[0].TestResults)
	assert.Equal(t, 3, len(runs[0].TestResults.Names))
	assert.False(t, runs[0].TestResults.Truncated)
	assert.Equal(t, &TestCounts{Results: "tap", Passed: 2, Skipped: 1}, runs[0].Tests)
}
