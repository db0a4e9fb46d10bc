package tiers

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// failOnce records one gate run that fails (the qa-engineer says AC1 does not hold) and returns
// the passing qa evidence, to restore later. The history is [gate-1 fail 3 -> 2].
func failOnce(f *fixture) []byte {
	f.t.Helper()
	qa := f.read(taskFile("evidence/qa-engineer.json"))
	f.evidence("qa-engineer.json", func(m map[string]any) {
		m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
	})
	res := f.gate()
	require.Equal(f.t, vocab.VerdictFail, res.Verdict)
	require.Equal(f.t, intp(2), res.RetryBudgetAfter)
	return qa
}

// assertBuildsNothing runs the gate three times on a tampered history and checks each run is an
// error history_tampered that computes no budget, appends nothing, moves nothing and never blocks
// the task by repetition, and that a dry run and a real run agree.
func assertBuildsNothing(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	before := f.read(taskFile("record.json"))
	status := f.status()
	for i := 0; i < 3; i++ {
		res := f.gate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseHistoryTampered)
		assert.Nil(t, res.RetryBudgetBefore, "run %d: no budget is computed", i+1)
		assert.Nil(t, res.RetryBudgetAfter, "run %d", i+1)
		assert.Nil(t, res.Transition, "run %d", i+1)
		assert.Equal(t, NextInvestigateErr, res.NextAction)
		for _, w := range want {
			assert.Contains(t, causeDetail(res, vocab.CauseHistoryTampered), w, "run %d", i+1)
		}
	}
	assert.Equal(t, string(before), string(f.read(taskFile("record.json"))), "nothing is appended to a tampered history")
	assert.Equal(t, status, f.status(), "three tampered runs do not move the task")
}

func causeDetail(res *Result, code vocab.CauseCode) string {
	for _, c := range res.Causes {
		if c.Code == code {
			return c.Detail
		}
	}
	return ""
}

