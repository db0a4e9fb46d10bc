package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

// TestAMovedBaseRefIsAChangeOfThePolicySource (SPEC §5.3 B, §7.4): the policy of a task with a
// base is read from the commit its base_snapshot names. An eval command that moves that ref
// after the snapshot was read, so that the base now holds another policy or none, changed the
// source of the rules the run judged by: the re-check resolves the ref again and names the
// policy it read as changed. The controls: an eval command that rewrites the ref to the commit
// it named, or that moves only the work's branch, changes nothing the run read.
func TestAMovedBaseRefIsAChangeOfThePolicySource(t *testing.T) {
	// setup makes base-ref, which the contract names, point at a commit whose policy names go.mod;
	// a later commit holds another policy, and the work is committed after that. It returns the
	// commits: without the policy, with the base's policy, with the other policy.
	setup := func(t *testing.T, command func(none, base, other string) string) (*fixture, string) {
		f := newFixture(t, true)
		none := f.commit("before the policy")
		f.write(".geas/gate-policy.json", `{"shared_globs": ["go.mod"]}`)
		base := f.commit("policy")
		f.git("branch", "base-ref", base)
		f.write(".geas/gate-policy.json", `{"shared_globs": ["*"]}`)
		other := f.commit("another policy")
		f.contract(func(m map[string]any) {
			m["base_snapshot"] = "base-ref"
			m["eval_commands"] = []any{command(none, base, other)}
		})
		f.write("greeter/flags.go", "package main\n")
		f.commit("work")
		return f, base
	}
	moves := []struct {
		name    string
		command func(none, base, other string) string
	}{
		{"moved to a commit with another policy", func(_, _, other string) string { return "git update-ref refs/heads/base-ref " + other }},
		{"moved to a commit without the policy", func(none, _, _ string) string { return "git update-ref refs/heads/base-ref " + none }},
		{"deleted", func(_, _, _ string) string { return "git update-ref -d refs/heads/base-ref" }},
	}
	for _, tc := range moves {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, base := setup(t, tc.command)
			in, res, _ := f.evaluate()
			require.Equal(t, ".geas/gate-policy.json at base "+base, in.PolicyFrom, "the run judged by the base's policy")
			assertNotPass(t, res, vocab.VerdictError, vocab.CauseInputsChanged)
			c := findCheck(t, res.Checks, "inputs_unchanged")
			assert.Contains(t, c.Evidence, ".geas/gate-policy.json@"+base)
		})
	}

	controls := []struct {
		name    string
		command func(none, base, other string) string
	}{
		{"the ref rewritten to the commit it named", func(_, base, _ string) string { return "git update-ref refs/heads/base-ref " + base }},
		{"the ref packed, at the commit it named", func(_, _, _ string) string { return "git pack-refs --all" }},
		{"another branch moved", func(none, _, _ string) string { return "git branch side " + none }},
	}
	for _, tc := range controls {
		t.Run("control: "+tc.name, func(t *testing.T) {
			t.Parallel()
			f, base := setup(t, tc.command)
			in, res, _ := f.evaluate()
			require.Equal(t, ".geas/gate-policy.json at base "+base, in.PolicyFrom)
			assert.False(t, hasCheck(res.Checks, "inputs_unchanged"), "nothing the run read changed")
			assert.True(t, in.sameBytes(), "the re-check confirms the snapshot by its digests")
			c := findCheck(t, res.Checks, "eval_command_1")
			assert.Equal(t, StatusPass, c.Status, "the command ran")
		})
	}
}

// TestADirectorySwappedUnderTheRunIsAChange: code run by an eval command that renames .geas (or
// the project root) away and puts another directory in its place leaves every read through the
// run's handles finding what it found; the re-check names the swapped directory. The controls:
// untouched, or renamed away and back (the same directory), nothing moved.
func TestADirectorySwappedUnderTheRunIsAChange(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, project.GeasDir), 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = root.Close() })
	geas, err := root.OpenRoot(project.GeasDir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = geas.Close() })
	in := &Snapshot{ProjectDir: dir, Root: root, Geas: geas}

	assert.Empty(t, in.movedDirs(), "untouched")
	g, away := filepath.Join(dir, project.GeasDir), filepath.Join(dir, ".geas.away")
	require.NoError(t, os.Rename(g, away))
	require.NoError(t, os.Rename(away, g))
	assert.Empty(t, in.movedDirs(), "renamed away and back: the same directory")

	require.NoError(t, os.Rename(g, away))
	require.NoError(t, os.Mkdir(g, 0o755))
	assert.Equal(t, []string{project.GeasDir}, in.movedDirs(), ".geas swapped")
	require.NoError(t, os.Remove(g))
	require.NoError(t, os.Symlink(".geas.away", g))
	assert.Empty(t, in.movedDirs(), "a link to the held directory names the same directory")
	require.NoError(t, os.Remove(g))
	require.NoError(t, os.Rename(away, g))

	require.NoError(t, os.Rename(dir, dir+".old"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, project.GeasDir), 0o755))
	assert.Equal(t, []string{dir}, in.movedDirs(), "the project root swapped (its held .geas is still its own)")
	assert.Equal(t, []string{dir}, in.changedInputs(), "the re-check names it without reading further")
}
