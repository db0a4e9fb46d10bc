//go:build unix

package gate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// holdFirstRun makes the fixture's task fail in tier 1 with an eval command that, in the first
// run only, says it started and then waits while the file hold exists (both outside the project,
// so the working tree stays clean). It returns the started and hold paths.
func holdFirstRun(t *testing.T, f *fixture) (started, hold string) {
	ctl := t.TempDir()
	started, hold = filepath.Join(ctl, "started"), filepath.Join(ctl, "hold")
	script := fmt.Sprintf(`if mkdir '%[1]s/first' 2>/dev/null; then : > '%[2]s'; while [ -f '%[3]s' ]; do sleep 0.02; done; fi; exit 1`, ctl, started, hold)
	f.Contract(func(m map[string]any) {
		m["eval_commands"] = []any{map[string]any{"run": script}}
		m["retry_budget"] = 5
	})
	f.Commit("the eval command fails")
	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	return started, hold
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// history reads the task's gate history and checks its chain.
func (f *fixture) history(t *testing.T) []record.HistoryEntry {
	t.Helper()
	r, err := record.LoadPath(f.Path(testfixture.TaskFile("record.json")))
	require.NoError(t, err)
	h := r.History()
	require.NoError(t, record.VerifyChain(h), "the history verifies")
	return h
}

// TestARemovedLockLosesNoRunAndSpendsEachRetry: run A holds the task lock and is evaluating when
// the lock file is removed or replaced; run B then locks what the path names now and records a
// fail. A notices before its commit point, records nothing of the run it made under the lost
// lock, and runs again under a lock it holds: one history entry per run, distinct run ids, the
// budget spent twice (5 -> 4 -> 3), and a history that verifies. The control (lock untouched)
// serializes A and B the ordinary way: B is then the same attempt as A's fail, and repeats it.
func TestARemovedLockLosesNoRunAndSpendsEachRetry(t *testing.T) {
	lockPath := func(f *fixture) string { return f.Path(testfixture.TaskFile("record.lock")) }
	cases := map[string]func(t *testing.T, f *fixture){
		"untouched (control)": nil,
		"removed":             func(t *testing.T, f *fixture) { require.NoError(t, os.Remove(lockPath(f))) },
		"renamed over": func(t *testing.T, f *fixture) {
			other := f.Path(testfixture.TaskFile("other.lock"))
			require.NoError(t, os.WriteFile(other, []byte("1\n"), 0o644))
			require.NoError(t, os.Rename(other, lockPath(f)))
		},
		"symlink": func(t *testing.T, f *fixture) {
			require.NoError(t, os.Remove(lockPath(f)))
			require.NoError(t, os.Symlink("record.json", lockPath(f)))
		},
		"directory": func(t *testing.T, f *fixture) {
			require.NoError(t, os.Remove(lockPath(f)))
			require.NoError(t, os.Mkdir(lockPath(f), 0o755))
		},
		"fifo": func(t *testing.T, f *fixture) {
			require.NoError(t, os.Remove(lockPath(f)))
			require.NoError(t, syscall.Mkfifo(lockPath(f), 0o644))
		},
	}
	for name, replace := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, true)
			started, hold := holdFirstRun(t, f)
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}

			type outcome struct {
				res *tiers.Result
				err error
			}
			a := make(chan outcome, 1)
			go func() {
				res, err := Run(t.Context(), task, Options{})
				a <- outcome{res, err}
			}()
			waitFor(t, started) // A holds the lock and runs its eval command

			var bRes *tiers.Result
			if replace != nil {
				replace(t, f)
				res, err := Run(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, Options{})
				require.NoError(t, err)
				bRes = res
				// A new attempt for A's second run, so that what is measured is the lock, not
				// whether two runs of one attempt spend one retry.
				f.Evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "ran it again" })
				require.NoError(t, os.Remove(hold))
			} else {
				b := make(chan outcome, 1)
				go func() {
					res, err := Run(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, Options{})
					b <- outcome{res, err}
				}()
				select {
				case o := <-b:
					t.Fatalf("control: B ran while A held the lock: %+v", o)
				case <-time.After(200 * time.Millisecond):
				}
				require.NoError(t, os.Remove(hold))
				o := <-b
				require.NoError(t, o.err)
				bRes = o.res
			}
			o := <-a
			require.NoError(t, o.err)
			aRes := o.res

			assert.Equal(t, vocab.VerdictFail, aRes.Verdict)
			assert.Equal(t, vocab.VerdictFail, bRes.Verdict)
			if replace == nil {
				// Serialized, B is the same attempt as A's recorded fail (SPEC §7.1): it runs
				// nothing, records nothing and spends nothing.
				assert.Equal(t, aRes.RunID, bRes.RepeatOf, "B repeats A")
				h := f.history(t)
				require.Len(t, h, 1, "a repeat appends nothing")
				assert.Equal(t, 4, *h[0].RetryBudgetAfter)
				return
			}
			assert.NotEqual(t, aRes.RunID, bRes.RunID, "no run id twice")
			h := f.history(t)
			require.Len(t, h, 2, "one history entry per run")
			ids := map[string]bool{h[0].RunID: true, h[1].RunID: true}
			assert.Equal(t, map[string]bool{"gate-1": true, "gate-2": true}, ids)
			require.NotNil(t, h[0].RetryBudgetBefore)
			require.NotNil(t, h[1].RetryBudgetAfter)
			assert.Equal(t, 5, *h[0].RetryBudgetBefore)
			assert.Equal(t, 4, *h[0].RetryBudgetAfter)
			assert.Equal(t, 4, *h[1].RetryBudgetBefore)
			assert.Equal(t, 3, *h[1].RetryBudgetAfter, "the budget is spent twice")
			if replace != nil {
				assert.Equal(t, "gate-1", bRes.RunID, "B ran while A was cut off")
				assert.Contains(t, fmt.Sprint(aRes.Notes), "recorded nothing and was started again")
				fi, err := os.Lstat(lockPath(f))
				require.NoError(t, err)
				assert.True(t, fi.Mode().IsRegular(), "the lock file is a regular file again")
			}
			// A later run builds on the history: it verifies, nothing is history_tampered.
			res, err := Run(t.Context(), task, Options{DryRun: true})
			require.NoError(t, err)
			for _, c := range res.Causes {
				assert.NotEqual(t, vocab.CauseHistoryTampered, c.Code, "%s", c.Detail)
			}
		})
	}
}