// TestTheGateDoesNotBuildOnATamperedHistory (SPEC §2.2, §5.1, §7.4): a history that does not
// verify is never built on, with or without GEAS_GATE_KEY, and no edit of it yields a budget.
func TestTheGateDoesNotBuildOnATamperedHistory(t *testing.T) {
	raise := func(h []record.HistoryEntry) []record.HistoryEntry {
		h[0].RetryBudgetAfter = intp(50)
		return h
	}
	t.Run("retry_budget_after edited to 50", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failOnce(f)
		f.record(func(m map[string]any) { history(m)[0].(map[string]any)["retry_budget_after"] = 50 })
		assertBuildsNothing(t, f, "gate_history entry 1 gate-1: hash", "verdict fail takes the budget 3 to 2, but retry_budget_after is 50")
	})
	t.Run("retry_budget_after edited to 50 and re-chained, no key", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failOnce(f)
		f.rewriteHistory(raise)
		assertBuildsNothing(t, f, "verdict fail takes the budget 3 to 2, but retry_budget_after is 50",
			"events.jsonl line 1: gate_result event of gate-1 names history entry")
	})
	// Both budgets of the first entry edited (51 -> 50, which adds up), re-chained, gate_result
	// rewritten and the events deleted: without the key nothing in the project can tell, which is
	// the limit the README's threat model names (keep the key and a copy of the history outside the
	// agents' reach). With the key it is caught:
	t.Run("re-chained with the key set", func(t *testing.T) {
		t.Setenv(record.SigningKeyEnv, "k-history-test")
		f := newFixture(t, true)
		failOnce(f)
		f.rewriteHistory(func(h []record.HistoryEntry) []record.HistoryEntry {
			h[0].RetryBudgetBefore, h[0].RetryBudgetAfter = intp(51), intp(50)
			return h
		})
		f.remove(".geas/state/events.jsonl")
		assertBuildsNothing(t, f, "hmac", "does not verify with GEAS_GATE_KEY")
	})
	t.Run("a history reset forged without the key", func(t *testing.T) {
		t.Setenv(record.SigningKeyEnv, "k-history-test")
		f := newFixture(t, true)
		failOnce(f)
		rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
		require.NoError(t, err)
		old := rec.History()[0].Hash
		f.rewriteHistory(func([]record.HistoryEntry) []record.HistoryEntry {
			return []record.HistoryEntry{{Kind: record.KindHistoryReset, RunID: "reset", RetryBudgetAfter: intp(100),
				Extra: map[string]json.RawMessage{"retries": json.RawMessage(`100`), "superseded_hashes": json.RawMessage(`["` + old + `"]`)}}}
		})
		f.record(func(m map[string]any) { delete(m, "gate_result") })
		assertBuildsNothing(t, f, "gate_history entry 1 reset: no hmac, but GEAS_GATE_KEY is set")
	})
	t.Run("newest entry dropped", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failOnce(f)
		f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "again" }) // a new attempt
		res := f.gate()                                                                   // gate-2: fail 2 -> 1
		require.Equal(t, intp(1), res.RetryBudgetAfter)
		f.record(func(m map[string]any) { m["gate_history"] = history(m)[:1] })
		assertBuildsNothing(t, f, `gate_result.hash`, "does not match the latest gate run, gate_history entry 1 gate-1")
	})
	t.Run("newest entry dropped and gate_result rewritten to the one before", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		failOnce(f)
		f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "again" }) // a new attempt
		f.gate()
		f.rewriteHistory(func(h []record.HistoryEntry) []record.HistoryEntry { return h[:1] })
		assertBuildsNothing(t, f, "events.jsonl line 2: gate_result event of gate-2 names history entry")
	})
	t.Run("record of another task", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.record(func(m map[string]any) { m["task_id"] = "t2" })
		assertBuildsNothing(t, f, `record.json has task_id "t2", but this is task "t1"`)
	})
	t.Run("gate_result written by hand", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.record(func(m map[string]any) {
			m["gate_result"] = map[string]any{"run_id": "gate-1", "verdict": "pass", "hash": strings.Repeat("a", 64)}
		})
		assertBuildsNothing(t, f, `gate_result (run_id "gate-1", verdict "pass"), but gate_history records no gate run`)
	})
	t.Run("record deleted after a run", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		rec := f.read(taskFile("record.json"))
		failOnce(f)
		f.write(taskFile("record.json"), string(rec)) // the record as it was before any run
		f.remove(taskFile(record.HistoryFile))        // and the history beside it deleted
		assertBuildsNothing(t, f, "gate_result event of gate-1 names history entry")
	})
	t.Run("an untouched history is built on", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		qa := failOnce(f)
		f.write(taskFile("evidence/qa-engineer.json"), string(qa))
		res := f.gate()
		assertPass(t, res)
		assert.Equal(t, intp(2), res.RetryBudgetBefore)
		c := checkNamed(res.Checks, "history")
		require.NotNil(t, c)
		assert.Equal(t, StatusPass, c.Status)
		assert.Contains(t, c.Evidence, "1 entry verifies (chained, not signed (GEAS_GATE_KEY is not set)); gate_result is entry 1 gate-1")
		assert.Contains(t, c.Evidence, "1 gate events of this task cross-checked")
	})
}

// TestANullBudgetRunChangesNothing (SPEC §7.1): a run on an unreadable contract records no budget,
// so the first real fail afterwards spends one retry, not the whole budget.
func TestANullBudgetRunChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	good := f.read(taskFile("contract.json"))
	f.write(taskFile("contract.json"), "{")
	res := f.gate()
	assertNotPass(t, res, vocab.VerdictError, vocab.CauseContractInvalid)
	assert.Nil(t, res.RetryBudgetBefore)
	assert.Nil(t, res.RetryBudgetAfter)
	rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
	require.NoError(t, err)
	h := rec.History()
	require.Len(t, h, 1)
	assert.Nil(t, h[0].RetryBudgetBefore, "the history entry records no budget")
	assert.Nil(t, h[0].RetryBudgetAfter)
	var gr map[string]any
	raw, _ := rec.GateResult()
	require.NoError(t, json.Unmarshal(raw, &gr))
	assert.Nil(t, gr["retry_budget_before"])
	assert.Contains(t, gr, "retry_budget_before", "null, not absent")

	f.write(taskFile("contract.json"), string(good))
	failOnce(f) // asserts 3 -> 2: the unreadable run spent nothing
	assert.Equal(t, "integrated", f.status(), "the first real fail does not escalate")
}

