package gate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// verify runs VerifyTask on the fixture's task.
func (f *fixture) verify() *VerifyReport {
	f.T.Helper()
	rep, err := VerifyTask(f.T.Context(), f.Open(), testMission, testTask, testTaskDir)
	require.NoError(f.T, err)
	return rep
}

// failThenPass gates the fixture's task twice: a fail (the qa-engineer says AC1 does not hold),
// then, with the evidence fixed, a pass. The history is [gate-1 fail, gate-2 pass].
func failThenPass(f *fixture) {
	f.T.Helper()
	qa := f.Read(testfixture.TaskFile("evidence/qa-engineer.json"))
	f.Evidence("qa-engineer.json", func(m map[string]any) {
		m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
	})
	require.Equal(f.T, vocab.VerdictFail, f.gate().Verdict)
	f.Write(testfixture.TaskFile("evidence/qa-engineer.json"), string(qa))
	assertPass(f.T, f.gate())
	require.Equal(f.T, "verified", f.Status())
}

func TestVerifyTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(f *fixture)
		status   VerifyStatus
		problems []string        // substrings, each found in some problem
		cause    vocab.CauseCode // revoked: a cause code of the fresh evaluation
	}{
		{name: "a fresh pass is intact", setup: func(f *fixture) { assertPass(f.T, f.gate()) }, status: VerifyIntact},
		{name: "a pass after a fail is intact", setup: failThenPass, status: VerifyIntact},
		{name: "a passed task is verified too", setup: func(f *fixture) {
			assertPass(f.T, f.gate())
			f.Contract(func(m map[string]any) { m["status"] = "passed" })
		}, status: VerifyIntact},
		{name: "deleting the review revokes the pass", setup: func(f *fixture) {
			assertPass(f.T, f.gate())
			f.Remove(testfixture.TaskFile("evidence/qa-engineer.json"))
		}, status: VerifyRevoked, cause: vocab.CauseMissingReview},
		{name: "an edited history verdict is tampered", setup: func(f *fixture) {
			failThenPass(f)
			f.Record(func(m map[string]any) { testfixture.History(m)[0].(map[string]any)["verdict"] = "pass" })
		}, status: VerifyTampered, problems: []string{"gate_history entry 1 gate-1: hash", "does not match its content"}},
		{name: "a gate_result set to pass by hand after a fail is tampered", setup: func(f *fixture) {
			f.Evidence("qa-engineer.json", func(m map[string]any) {
				m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
			})
			require.Equal(f.T, vocab.VerdictFail, f.gate().Verdict)
			f.Record(func(m map[string]any) { m["gate_result"].(map[string]any)["verdict"] = "pass" })
			f.Contract(func(m map[string]any) { m["status"] = "verified" })
		}, status: VerifyTampered, problems: []string{
			`gate_result.verdict "pass" does not match the latest gate run, gate_history entry 1 gate-1 (verdict "fail")`,
			"task is verified but its latest gate run, gate_history entry 1 gate-1, has verdict fail, not pass",
		}},
		{name: "a state moved to verified by hand is tampered", setup: func(f *fixture) {
			f.Evidence("qa-engineer.json", func(m map[string]any) { m["criteria_results"] = []any{} })
			require.Equal(f.T, vocab.VerdictBlock, f.gate().Verdict)
			f.Contract(func(m map[string]any) { m["status"] = "verified" })
		}, status: VerifyTampered, problems: []string{"has verdict block, not pass"}},
		{name: "verified without any gate run is tampered", setup: func(f *fixture) {
			f.Contract(func(m map[string]any) { m["status"] = "verified" })
		}, status: VerifyTampered, problems: []string{"task is verified but gate_history records no gate run"}},
		{name: "a deleted first entry is tampered", setup: func(f *fixture) {
			failThenPass(f)
			f.Record(func(m map[string]any) { m["gate_history"] = testfixture.History(m)[1:] })
		}, status: VerifyTampered, problems: []string{"gate_history entry 1 gate-2: prev_hash"}},
		{name: "a deleted last entry is tampered", setup: func(f *fixture) {
			failThenPass(f)
			f.Record(func(m map[string]any) { m["gate_history"] = testfixture.History(m)[:1] })
		}, status: VerifyTampered, problems: []string{"gate_result.hash", "gate_result.run_id \"gate-2\" does not match the latest gate run, gate_history entry 1 gate-1"}},
		{name: "reordered entries are tampered", setup: func(f *fixture) {
			failThenPass(f)
			f.Record(func(m map[string]any) {
				h := testfixture.History(m)
				h[0], h[1] = h[1], h[0]
			})
		}, status: VerifyTampered, problems: []string{"gate_history entry 1 gate-2: prev_hash"}},
		{name: "a missing gate_result is tampered", setup: func(f *fixture) {
			assertPass(f.T, f.gate())
			f.Record(func(m map[string]any) { delete(m, "gate_result") })
		}, status: VerifyTampered, problems: []string{"no gate_result, but gate_history entry 1 gate-1 is a gate run"}},
		{name: "tampering wins over a revoked evaluation", setup: func(f *fixture) {
			failThenPass(f)
			f.Record(func(m map[string]any) { testfixture.History(m)[0].(map[string]any)["verdict"] = "pass" })
			f.Remove(testfixture.TaskFile("evidence/qa-engineer.json"))
		}, status: VerifyTampered, problems: []string{"does not match its content"}},
		{name: "a gate run refused as state_ineligible after the pass does not count against it", setup: func(f *fixture) {
			assertPass(f.T, f.gate())
			res := f.gate() // the task is verified now: the gate refuses to judge it again
			require.Equal(f.T, vocab.VerdictError, res.Verdict)
			require.Equal(f.T, []vocab.CauseCode{vocab.CauseStateIneligible}, causeCodes(res.Causes))
		}, status: VerifyIntact},
		{name: "an unreadable contract revokes a recorded pass", setup: func(f *fixture) {
			assertPass(f.T, f.gate())
			f.Write(testfixture.TaskFile("contract.json"), "{")
		}, status: VerifyRevoked, cause: vocab.CauseContractInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.setup(f)
			recBefore := f.Read(testfixture.TaskFile("record.json"))
			contractBefore := f.Read(testfixture.TaskFile("contract.json"))
			eventsBefore := f.Events()

			rep := f.verify()
			assert.Equal(t, tc.status, rep.Status, "problems %q, causes %+v", rep.Problems, rep.Causes)
			assert.Equal(t, testMission, rep.MissionID)
			assert.Equal(t, testTask, rep.TaskID)
			require.NotNil(t, rep.Result)
			assert.True(t, rep.Result.DryRun)
			assert.True(t, strings.HasPrefix(rep.Result.RunID, "verify-"), rep.Result.RunID)
			for _, want := range tc.problems {
				assert.True(t, containsSub(rep.Problems, want), "no problem contains %q: %q", want, rep.Problems)
			}
			switch tc.status {
			case VerifyRevoked:
				assert.Empty(t, rep.Problems)
				assert.Contains(t, causeCodes(rep.Causes), tc.cause)
				assert.False(t, rep.Result.Verdict.IsPass())
			case VerifyIntact:
				assert.Empty(t, rep.Problems)
				assert.Empty(t, rep.Causes)
				assertPass(t, rep.Result)
			case VerifyTampered:
				assert.NotEmpty(t, rep.Problems)
			}
			// VerifyTask never writes.
			assert.Equal(t, string(recBefore), string(f.Read(testfixture.TaskFile("record.json"))))
			assert.Equal(t, string(contractBefore), string(f.Read(testfixture.TaskFile("contract.json"))))
			assert.Equal(t, eventsBefore, f.Events())
		})
	}
}