// TestRunsRecordOnceEachUnderRandomLockReplacement: several runs of one task at once, while the
// lock file is removed or replaced at random; afterwards the history verifies, every run that
// answered is in it exactly once under a run id of its own, and the budget figures chain (each
// entry's before is the previous entry's after): nothing lost, nothing counted twice.
func TestRunsRecordOnceEachUnderRandomLockReplacement(t *testing.T) {
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) {
		m["eval_commands"] = []any{map[string]any{"run": "sleep 0.0$(($$ % 5)); exit 1"}}
		m["retry_budget"] = 100
	})
	f.Commit("the eval command fails")
	lock := f.Path(testfixture.TaskFile("record.lock"))
	dir := filepath.Dir(lock)

	stop := make(chan struct{})
	vandal := make(chan int)
	go func() {
		n := 0
		r := rand.New(rand.NewPCG(3, 4))
		for i := 0; ; i++ {
			wait := time.Duration(10+r.IntN(150)) * time.Millisecond
			if i >= 12 {
				wait = time.Hour // the runs left then finish undisturbed
			}
			select {
			case <-stop:
				vandal <- n
				return
			case <-time.After(wait):
			}
			tmp := filepath.Join(dir, fmt.Sprintf("vandal-%d", i))
			switch r.IntN(4) {
			case 0:
				_ = os.Remove(lock)
			case 1:
				_ = os.WriteFile(tmp, nil, 0o644)
				_ = os.Rename(tmp, lock)
			case 2:
				_ = os.Symlink("record.json", tmp)
				_ = os.Rename(tmp, lock)
			case 3:
				if os.Remove(lock) == nil {
					_ = os.Mkdir(lock, 0o755)
				}
			}
			n++
		}
	}()

	const runs = 6
	results := make(chan *tiers.Result, runs)
	errs := make(chan error, runs)
	for range runs {
		go func() {
			res, err := Run(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, Options{})
			if err != nil {
				errs <- err
				return
			}
			results <- res
		}()
	}
	ids := map[string]int{}
	var repeats []string
	answered := 0
	for range runs {
		select {
		case res := <-results:
			answered++
			assert.Equal(t, vocab.VerdictFail, res.Verdict, "%v", res.Causes)
			if res.RepeatOf != "" { // the same attempt as a recorded run (SPEC §7.1): recorded nothing
				repeats = append(repeats, res.RepeatOf)
				continue
			}
			ids[res.RunID]++
		case err := <-errs:
			// Only a run that lost its lock every time it tried may give up, and it wrote nothing.
			assert.ErrorIs(t, err, fsutil.ErrLockLost)
		}
	}
	close(stop)
	t.Logf("%d runs answered, %d lock files removed or replaced", answered, <-vandal)
	require.Positive(t, answered, "control: runs get through")

	h := f.history(t)
	seen := map[string]bool{}
	for i, e := range h {
		assert.False(t, seen[e.RunID], "run id %s recorded twice", e.RunID)
		seen[e.RunID] = true
		assert.Equal(t, 1, ids[e.RunID], "entry %s is the answer of exactly one run", e.RunID)
		if i > 0 {
			assert.Equal(t, *h[i-1].RetryBudgetAfter, *e.RetryBudgetBefore, "entry %s starts from the budget the one before left", e.RunID)
		}
		assert.Equal(t, *e.RetryBudgetBefore-1, *e.RetryBudgetAfter, "entry %s spent one retry", e.RunID)
	}
	for id := range ids {
		assert.True(t, seen[id], "the answer %s is in the history", id)
	}
	for _, id := range repeats {
		assert.True(t, seen[id], "the run %s a repeat reported is in the history", id)
	}
}