// TestASpentBudgetNeedsAnAuthority (SPEC §5.1 budget_spent, §7.1): once the budget is 0 the task
// re-enters the gate only after an authority's grant, whatever transitions were made by hand.
func TestASpentBudgetNeedsAnAuthority(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["retry_budget"] = 1 })
	qa := f.read(taskFile("evidence/qa-engineer.json"))
	f.evidence("qa-engineer.json", func(m map[string]any) {
		m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
	})
	res := f.gate()
	require.Equal(t, vocab.VerdictFail, res.Verdict)
	require.Equal(t, "escalated", f.status())

	// The agent fixes the work and walks the task back along legal edges by hand.
	f.write(taskFile("evidence/qa-engineer.json"), string(qa))
	for _, s := range []string{"implementing", "reviewed", "integrated"} {
		f.contract(func(m map[string]any) { m["status"] = s })
		res = f.gate()
		if s == "integrated" {
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseBudgetSpent)
			assert.Contains(t, causeDetail(res, vocab.CauseBudgetSpent), "retry budget is 0 since gate_history entry 1 gate-1 (fail 1 -> 0) and no grant followed; state integrated does not reopen it")
			assert.Equal(t, intp(0), res.RetryBudgetBefore)
			assert.Equal(t, intp(0), res.RetryBudgetAfter)
			assert.Nil(t, res.Transition)
		} else {
			assert.Contains(t, causeCodes(res.Causes), vocab.CauseBudgetSpent, "state %s", s)
			assert.False(t, res.Verdict.IsPass())
		}
	}
	assert.Equal(t, "integrated", f.status())

	// An authority grants a retry: the gate runs again, and passes.
	rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
	require.NoError(t, err)
	_, err = rec.AppendHistory(record.HistoryEntry{
		Kind: record.KindBudgetGrant, RetryBudgetBefore: intp(0), RetryBudgetAfter: intp(1), StartedAt: "2026-11-02T11:00:00Z",
		Extra: map[string]json.RawMessage{"by": json.RawMessage(`"product-authority"`), "retries": json.RawMessage(`1`)},
	}, testNow)
	require.NoError(t, err)
	require.NoError(t, rec.Write(f.open().Geas, testTaskDir+"/record.json"))
	res = f.gate()
	assertPass(t, res)
	assert.Equal(t, intp(1), res.RetryBudgetBefore)

	// A grant forged by editing the history (no new entry, just a budget of 1) is tampering.
	t.Run("forged reopening", func(t *testing.T) {
		t.Parallel()
		g := newFixture(t, true)
		g.contract(func(m map[string]any) { m["retry_budget"] = 1 })
		g.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "no"}}
		})
		g.gate()
		g.contract(func(m map[string]any) { m["status"] = "integrated" })
		g.rewriteHistory(func(h []record.HistoryEntry) []record.HistoryEntry {
			h[0].RetryBudgetAfter = intp(1)
			return h
		})
		res := g.gate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseHistoryTampered)
		assert.NotContains(t, causeCodes(res.Causes), vocab.CauseBudgetSpent, "no budget is computed over a tampered history")
		assert.Equal(t, StatusSkipped, checkNamed(res.Checks, "budget").Status)
	})
}

