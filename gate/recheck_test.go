package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// recheck runs Recheck on the fixture's task.
func (f *fixture) recheck() *tiers.Result {
	f.T.Helper()
	res, err := Recheck(f.T.Context(), f.Open(), testMission, testTask, testTaskDir)
	require.NoError(f.T, err)
	require.True(f.T, res.Recheck)
	return res
}

// TestAFinishedTaskIsRecheckedNotRegated: geas gate on a verified or passed task is the re-check
// of geas gate verify (SPEC §7.2). It holds (exit 0) while the pass holds, does not (exit 1) once
// the evidence no longer passes, and a state the records do not back is never shown as a pass,
// even when a fresh evaluation would pass. Nothing is written.
func TestAFinishedTaskIsRecheckedNotRegated(t *testing.T) {
	t.Parallel()
	t.Run("intact", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failThenPass(f)
		before := f.Read(testfixture.TaskFile("record.json"))
		res := f.recheck()
		assertPass(t, res)
		assert.Equal(t, 0, ExitCode(res))
		assert.Nil(t, res.Transition)
		assert.Equal(t, tiers.NextProceed, res.NextAction)
		assert.Equal(t, tiers.StatusPass, findCheck(t, res.Checks, "recorded_pass").Status)
		assert.Equal(t, intp(2), res.RetryBudgetBefore, "shown as it stands: the fail spent one")
		assert.Equal(t, res.RetryBudgetBefore, res.RetryBudgetAfter, "a recheck spends nothing")
		assert.Equal(t, string(before), string(f.Read(testfixture.TaskFile("record.json"))))
		assert.Equal(t, "verified", f.Status())
	})
	t.Run("revoked", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failThenPass(f)
		f.Remove(testfixture.TaskFile("evidence/qa-engineer.json"))
		res := f.recheck()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingReview)
		assert.Equal(t, 1, ExitCode(res), "a recheck that does not hold exits 1, whatever the fresh verdict")
		assert.Equal(t, NextRevoke, res.NextAction)
		assert.Contains(t, res.Notes[len(res.Notes)-1], "geas gate verify --apply --task "+testTask)
		assert.Equal(t, "verified", f.Status())
	})
	for _, state := range []string{"verified", "passed"} {
		t.Run(state+" set by hand", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.Contract(func(m map[string]any) { m["status"] = state })
			res := f.recheck()
			assertNotPass(t, res, vocab.VerdictError, vocab.CauseStateUnverified)
			c := findCheck(t, res.Checks, "recorded_pass")
			assert.Contains(t, c.Evidence, "task is "+state+" but gate_history records no gate run")
			assert.Equal(t, 0, c.Tier)
			assert.Equal(t, tiers.StatusError, res.TierResults["tier_0"].Status)
			assert.Equal(t, 1, ExitCode(res))
			assert.Equal(t, tiers.NextInvestigateErr, res.NextAction)
			assert.Less(t, res.Summary.Passed, res.Summary.Total)
			// The fresh evaluation alone would pass: only the records make this a non-pass.
			_, fresh, _ := f.evaluate(tiers.Options{Verify: true, DryRun: true, Now: testNow})
			assertPass(t, fresh)
		})
	}
}