// TestALockLostBetweenEvaluationAndCommitRecordsNothing: the lock file is removed or replaced
// after run A evaluated, right before it writes its result or appends its history entry, and run
// B runs to the end in between. A must not append on top of what it read (B's entry is there
// now): it records nothing of that run and runs again, after B.
func TestALockLostBetweenEvaluationAndCommitRecordsNothing(t *testing.T) {
	for _, step := range []string{"result.json", record.HistoryFile} {
		for _, how := range []string{"removed", "symlink"} {
			t.Run(step+"/"+how, func(t *testing.T) {
				f := newFixture(t, true)
				f.Contract(func(m map[string]any) {
					m["eval_commands"] = []any{map[string]any{"run": "exit 1"}}
					m["retry_budget"] = 5
				})
				f.Commit("the eval command fails")
				task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
				lock := f.Path(testfixture.TaskFile("record.lock"))
				fired := false
				var bRes *tiers.Result
				fsutil.TestHook = func(s string) error {
					if fired || !strings.HasSuffix(s, step) {
						return nil
					}
					fired = true
					require.NoError(t, os.Remove(lock))
					if how == "symlink" {
						require.NoError(t, os.Symlink("record.json", lock))
					}
					res, err := Run(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, Options{})
					require.NoError(t, err)
					bRes = res
					f.Evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "ran it again" })
					return nil
				}
				t.Cleanup(func() { fsutil.TestHook = nil })
				aRes, err := Run(t.Context(), task, Options{})
				require.NoError(t, err)
				require.True(t, fired, "control: the step was reached")
				require.NotNil(t, bRes)
				assert.Equal(t, "gate-1", bRes.RunID)
				assert.Equal(t, "gate-2", aRes.RunID)
				assert.Contains(t, fmt.Sprint(aRes.Notes), "recorded nothing and was started again")
				h := f.history(t)
				require.Len(t, h, 2)
				assert.Equal(t, []string{"gate-1", "gate-2"}, []string{h[0].RunID, h[1].RunID})
				assert.Equal(t, 3, *h[1].RetryBudgetAfter)
			})
		}
	}
}

// TestALockLostWhileGatheringRunsNothing: a run that finds its lock lost once it has read its
// inputs (the lock file replaced between acquisition and gather) starts no eval command and
// writes nothing, not even its log directory; the control, whose lock holds, records its run.
func TestALockLostWhileGatheringRunsNothing(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			f := newFixture(t, true)
			ran := filepath.Join(t.TempDir(), "ran")
			f.Contract(func(m map[string]any) {
				m["eval_commands"] = []any{map[string]any{"run": fmt.Sprintf(": > '%s'; exit 1", ran)}}
			})
			f.Commit("the eval command fails")
			held := func() error { return nil }
			if lost {
				held = func() error { return fmt.Errorf("record.lock was removed while locked: %w", fsutil.ErrLockLost) }
			}
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
			res, err := run(t.Context(), task, Options{}, held, nil)
			_, ranErr := os.Stat(ran)
			_, logErr := os.Stat(f.Path(testfixture.TaskFile("gate-logs")))
			_, histErr := os.Stat(f.Path(testfixture.TaskFile(record.HistoryFile)))
			if !lost {
				require.NoError(t, err)
				assert.Equal(t, vocab.VerdictFail, res.Verdict)
				assert.NoError(t, ranErr, "control: the eval command ran")
				assert.NoError(t, histErr, "control: the run is recorded")
				return
			}
			require.ErrorIs(t, err, fsutil.ErrLockLost)
			assert.ErrorIs(t, ranErr, os.ErrNotExist, "no eval command ran")
			assert.ErrorIs(t, logErr, os.ErrNotExist, "no log directory was made")
			assert.ErrorIs(t, histErr, os.ErrNotExist, "nothing was recorded")
		})
	}
}