// TestChildrenNeverSeeTheKey (SPEC §9): eval commands and script detectors are code the agents
// wrote; they never see GEAS_GATE_KEY, however they look for it.
func TestChildrenNeverSeeTheKey(t *testing.T) {
	const key = "sekrit-gate-key-7f3a"
	t.Setenv(record.SigningKeyEnv, key)
	probe := `env; printenv GEAS_GATE_KEY; echo "[$GEAS_GATE_KEY]"; cat /proc/self/environ | tr '\0' '\n'`
	t.Run("eval command", func(t *testing.T) {
		spec := proc.Spec{Shell: probe, Dir: t.TempDir(), Timeout: 30 * time.Second}
		spec.Env = map[string]string{record.SigningKeyEnv: key}
		run := runProcess(t.Context(), nil, spec, nil, nil)
		assert.False(t, strings.Contains(run.OutputTail, key), "the key is in the child's output")
		assert.True(t, strings.Contains(run.OutputTail, "\n[]\n"), "the child reads an empty GEAS_GATE_KEY")
	})
	t.Run("script detector argv", func(t *testing.T) {
		spec := proc.Spec{Argv: []string{"sh", "-c", probe}, Dir: t.TempDir(), Timeout: 30 * time.Second}
		run := runProcess(t.Context(), nil, spec, nil, nil)
		assert.False(t, strings.Contains(run.OutputTail, key), "the key is in the child's output")
		assert.True(t, strings.Contains(run.OutputTail, "\n[]\n"), "the child reads an empty GEAS_GATE_KEY")
	})
	t.Run("a whole gate run", func(t *testing.T) {
		f := newFixture(t, true)
		acceptExposure(f)
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{`test -z "$GEAS_GATE_KEY" && ! env | grep -q ` + key}
		})
		res := f.gate()
		assertPass(t, res)
		rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
		require.NoError(t, err)
		assert.NotEmpty(t, rec.History()[0].HMAC, "the gate itself still signs with the key")
	})
}

// acceptExposure writes a policy that accepts the signing key's exposure, untracked and ignored
// (so the working-tree check does not see it, and it is read from the working tree).
func acceptExposure(f *fixture) {
	f.write(".geas/gate-policy.json", `{"key_exposure": "accept"}`)
	f.write(".git/info/exclude", ".geas/gate-policy.json\n")
}

