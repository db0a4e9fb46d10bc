package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
)

// TestARunOpensTheRepositoryOnce: for a task with a base, GatherLoaded reads the policy at the
// base through the repository tier 0 then uses, so a run opens it once, and Evaluate closes it;
// Gather keeps nothing open (its Snapshot may never be evaluated), and Release after Evaluate is
// harmless.
func TestARunOpensTheRepositoryOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	policyInBase(f, `{"shared_globs": ["go.mod"]}`)
	p := f.open()
	k, err := contract.Load(p.Geas, testTaskDir+"/contract.json")
	require.NoError(t, err)
	require.NotEmpty(t, k.BaseSnapshot)

	in := GatherLoaded(p, testMission, testTask, testTaskDir, Loaded{Contract: k})
	require.NotNil(t, in.repo, "kept for tier 0")
	assert.Equal(t, []string{"go.mod"}, in.Policy.SharedGlobs, "the base's policy")
	res, err := Evaluate(t.Context(), in, DefaultEnv(), Options{RunID: NextRunID(in.Record), DryRun: true, Now: testNow})
	require.NoError(t, err)
	assert.Equal(t, StatusPass, findCheck(t, res.Checks, "baseline").Status)
	assert.Equal(t, 1, in.repoOpens, "the policy at the base and tier 0 share one open")
	assert.Nil(t, in.repo, "taken and closed by Evaluate")
	in.Release()

	g := Gather(p, testMission, testTask, testTaskDir)
	assert.Nil(t, g.repo, "Gather keeps no repository open")
	assert.Equal(t, 1, g.repoOpens)
}
