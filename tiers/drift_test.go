package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/policy"
)

// TestTheDriftSortsTheFilesAsTheScopeCheckDoes (SPEC §5.3 Part B, geas task revalidate): the
// files changed since a base are the diff's (a rename counts both paths), relative to the project
// root; the surfaces' files, the shared ones and the rest are told apart as the scope check tells
// them, and the orchestration's bookkeeping is counted, not listed.
func TestTheDriftSortsTheFilesAsTheScopeCheckDoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	base := f.git("rev-parse", "HEAD") // the work's commit, which holds README.md
	f.git("mv", "README.md", "GUIDE.md")
	f.write("greeter/main.go", "package main\n\nfunc main() { println() }\n")
	f.write("go.mod", "module greeter\n")
	f.write("tools/gen.go", "package tools\n")
	f.write(".geas/missions/m1/notes.md", "notes\n")
	head := f.commit("later")
	in := f.gather()
	in.Policy = policy.Default()

	d, err := DriftOf(in, base)
	require.NoError(t, err)
	assert.Equal(t, base, d.Base)
	assert.Equal(t, head, d.Head)
	assert.Equal(t, "HEAD", d.HeadFrom)
	assert.True(t, d.Ancestor)
	assert.Equal(t, []string{"GUIDE.md", "README.md", "go.mod", "greeter/main.go", "tools/gen.go"}, d.Changed)
	assert.Equal(t, []string{"README.md", "greeter/main.go"}, d.InSurfaces, "README.md is a surface: its removal is the task's")
	assert.Equal(t, []string{"go.mod"}, d.Shared)
	assert.Equal(t, []string{"GUIDE.md", "tools/gen.go"}, d.Outside)
	assert.Equal(t, 1, d.Bookkeeping, "the mission's notes")
}

// TestTheDriftJudgesTheIntegrationCommit: with integration.json naming a commit, the drift ends
// there, as tier 0's baseline takes the head, whatever HEAD is.
func TestTheDriftJudgesTheIntegrationCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	base := f.git("rev-parse", "HEAD~1")
	work := f.git("rev-parse", "HEAD")
	f.write("tools/gen.go", "package tools\n")
	f.commit("later")
	f.record(func(m map[string]any) {
		m["integration"] = map[string]any{"status": "merged", "branch": "main", "commit": work}
	})
	d, err := DriftOf(f.gather(), base)
	require.NoError(t, err)
	assert.Equal(t, work, d.Head)
	assert.Equal(t, "integration.commit", d.HeadFrom)
	assert.Equal(t, []string{"README.md", "greeter/main.go"}, d.Changed)
	assert.Empty(t, d.Outside)
}

// TestTheDriftOfASubdirectoryProjectIsRelativeToItsRoot: for a project whose root is a
// subdirectory of the repository, files are shown relative to it, and a file outside it (the
// repository root's README, another project's .geas bookkeeping) is outside every surface, even
// "**", and is not this project's bookkeeping.
func TestTheDriftOfASubdirectoryProjectIsRelativeToItsRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	base := f.git("rev-parse", "HEAD~1")
	in := f.gather()
	c := *in.Contract
	c.Scope.Surfaces = []string{"**"}
	sub := &Snapshot{ProjectDir: f.path("greeter"), Contract: &c, Policy: policy.Default()}

	d, err := DriftOf(sub, base)
	require.NoError(t, err)
	assert.Equal(t, []string{"../.geas/missions/m1/tasks/t1/contract.json", "../README.md", "main.go"}, d.Changed)
	assert.Equal(t, []string{"main.go"}, d.InSurfaces)
	assert.Equal(t, []string{"../.geas/missions/m1/tasks/t1/contract.json", "../README.md"}, d.Outside)
	assert.Zero(t, d.Bookkeeping)
}

// TestTheDriftRefusesABaseThatNamesNoCommit: an unknown revision is an error naming it, never an
// empty drift.
func TestTheDriftRefusesABaseThatNamesNoCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	_, err := DriftOf(f.gather(), "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nope"`)
}