// TestAKeyTheCodeCouldReadRefusesTheRun (SPEC §9): with GEAS_GATE_KEY in the gate's environment
// and the eval commands run as the gate's own user, they could read the key from the environment
// of the processes that started the gate; the run is refused before anything runs (key_exposed),
// records nothing and spends no retry. The policy may accept the exposure, and then every run
// says so. A run that runs no code, or a gate without a key, has nothing to refuse.
func TestAKeyTheCodeCouldReadRefusesTheRun(t *testing.T) {
	t.Setenv(record.SigningKeyEnv, "sekrit-gate-key-7f3a")
	markers := map[*fixture]string{}
	marker := func(f *fixture) string { return markers[f] }
	withEval := func(f *fixture) {
		markers[f] = filepath.Join(t.TempDir(), "ran")
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"touch " + marker(f)} })
	}

	t.Run("refused", func(t *testing.T) {
		f := newFixture(t, true)
		withEval(f)
		recordFile := ".geas/" + testTaskDir + "/record.json"
		before := f.read(recordFile)
		events := len(f.events())
		res := f.gate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseKeyExposed)
		assert.True(t, res.Refused())
		assert.True(t, res.RefusedByEvaluation(), "the evaluation holds its refusal as data")
		assert.NoFileExists(t, marker(f), "an eval command ran")
		assert.Nil(t, res.RetryBudgetBefore, "no budget is computed")
		assert.Nil(t, res.Transition)
		assert.Equal(t, string(before), string(f.read(recordFile)), "the refused run wrote to the record")
		assert.NoDirExists(t, f.path(".geas/"+testTaskDir+"/gate-logs/gate-1"), "the refused run kept a log directory")
		assert.Len(t, f.events(), events, "the refused run logged an event")
		assert.Contains(t, checkNamed(res.Checks, "key_exposure").Evidence, "GEAS_GATE_KEY is in the environment")
	})
	t.Run("refused under keep-going", func(t *testing.T) {
		f := newFixture(t, true)
		withEval(f)
		_, res, _ := f.evaluate(Options{DryRun: true, KeepGoing: true, Now: testNow})
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseKeyExposed)
		assert.NoFileExists(t, marker(f), "an eval command ran")
	})
	t.Run("a broken policy accepts nothing", func(t *testing.T) {
		f := newFixture(t, true)
		acceptExposure(f)
		f.write(".geas/gate-policy.json", `{"key_exposure": "accept", "judge_independence": "lenient"}`)
		withEval(f)
		_, res, _ := f.evaluate(Options{DryRun: true, KeepGoing: true, Now: testNow})
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseKeyExposed)
		assert.Contains(t, checkNamed(res.Checks, "key_exposure").Evidence, "the policy does not parse")
		assert.NoFileExists(t, marker(f), "an eval command ran")
	})
	t.Run("accepted", func(t *testing.T) {
		f := newFixture(t, true)
		acceptExposure(f)
		withEval(f)
		res := f.gate()
		assertPass(t, res)
		assert.FileExists(t, marker(f))
		c := checkNamed(res.Checks, "key_exposure")
		require.NotNil(t, c)
		assert.Equal(t, StatusWarn, c.Status)
		assert.Equal(t, vocab.CauseKeyExposed, c.Code)
		assert.Contains(t, c.Evidence, "THE SIGNING KEY IS EXPOSED")
	})
	t.Run("accepted, but not past a tier 0 that did not pass", func(t *testing.T) {
		f := newFixture(t, true)
		acceptExposure(f)
		withEval(f)
		f.record(func(m map[string]any) { delete(m, "self_check") })
		_, res, _ := f.evaluate(Options{DryRun: true, KeepGoing: true, Now: testNow})
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingSelfCheck)
		assert.NoFileExists(t, marker(f), "--keep-going ran an eval command with the key exposed past a failed tier 0")

		g := newFixture(t, true) // the control: the same without the accepted exposure runs tier 1
		t.Setenv(record.SigningKeyEnv, "")
		withEval(g)
		g.record(func(m map[string]any) { delete(m, "self_check") })
		_, res, _ = g.evaluate(Options{DryRun: true, KeepGoing: true, Now: testNow})
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingSelfCheck)
		assert.FileExists(t, marker(g), "--keep-going runs tier 1 when no key is at stake")
	})
	t.Run("no code runs", func(t *testing.T) {
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{} })
		_, res, _ := f.evaluate()
		assert.Nil(t, checkNamed(res.Checks, "key_exposure"), "a run that runs no code exposes nothing")
		assert.NotContains(t, causeCodes(res.Causes), vocab.CauseKeyExposed)
	})
	t.Run("no key", func(t *testing.T) {
		t.Setenv(record.SigningKeyEnv, "")
		f := newFixture(t, true)
		withEval(f)
		res := f.gate()
		assertPass(t, res)
		assert.Nil(t, checkNamed(res.Checks, "key_exposure"), "without a key there is nothing to protect")
	})
}

// TestLogsNeverLeaveTheProject (SPEC §3) lives in exec_test.go
// (TestRunProcessLogErrors) for the runner and in testdata/script/hist_logs.txtar end to end.

func checkNamed(checks []Check, name string) *Check {
	for i := range checks {
		if checks[i].Name == name {
			return &checks[i]
		}
	}
	return nil
}

