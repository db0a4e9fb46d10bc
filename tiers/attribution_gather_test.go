package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
)

// TestOnlyATaskWithABaseReadsTheOtherTasks: the other tasks' records are read for attribution
// only when this task's contract names a base (nothing can be attributed out of a change there is
// not), so geas gate --all over tasks without one reads each task's files for its own run only
// and stays linear. The control: the same mission, with a base, reads the other task that passed.
func TestOnlyATaskWithABaseReadsTheOtherTasks(t *testing.T) {
	f := newFixture(t, true)
	res := f.gate()
	require.True(t, res.Verdict.IsPass(), "the fixture's task passes: %+v", res.Causes)
	src := f.path(".geas/" + testfixture.TaskDir)
	dst := filepath.Join(filepath.Dir(src), "other")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))

	in := f.gather()
	require.NotEmpty(t, in.Contract.BaseSnapshot)
	require.Len(t, in.Others, 1, "with a base, the other task's pass is read")
	require.Equal(t, "other", in.Others[0].ID)

	f.contract(func(m map[string]any) { m["gate_profile"] = "artifact_only"; m["base_snapshot"] = "" })
	in = f.gather()
	require.NotNil(t, in.Contract)
	require.Empty(t, in.Others, "without a base, no other task is read")
}
