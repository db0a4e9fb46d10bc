package gate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// TestAnEditedResultNeverMovesATaskItsEntryDoesNotImply (SPEC §7.2, §7.3): the completion of a
// run cut short after its commit point derives the run's writes from its history entry and its
// result.json, which agents can write. A result.json edited to claim a move the entry does not
// imply (to verified, or to blocked, on a fail) moves nothing and writes no pending decision; one
// edited to claim another verdict is not the run's result at all. The control: the run's own
// result.json completes the escalation its entry implies (the task escalated, its decision
// written).
func TestAnEditedResultNeverMovesATaskItsEntryDoesNotImply(t *testing.T) {
	edits := map[string]func(res map[string]any){
		"control: the run's own result": nil,
		"a move to verified claimed on a fail": func(res map[string]any) {
			res["transition"] = map[string]any{"from": "integrated", "to": "verified"}
		},
		"a move to blocked claimed on a fail": func(res map[string]any) {
			res["transition"] = map[string]any{"from": "integrated", "to": "blocked"}
		},
		"another verdict claimed": func(res map[string]any) {
			res["verdict"] = "pass"
			res["transition"] = map[string]any{"from": "integrated", "to": "verified"}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, true)
			f.Contract(func(m map[string]any) { m["retry_budget"] = 1 })
			f.Evidence("qa-engineer.json", func(m map[string]any) {
				m["criteria_results"].([]any)[0].(map[string]any)["passed"] = false
			})
			before := snapshotFiles(t, f, testfixture.TaskFile("record.json"), testfixture.TaskFile("contract.json"), ".geas/"+record.EventsFile)
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
			res, err := Run(t.Context(), task, Options{})
			require.NoError(t, err)
			require.Equal(t, vocab.VerdictFail, res.Verdict)
			require.NotNil(t, res.Transition, "the last retry spent: the run escalates")
			require.Equal(t, vocab.Escalated, res.Transition.To)
			decision := f.Path(".geas/" + record.PendingDecisionFile(testMission, record.EscalationID(testTask, res.RunID)))
			require.FileExists(t, decision)

			// A crash right after the commit point: the history holds the run's entry, and
			// result.json its result; nothing else was written.
			before.restore(t)
			require.NoError(t, os.Remove(decision))
			require.Equal(t, "integrated", f.Status())
			if edit != nil {
				name := f.Path(".geas/" + record.ResultFile(testTaskDir, res.RunID))
				var doc map[string]any
				require.NoError(t, json.Unmarshal(f.Read(".geas/"+record.ResultFile(testTaskDir, res.RunID)), &doc))
				edit(doc)
				data, err := json.Marshal(doc)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(name, data, 0o644))
			}

			_, err = Complete(task.Project, testMission, testTask, testTaskDir, testNow, nil)
			require.NoError(t, err)
			if edit == nil {
				assert.Equal(t, "escalated", f.Status(), "control: the entry's escalation is completed")
				assert.FileExists(t, decision)
				return
			}
			assert.Equal(t, "integrated", f.Status(), "the task is not moved")
			assert.NoFileExists(t, decision)
		})
	}
}

// savedFiles are files of a fixture as they were (nil: absent), to be put back.
type savedFiles struct {
	f     *fixture
	files map[string][]byte
}

func snapshotFiles(t *testing.T, f *fixture, rels ...string) *savedFiles {
	t.Helper()
	s := &savedFiles{f: f, files: map[string][]byte{}}
	for _, rel := range rels {
		data, err := os.ReadFile(f.Path(rel))
		if errors.Is(err, fs.ErrNotExist) {
			s.files[rel] = nil
			continue
		}
		require.NoError(t, err)
		s.files[rel] = data
	}
	return s
}

func (s *savedFiles) restore(t *testing.T) {
	t.Helper()
	for rel, data := range s.files {
		p := s.f.Path(rel)
		if data == nil {
			require.NoError(t, os.RemoveAll(p))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
}

// TestAnEditedResultNeverBlocksATaskBeforeItsErrorLimit (SPEC §7.2, §7.3): a run blocks its task
// only on the consecutive-error limit's error with one cause (3 by default). A result.json of a
// first error, edited after a crash to claim a move to blocked, moves nothing: the completion
// counts the entry's errors itself. The control: the third error with the same cause, cut short
// after its commit point, is completed with its move to blocked.
func TestAnEditedResultNeverBlocksATaskBeforeItsErrorLimit(t *testing.T) {
	for _, runs := range []int{3, 1} {
		name := map[int]string{3: "control: the third error", 1: "a first error edited to block"}[runs]
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, true)
			f.Contract(func(m map[string]any) { m["status"] = "implementing" }) // state_ineligible: an error
			task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
			var before *savedFiles
			var runID string
			for i := 1; i <= runs; i++ {
				if i == runs {
					before = snapshotFiles(t, f, testfixture.TaskFile("record.json"), testfixture.TaskFile("contract.json"), ".geas/"+record.EventsFile)
				}
				res, err := Run(t.Context(), task, Options{})
				require.NoError(t, err)
				require.Equal(t, vocab.VerdictError, res.Verdict)
				runID = res.RunID
				if i == runs && runs == 3 {
					require.NotNil(t, res.Transition, "control: the third error blocks")
					require.Equal(t, vocab.Blocked, res.Transition.To)
				}
			}
			before.restore(t) // a crash right after the last run's commit point
			require.Equal(t, "implementing", f.Status())
			if runs == 1 {
				file := ".geas/" + record.ResultFile(testTaskDir, runID)
				var doc map[string]any
				require.NoError(t, json.Unmarshal(f.Read(file), &doc))
				doc["transition"] = map[string]any{"from": "implementing", "to": "blocked"}
				data, err := json.Marshal(doc)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(f.Path(file), data, 0o644))
			}
			_, err := Complete(task.Project, testMission, testTask, testTaskDir, testNow, nil)
			require.NoError(t, err)
			if runs == 3 {
				assert.Equal(t, "blocked", f.Status(), "control: the third error's move is completed")
				return
			}
			assert.Equal(t, "implementing", f.Status(), "a first error blocks nothing")
		})
	}
}
