package gate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// TestARecordChangedAfterTheCompletionIsNeverJudgedAsRead (SPEC §7.3, §7.4): a locked run judges
// the record.json its lock's completion read when the completion wrote nothing, so that the file
// is read once. An agent that changes record.json between the completion and the run — in place,
// or by rename with the old file kept alive — never gets the completion's read judged as if it
// were still there: the run's re-check of its inputs sees the change, and the run is an error
// (inputs_changed), never the pass the completion's read alone would give. The control: left
// alone, the run passes.
func TestARecordChangedAfterTheCompletionIsNeverJudgedAsRead(t *testing.T) {
	changes := map[string]func(f *fixture){
		"control: left alone": nil,
		"self_check removed in place": func(f *fixture) {
			f.Record(func(m map[string]any) { delete(m, "self_check") })
		},
		"self_check removed by rename, the old file kept alive": func(f *fixture) {
			path := f.Path(testfixture.TaskFile("record.json"))
			require.NoError(t, os.Link(path, path+".old"))
			data := f.Read(testfixture.TaskFile("record.json"))
			f.Record(func(m map[string]any) { delete(m, "self_check") })
			changed := f.Read(testfixture.TaskFile("record.json"))
			require.NoError(t, os.WriteFile(path, data, 0o644)) // the old bytes back in the old file
			require.NoError(t, os.WriteFile(path+".new", changed, 0o644))
			require.NoError(t, os.Rename(path+".new", path))
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, true)
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
			lock, _, loaded, err := lockTask(t.Context(), task, nil)
			require.NoError(t, err)
			defer lock.Unlock()
			require.NotNil(t, loaded, "the completion wrote nothing: its read is the run's")
			require.NotNil(t, loaded.rec)
			if change != nil {
				change(f)
			}
			res, err := run(t.Context(), task, Options{}, lock.Held, loaded)
			require.NoError(t, err)
			if change == nil {
				assert.True(t, res.Verdict.IsPass(), "control: %s %v", res.Verdict, causeCodes(res.Causes))
				return
			}
			assert.Equal(t, vocab.VerdictError, res.Verdict, "causes %v", causeCodes(res.Causes))
			assert.Contains(t, causeCodes(res.Causes), vocab.CauseInputsChanged)
		})
	}
}

// TestATriagedContractChangedBeforeTheLockIsJudgedAsItIsUnderTheLock (SPEC §7.2, §7.3): geas gate
// --all's triage reads a task's contract before it takes the task's lock and keeps it open; the
// locked run judges that read only while contract.json still holds it. A contract changed in
// between — in place, by rename with the old file kept alive, or by a hard link to other bytes —
// is judged as it is under the lock (here a reviewer the evidence lacks: block, missing_review),
// never as the triage read it (a pass, or an error once the re-check saw the change). The
// control: left alone, the run passes on the triage's read.
func TestATriagedContractChangedBeforeTheLockIsJudgedAsItIsUnderTheLock(t *testing.T) {
	name := testfixture.TaskFile("contract.json")
	stricter := func(f *fixture) []byte {
		data := f.Read(name)
		f.Contract(func(m map[string]any) {
			r := m["routing"].(map[string]any)
			r["required_reviewer_types"] = append(r["required_reviewer_types"].([]any), "security-engineer")
		})
		stricter := f.Read(name)
		require.NoError(t, os.WriteFile(f.Path(name), data, 0o644))
		return stricter
	}
	changes := map[string]func(f *fixture){
		"control: left alone": nil,
		"rewritten in place": func(f *fixture) {
			require.NoError(t, os.WriteFile(f.Path(name), stricter(f), 0o644))
		},
		"replaced by rename, the old file kept alive": func(f *fixture) {
			path := f.Path(name)
			require.NoError(t, os.Link(path, path+".old"))
			require.NoError(t, os.WriteFile(path+".new", stricter(f), 0o644))
			require.NoError(t, os.Rename(path+".new", path))
		},
		"a hard link to other bytes in its place": func(f *fixture) {
			path := f.Path(name)
			require.NoError(t, os.WriteFile(path+".other", stricter(f), 0o644))
			require.NoError(t, os.Rename(path, path+".old"))
			require.NoError(t, os.Link(path+".other", path))
		},
	}
	for label, change := range changes {
		t.Run(label, func(t *testing.T) {
			f := newFixture(t, true)
			p := f.Open()
			task := Task{Project: p, Mission: testMission, ID: testTask, Dir: testTaskDir}
			held, data, err := fsutil.Hold(p.Geas, testTaskDir+"/contract.json", contract.MaxBytes)
			require.NoError(t, err)
			defer held.Close()
			k, err := contract.Parse(testTaskDir+"/contract.json", data)
			require.NoError(t, err)
			if change != nil {
				change(f)
			}
			res, err := Run(t.Context(), task, Options{contract: &tiers.Loaded{Contract: k, Held: held}})
			require.NoError(t, err)
			if change == nil {
				assert.True(t, res.Verdict.IsPass(), "control: %s %v", res.Verdict, causeCodes(res.Causes))
				return
			}
			assert.Equal(t, vocab.VerdictBlock, res.Verdict, "causes %v", causeCodes(res.Causes))
			assert.Contains(t, causeCodes(res.Causes), vocab.CauseMissingReview)
		})
	}
}

// TestAContractChangedAfterTheCompletionIsNeverJudgedAsRead (SPEC §7.3, §7.4): when the task's
// latest entry is a gate run, the lock's completion reads the contract too, and a run under the
// same lock judges that read when the completion wrote nothing. A contract made stricter between
// the completion and the run (here: a reviewer the evidence lacks) is never judged as the
// completion read it: the run is not a pass. The control: left alone, the run after the fixed
// evidence passes.
func TestAContractChangedAfterTheCompletionIsNeverJudgedAsRead(t *testing.T) {
	for _, change := range []bool{false, true} {
		t.Run(map[bool]string{false: "control: left alone", true: "a reviewer required"}[change], func(t *testing.T) {
			f := newFixture(t, true)
			criterion := func(passed bool) {
				f.Evidence("qa-engineer.json", func(m map[string]any) {
					m["criteria_results"].([]any)[0].(map[string]any)["passed"] = passed
				})
			}
			criterion(false)
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
			res, err := Run(t.Context(), task, Options{})
			require.NoError(t, err)
			require.Equal(t, vocab.VerdictFail, res.Verdict, "a first run, so that the completion reads the contract")
			criterion(true)

			lock, _, loaded, err := lockTask(t.Context(), task, nil)
			require.NoError(t, err)
			defer lock.Unlock()
			require.NotNil(t, loaded)
			require.NotNil(t, loaded.contract, "the completion read the contract")
			if change {
				f.Contract(func(m map[string]any) {
					r := m["routing"].(map[string]any)
					r["required_reviewer_types"] = append(r["required_reviewer_types"].([]any), "security-engineer")
				})
			}
			res, err = run(t.Context(), task, Options{}, lock.Held, loaded)
			require.NoError(t, err)
			if !change {
				assert.True(t, res.Verdict.IsPass(), "control: %s %v", res.Verdict, causeCodes(res.Causes))
				return
			}
			assert.False(t, res.Verdict.IsPass(), "causes %v", causeCodes(res.Causes))
		})
	}
}