// TestAZeroContractBudgetIsNotSpent: a contract whose retry_budget is 0 has spent nothing; runs
// that block at 0 -> 0 do not make it budget_spent, and its first fail escalates.
func TestAZeroContractBudgetIsNotSpent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) { m["retry_budget"] = 0 })
	qa := f.read(taskFile("evidence/qa-engineer.json"))
	f.remove(taskFile("evidence/qa-engineer.json"))
	res := f.gate()
	assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingReview)
	res = f.gate()
	assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingReview)
	assert.NotContains(t, causeCodes(res.Causes), vocab.CauseBudgetSpent)
	f.write(taskFile("evidence/qa-engineer.json"), string(qa))
	f.evidence("qa-engineer.json", func(m map[string]any) {
		m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "no"}}
	})
	res = f.gate()
	assert.Equal(t, vocab.VerdictFail, res.Verdict)
	assert.Equal(t, "escalated", f.status())
	f.contract(func(m map[string]any) { m["status"] = "integrated" })
	assertNotPass(t, f.gate(), vocab.VerdictBlock, vocab.CauseBudgetSpent)
}

// TestTheHistoryCheckCrossChecksTheEventsTheLockRead: the events the crash completion read under
// the run's lock are the ones the history check cross-checks: an event among them that names an
// entry the history does not hold is named, though the log on disk holds nothing; the entry's own
// event is not.
func TestTheHistoryCheckCrossChecksTheEventsTheLockRead(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	rec := withHistory(t, gateRun("fail", 2, vocab.CauseEvalFailed))
	in := u.run(unitContract(), rec).in
	entry := rec.History()[0]

	honest := *in
	honest.taskEvents = &TaskEvents{Hashes: []record.EventHash{{Line: 1, EventType: record.EventGateResult, RunID: entry.RunID, Hash: entry.Hash}}}
	problems, summary := VerifyHistory(&honest, nil)
	assert.NotContains(t, strings.Join(problems, "; "), "events.jsonl line")
	assert.Contains(t, summary, "1 gate events of this task cross-checked")

	forged := *in
	forged.taskEvents = &TaskEvents{Hashes: []record.EventHash{{Line: 7, EventType: record.EventGateResult, RunID: "gate-9", Hash: strings.Repeat("ab", 32)}}}
	problems, _ = VerifyHistory(&forged, nil)
	assert.Contains(t, strings.Join(problems, "; "), "events.jsonl line 7: gate_result event of gate-9 names history entry abababababab, which gate_history does not hold")
}

// TestTheHistoryCheckVerifiesTheOtherTasksHistoriesAsItsOwn: tier 0's history check verifies this
// task's history and, in the same loop, those of the other tasks the snapshot read, each as
// HistoryProblems would verify it alone, each at the index of its task; attribution confirms
// their passes from that. A task whose history does not verify has no standing pass to offer; the
// task itself and a record read without its facts are not verified as others.
func TestTheHistoryCheckVerifiesTheOtherTasksHistoriesAsItsOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	in := f.gather()
	require.NotNil(t, in.Record)
	require.NotNil(t, in.Facts)
	key := record.SigningKey()
	mine, summary := VerifyHistory(in, key)
	honest := OtherTask{ID: in.Task + "-twin", Dir: in.TaskDir, Record: in.Record, Facts: in.Facts}
	in.Others = []OtherTask{
		honest, // another id than its record's task_id: does not verify
		{ID: in.Task, Record: in.Record, Facts: in.Facts}, // the task itself
		{ID: "unread", Record: in.Record},                 // read without its facts
	}
	problems, gotSummary, others := histories(in, key)
	assert.Equal(t, mine, problems, "this task's history, as VerifyHistory says")
	assert.Equal(t, summary, gotSummary)
	require.Len(t, others, len(in.Others), "one answer per other task, at its index")
	want := HistoryProblems(otherSnapshot(in, honest), key)
	require.NotEmpty(t, want, "a record of another task_id does not verify")
	assert.Equal(t, want, others[0].problems)
	assert.False(t, others[0].stands, "a history that does not verify offers no pass")
	assert.Zero(t, others[1], "the task itself is not another task")
	assert.Zero(t, others[2], "a record without its facts is refused by attribution before it looks")

	in.Others = nil
	_, _, others = histories(in, key)
	assert.Nil(t, others, "no other task, nothing verified")
}
