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
)

// TestATriagedContractIsTheRunsOnlyWhileUnchanged: the contract geas gate --all's triage read
// before the task lock is the locked run's only while contract.json still holds those bytes in
// that file; rewritten in place, or replaced by another file with the same bytes or others, the
// run reads it again under the lock.
func TestATriagedContractIsTheRunsOnlyWhileUnchanged(t *testing.T) {
	f := newFixture(t, false)
	p := f.Open()
	task := Task{Project: p, Mission: testMission, ID: testTask, Dir: testTaskDir}
	name := testTaskDir + "/contract.json"
	path := f.Path(testfixture.TaskFile("contract.json"))
	triage := func() *tiers.Loaded {
		held, data, err := fsutil.Hold(p.Geas, name, contract.MaxBytes)
		require.NoError(t, err)
		t.Cleanup(held.Close)
		k, err := contract.Parse(name, data)
		require.NoError(t, err)
		return &tiers.Loaded{Contract: k, Held: held}
	}
	k := triage()
	assert.True(t, sameContract(p, task, k), "unchanged: the triage's read is the run's")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(raw, ' '), 0o644))
	assert.False(t, sameContract(p, task, k), "rewritten in place")

	k = triage()
	require.NoError(t, os.WriteFile(path+".new", k.Contract.Raw, 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	assert.False(t, sameContract(p, task, k), "another file, even with the same bytes")

	require.NoError(t, os.Remove(path))
	assert.False(t, sameContract(p, task, k), "removed")
	assert.False(t, sameContract(p, task, &tiers.Loaded{Err: os.ErrNotExist}), "a contract the triage could not read")
}
