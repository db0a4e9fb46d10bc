package gate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// The example task of internal/testfixture, which the tests of VerifyTask and Recheck judge.
const (
	testMission = testfixture.Mission
	testTask    = testfixture.Task
	testTaskDir = testfixture.TaskDir
)

var testNow = testfixture.Now

// fixture is the example project of internal/testfixture with the runs these tests make on it.
type fixture struct{ *testfixture.Fixture }

// newFixture makes the example task (passing the gate) in a temporary directory, in git when
// withGit.
func newFixture(t *testing.T, withGit bool) *fixture {
	t.Helper()
	return &fixture{testfixture.New(t, withGit)}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testfixture.RemoveTemplate()
	os.Exit(code)
}

// evaluate gathers and evaluates the task with opts (run id gate-N when opts has none) and
// computes the budget; it writes nothing.
func (f *fixture) evaluate(opts tiers.Options) (*tiers.Snapshot, *tiers.Result, bool) {
	f.T.Helper()
	in := tiers.Gather(f.Open(), testMission, testTask, testTaskDir)
	if opts.RunID == "" {
		opts.RunID = tiers.NextRunID(in.Record)
	}
	res, err := tiers.Evaluate(f.T.Context(), in, tiers.DefaultEnv(), opts)
	require.NoError(f.T, err)
	return in, res, tiers.Budget(in, res)
}

// gate is one full, writing gate run at testNow: evaluate, budget, apply (on a finished task too,
// which the gate refuses as state_ineligible; Run would re-check it instead).
func (f *fixture) gate() *tiers.Result {
	f.T.Helper()
	in, res, escalate := f.evaluate(tiers.Options{Now: testNow})
	require.NoError(f.T, tiers.Apply(in, res, escalate, nil, testNow))
	return res
}

func intp(n int) *int { return &n }

// findCheck returns the check named name; it fails the test when there is none.
func findCheck(t *testing.T, checks []tiers.Check, name string) tiers.Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	require.Failf(t, "no such check", "no check %q in %+v", name, checks)
	return tiers.Check{}
}

func causeCodes(causes []tiers.Cause) []vocab.CauseCode {
	out := []vocab.CauseCode{}
	for _, c := range causes {
		out = append(out, c.Code)
	}
	return out
}

// assertPass asserts that a result is a pass, showing its causes when it is not.
func assertPass(t *testing.T, res *tiers.Result) {
	t.Helper()
	assert.True(t, res.Verdict.IsPass(), "verdict %s, causes %+v", res.Verdict, res.Causes)
}

// assertNotPass asserts that a result is anything but a pass, with the given verdict and a cause
// of the given code.
func assertNotPass(t *testing.T, res *tiers.Result, verdict vocab.Verdict, code vocab.CauseCode) {
	t.Helper()
	assert.False(t, res.Verdict.IsPass(), "a pass: %+v", res.Checks)
	assert.Equal(t, verdict, res.Verdict, "causes %+v", res.Causes)
	if code != "" {
		assert.Contains(t, causeCodes(res.Causes), code)
	}
}
