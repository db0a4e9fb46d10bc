package tiers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// repeatFixture is the example task whose one eval command appends a line to a counter outside
// the project (so the working tree stays the head) and fails unless the flag file exists.
func repeatFixture(t *testing.T) (f *fixture, counter, flag string) {
	t.Helper()
	f = newFixture(t, true)
	dir := t.TempDir()
	counter, flag = filepath.Join(dir, "count"), filepath.Join(dir, "flag")
	f.contract(func(m map[string]any) {
		m["eval_commands"] = []any{"echo run >> '" + counter + "'; test -f '" + flag + "'"}
	})
	f.commit("eval command")
	return f, counter, flag
}

func runsCounted(t *testing.T, counter string) int {
	t.Helper()
	b, err := os.ReadFile(counter)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "run\n")
}

func historyLen(t *testing.T, f *fixture) int {
	t.Helper()
	return len(f.gather().Record.History())
}

// TestAFailOnAnUnchangedAttemptIsRepeatedAndRunsNothing (SPEC §7.1): the run after a fail, with
// the head, the inputs and the rules unchanged, runs no eval command, reports the recorded run's
// verdict and causes with repeat_of, spends nothing and records nothing.
func TestAFailOnAnUnchangedAttemptIsRepeatedAndRunsNothing(t *testing.T) {
	f, counter, _ := repeatFixture(t)
	first := f.gate()
	require.Equal(t, vocab.VerdictFail, first.Verdict)
	require.Empty(t, first.RepeatOf)
	assert.Equal(t, 3, *first.RetryBudgetBefore)
	assert.Equal(t, 2, *first.RetryBudgetAfter)
	require.Equal(t, 1, runsCounted(t, counter))

	for range 3 {
		again := f.gate()
		assert.Equal(t, first.RunID, again.RepeatOf)
		assert.Equal(t, vocab.VerdictFail, again.Verdict)
		assert.Equal(t, causeCodes(first.Causes), causeCodes(again.Causes))
		assert.Equal(t, 2, *again.RetryBudgetBefore)
		assert.Equal(t, 2, *again.RetryBudgetAfter)
		assert.Nil(t, again.Transition)
		assert.Equal(t, NextFix, again.NextAction)
		assert.Empty(t, again.EvalRuns)
	}
	assert.Equal(t, 1, runsCounted(t, counter), "a repeat runs no eval command")
	assert.Equal(t, 1, historyLen(t, f), "a repeat appends nothing to the history")
	assert.Equal(t, "integrated", f.status())
}

// TestAFlakyCheckCannotTurnAnUnchangedFailIntoAPass (SPEC §7.1): whatever the eval command would
// say now, an unchanged attempt is the recorded fail; a change of the evidence is a new attempt,
// judged afresh (and spends a retry when it fails).
func TestAFlakyCheckCannotTurnAnUnchangedFailIntoAPass(t *testing.T) {
	f, counter, flag := repeatFixture(t)
	require.Equal(t, vocab.VerdictFail, f.gate().Verdict)
	require.NoError(t, os.WriteFile(flag, nil, 0o644)) // the check would pass now
	res := f.gate()
	assert.Equal(t, vocab.VerdictFail, res.Verdict)
	assert.Equal(t, "gate-1", res.RepeatOf)
	assert.Equal(t, 1, runsCounted(t, counter))

	// Control: a new attempt (the evidence changed) is recomputed, and passes.
	f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "ran it again" })
	res = f.gate()
	assert.Empty(t, res.RepeatOf)
	assertPass(t, res)
	assert.Equal(t, 2, runsCounted(t, counter))
}

// TestAnyChangeMakesANewAttempt: a commit, an evidence change, a contract change and a later
// history entry of another kind (an approval) each make the next run judge afresh.
func TestAnyChangeMakesANewAttempt(t *testing.T) {
	changes := map[string]func(f *fixture){
		"a commit": func(f *fixture) {
			f.write("greeter/main.go", "package main\n\nfunc main() {}\n\n// again\n")
			f.commit("again")
		},
		"evidence": func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) { m["summary"] = "looked again" })
		},
		"the contract": func(f *fixture) {
			f.contract(func(m map[string]any) { m["retry_budget"] = 5 })
		},
		"an approval": func(f *fixture) { f.approve() },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			f, counter, _ := repeatFixture(t)
			require.Equal(t, vocab.VerdictFail, f.gate().Verdict)
			change(f)
			res := f.gate()
			assert.Empty(t, res.RepeatOf, "a change of %s is a new attempt", name)
			assert.False(t, res.Verdict.IsPass())
			if name != "the contract" { // a changed contract is rules_changed: blocked before tier 1
				assert.Equal(t, vocab.VerdictFail, res.Verdict)
				assert.Equal(t, 2, runsCounted(t, counter))
			}
		})
	}
}

// TestARepeatNeverReportsPass: over recorded verdicts of every kind and a history whose latest
// entry was forged, a run that is a repeat is a fail of a recorded fail, and nothing recorded but
// a verifying fail is ever repeated.
func TestARepeatNeverReportsPass(t *testing.T) {
	for _, recorded := range []vocab.Verdict{vocab.Verdict("pass"), vocab.VerdictFail, vocab.VerdictBlock, vocab.VerdictError} {
		for _, flaky := range []bool{false, true} {
			t.Run(string(recorded)+map[bool]string{false: "", true: "-now-passing"}[flaky], func(t *testing.T) {
				f, _, flag := repeatFixture(t)
				require.Equal(t, vocab.VerdictFail, f.gate().Verdict)
				if recorded != vocab.VerdictFail { // forged without a key, re-chained: the events disagree
					f.rewriteHistory(func(h []record.HistoryEntry) []record.HistoryEntry {
						h[len(h)-1].Verdict = string(recorded)
						return h
					})
				}
				if flaky {
					require.NoError(t, os.WriteFile(flag, nil, 0o644))
				}
				_, res, _ := f.evaluate(Options{Now: testNow})
				if res.RepeatOf != "" {
					assert.Equal(t, vocab.VerdictFail, res.Verdict)
					assert.Equal(t, vocab.VerdictFail, recorded)
				}
				assert.False(t, res.RepeatOf != "" && res.Verdict.IsPass())
				if recorded == vocab.VerdictFail {
					assert.Equal(t, "gate-1", res.RepeatOf, "control: an unchanged fail is repeated")
				} else {
					assert.Empty(t, res.RepeatOf)
				}
			})
		}
	}
}
