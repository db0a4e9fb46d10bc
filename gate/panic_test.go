package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// TestAPanicOnOneTaskOfAllIsThatTasksError: a bug that panics while --all gates a task makes that
// task an error result naming the panic, never a crash of the whole mission (which would exit 2,
// read as block) and never a pass; the next run of the same process gates the task as usual.
func TestAPanicOnOneTaskOfAllIsThatTasksError(t *testing.T) {
	f := newFixture(t, true)
	testPanic = func(task Task) { panic("boom in " + task.ID) }
	defer func() { testPanic = nil }()
	p := f.Open()
	defer p.Close()
	m, err := All(t.Context(), p, testMission, AllOptions{Jobs: 1, DryRun: true})
	require.NoError(t, err)
	require.Len(t, m.Tasks, 1)
	res := m.Tasks[0].Result
	require.NotNil(t, res)
	assert.Equal(t, vocab.VerdictError, res.Verdict)
	assert.Equal(t, []vocab.CauseCode{vocab.CauseGateRunFailed}, causeCodes(res.Causes))
	assert.Contains(t, findCheck(t, res.Checks, "gate").Evidence, "internal error (a bug in geas): boom in "+testTask)
	assert.False(t, m.Overall.Success)
	assert.Equal(t, 3, m.Overall.ExitCode)

	testPanic = nil
	m, err = All(t.Context(), p, testMission, AllOptions{Jobs: 1, DryRun: true})
	require.NoError(t, err)
	assert.True(t, m.Tasks[0].Result.Verdict.IsPass(), "the task passes once nothing panics")
}