// TestVerifyTaskOnlyAppliesToPassedTasks: a task the gate has not passed has nothing to verify.
func TestVerifyTaskOnlyAppliesToPassedTasks(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"integrated", "reviewed", "escalated", "blocked", "drafted"} {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, false)
			f.Contract(func(m map[string]any) { m["status"] = state })
			rep, err := VerifyTask(t.Context(), f.Open(), testMission, testTask, testTaskDir)
			require.ErrorIs(t, err, ErrNotPassed)
			assert.Nil(t, rep)
			var np *NotPassedError
			require.ErrorAs(t, err, &np)
			assert.Equal(t, state, np.State)
			assert.Equal(t, "task t1 is "+state+", not verified or passed: nothing to verify", err.Error())
		})
	}
	t.Run("unreadable contract without a recorded pass", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, false)
		f.Write(testfixture.TaskFile("contract.json"), "{")
		_, err := VerifyTask(t.Context(), f.Open(), testMission, testTask, testTaskDir)
		require.ErrorIs(t, err, ErrNotPassed)
	})
}

// TestTheGateCanTakeDoneBackOnVerify (SPEC §2.5) at verify level: a verified task whose required
// review is deleted is revoked by geas gate verify's evaluation, and intact again once the review
// is back.
func TestTheGateCanTakeDoneBackOnVerify(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	qa := f.Read(testfixture.TaskFile("evidence/qa-engineer.json"))
	assertPass(t, f.gate())
	assert.Equal(t, VerifyIntact, f.verify().Status)

	f.Remove(testfixture.TaskFile("evidence/qa-engineer.json"))
	rep := f.verify()
	assert.Equal(t, VerifyRevoked, rep.Status)
	assert.Contains(t, causeCodes(rep.Causes), vocab.CauseMissingReview)
	c := rep.Causes[slicesIndex(causeCodes(rep.Causes), vocab.CauseMissingReview)]
	assert.Equal(t, "review:qa-engineer", c.Check)
	assert.Contains(t, c.Detail, "no evidence file of agent qa-engineer")

	f.Write(testfixture.TaskFile("evidence/qa-engineer.json"), string(qa))
	assert.Equal(t, VerifyIntact, f.verify().Status)
}

