package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// TestAGateRunJudgesTheOtherTasksWhetherOrNotItsCompletionWrote: a gate run of a task whose
// contract names a base judges the mission's other tasks' claimed passes, both when its crash
// completion wrote nothing (the other tasks are read with its records under the lock) and when
// it wrote something (the snapshot reads them afresh). The other task here is a copy of this one,
// whose pass no event of the log names: attribution refuses it with a warning that names it, so
// the warning shows the run read it.
func TestAGateRunJudgesTheOtherTasksWhetherOrNotItsCompletionWrote(t *testing.T) {
	f := newFixture(t, true)
	task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
	res, err := Run(t.Context(), task, Options{})
	require.NoError(t, err)
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %v", causeCodes(res.Causes))
	assert.Nil(t, otherRefused(res), "the control: no other task yet")
	src := f.Path(".geas/" + testTaskDir)
	require.NoError(t, os.CopyFS(filepath.Join(filepath.Dir(src), "other"), os.DirFS(src)))

	// The completion writes nothing: the other task is read with this task's records.
	res, err = Run(t.Context(), task, Options{})
	require.NoError(t, err)
	require.NotNil(t, otherRefused(res), "the other task is judged: %v", causeCodes(res.Causes))

	// The completion logs this task's events again (the log is gone): the run reads the other
	// task in its snapshot.
	require.NoError(t, os.Remove(f.Path(".geas/"+record.EventsFile)))
	res, err = Run(t.Context(), task, Options{})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "event") }), "the completion wrote: %q", res.Notes)
	require.NotNil(t, otherRefused(res), "the other task is judged after the completion wrote: %v", causeCodes(res.Causes))

	// A dry run, which takes no lock and completes nothing, judges it too.
	res, err = Run(t.Context(), task, Options{DryRun: true})
	require.NoError(t, err)
	require.NotNil(t, otherRefused(res), "a dry run judges the other task: %v", causeCodes(res.Causes))
}

// otherRefused is the attribution warning of res that names the task "other", or nil.
func otherRefused(res *tiers.Result) *tiers.Check {
	for i, c := range res.Checks {
		if c.Name == "scope:attribution" && strings.Contains(c.Evidence, "other") {
			return &res.Checks[i]
		}
	}
	return nil
}