// TestSignedHistoryDetectsForgery: with GEAS_GATE_KEY set, an entry edited and re-chained
// with correct hashes is tampered; without the key only the chain is checked, and such a forgery
// goes unseen. An entry edited without re-chaining is tampered either way.
func TestSignedHistoryDetectsForgery(t *testing.T) {
	// No t.Parallel: the key is in the environment.
	const key = "test-key-1"
	setup := func(t *testing.T) *fixture {
		t.Setenv(record.SigningKeyEnv, key)
		f := newFixture(t, true)
		assertPass(t, f.gate())
		rec, err := record.Load(f.Open().Geas, testTaskDir+"/record.json")
		require.NoError(t, err)
		h := rec.History()
		require.Len(t, h, 1)
		require.NotEmpty(t, h[0].HMAC, "signed when the key is set")
		require.Empty(t, record.VerifySignatures(h, []byte(key)))
		return f
	}
	raiseBudget := func(h []record.HistoryEntry) []record.HistoryEntry {
		h[0].RetryBudgetAfter = intp(9)
		return h
	}

	t.Run("signed and untouched is intact", func(t *testing.T) {
		f := setup(t)
		assert.Equal(t, VerifyIntact, f.verify().Status)
	})
	t.Run("re-chained with the stale hmac", func(t *testing.T) {
		f := setup(t)
		f.RewriteHistory(raiseBudget)
		rep := f.verify()
		assert.Equal(t, VerifyTampered, rep.Status)
		assert.True(t, containsSub(rep.Problems, "gate_history entry 1 gate-1: hmac"), "%q", rep.Problems)
		assert.True(t, containsSub(rep.Problems, "does not verify with GEAS_GATE_KEY: forged or re-chained entry"), "%q", rep.Problems)

		// Without the key the hmac is not checked, but the re-chained budget still does not add
		// up, and the run's event names the entry that was replaced.
		t.Setenv(record.SigningKeyEnv, "")
		rep = f.verify()
		assert.Equal(t, VerifyTampered, rep.Status, "without the key, a re-chained raise is still seen")
		assert.True(t, containsSub(rep.Problems, "verdict pass takes the budget 3 to 3, but retry_budget_after is 9"), "%q", rep.Problems)
		assert.True(t, containsSub(rep.Problems, "gate_result event of gate-1 names history entry"), "%q", rep.Problems)
	})
	t.Run("re-chained without hmac", func(t *testing.T) {
		f := setup(t)
		f.RewriteHistory(func(h []record.HistoryEntry) []record.HistoryEntry {
			h = raiseBudget(h)
			h[0].HMAC = ""
			return h
		})
		rep := f.verify()
		assert.Equal(t, VerifyTampered, rep.Status)
		assert.True(t, containsSub(rep.Problems, "no hmac, but GEAS_GATE_KEY is set: forged or re-chained entry"), "%q", rep.Problems)

		t.Setenv(record.SigningKeyEnv, "")
		assert.Equal(t, VerifyTampered, f.verify().Status, "the budget arithmetic and gate_result see it without the key")
	})
	t.Run("verified with another key", func(t *testing.T) {
		f := setup(t)
		t.Setenv(record.SigningKeyEnv, "another-key")
		rep := f.verify()
		assert.Equal(t, VerifyTampered, rep.Status)
		assert.True(t, containsSub(rep.Problems, "does not verify with GEAS_GATE_KEY"), "%q", rep.Problems)
	})
	t.Run("edited without re-chaining", func(t *testing.T) {
		f := setup(t)
		f.Record(func(m map[string]any) { testfixture.History(m)[0].(map[string]any)["retry_budget_after"] = 9 })
		for _, k := range []string{key, ""} {
			t.Setenv(record.SigningKeyEnv, k)
			rep := f.verify()
			assert.Equal(t, VerifyTampered, rep.Status, "key %q", k)
			assert.True(t, containsSub(rep.Problems, "does not match its content"), "key %q: %q", k, rep.Problems)
		}
	})
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func slicesIndex(list []vocab.CauseCode, s vocab.CauseCode) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
