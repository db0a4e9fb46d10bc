package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/geas-dev/geas/internal/git"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPathIsInsideTheProjectOnlyBelowItsWholeDirectory (SPEC §5.3 Part B): a repository path is
// the project's when it is below the project root's whole directory name, byte for byte; a
// sibling service, a directory that shares the prefix without the slash, another case and the
// project directory itself are outside, and are shown as the path from the project root.
func TestAPathIsInsideTheProjectOnlyBelowItsWholeDirectory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prefix string
		path   string
		rel    string
		in     bool
	}{
		{"", "a.txt", "a.txt", true},
		{"", ".geas/missions/m1/x.json", ".geas/missions/m1/x.json", true},
		{"svc/", "svc/a.txt", "a.txt", true},
		{"svc/", "svc/.geas/missions/m1/x.json", ".geas/missions/m1/x.json", true},
		{"svc/", "svc/deep/b/c.go", "deep/b/c.go", true},
		{"svc/", "other/b.txt", "../other/b.txt", false},
		{"svc/", "svc2/a.txt", "../svc2/a.txt", false},
		{"svc/", "svcx", "../svcx", false},
		{"svc/", "SVC/a.txt", "../SVC/a.txt", false},
		{"svc/", "Svc/a.txt", "../Svc/a.txt", false},
		{"svc/", "svc", "../svc", false}, // a file (or submodule) where the project's directory is
		{"svc/", ".geas/missions/m1/x.json", "../.geas/missions/m1/x.json", false},
		{"svc/", "README.md", "../README.md", false},
		{"svc/api/", "svc/api/h.go", "h.go", true},
		{"svc/api/", "svc/web/h.go", "../web/h.go", false},
		{"svc/api/", "svc/api2/h.go", "../api2/h.go", false},
		{"svc/api/", "svc/x.go", "../x.go", false},
		{"svc/api/", "other/x.go", "../../other/x.go", false},
		{"svc/api/", "svc/api", "../api", false},
	}
	for _, tt := range tests {
		rel, in := projectPaths{prefix: tt.prefix, within: true}.rel(tt.path)
		assert.Equal(t, tt.rel, rel, "%q in %q", tt.path, tt.prefix)
		assert.Equal(t, tt.in, in, "%q in %q", tt.path, tt.prefix)
	}
	// A project root that is not inside the repository's top holds nothing of it.
	rel, in := projectPaths{}.rel("a.txt")
	assert.False(t, in)
	assert.Equal(t, "a.txt", rel)
}

// TestTheProjectPrefixResolvesLinksAndStaysInsideTheTop: the project root's place in the
// repository is found with the symbolic links of both resolved (a linked project directory is
// the directory it leads to), a directory whose name begins with ".." is a directory like any
// other, and a project root outside the top (a link into another tree) is not inside it.
func TestTheProjectPrefixResolvesLinksAndStaysInsideTheTop(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	top := filepath.Join(tmp, "repo")
	for _, d := range []string{"repo/svc/api", "repo/..svc", "elsewhere/svc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(tmp, d), 0o755))
	}
	require.NoError(t, os.Symlink("svc", filepath.Join(top, "link")))
	require.NoError(t, os.Symlink("../elsewhere/svc", filepath.Join(top, "away")))
	tests := []struct {
		dir    string
		prefix string
		ok     bool
	}{
		{top, "", true},
		{filepath.Join(top, "svc"), "svc/", true},
		{filepath.Join(top, "svc", "api"), "svc/api/", true},
		{filepath.Join(top, "link"), "svc/", true},
		{filepath.Join(top, "link", "api"), "svc/api/", true},
		{filepath.Join(top, "..svc"), "..svc/", true},
		{filepath.Join(top, "away"), "", false},
		{filepath.Join(tmp, "elsewhere"), "", false},
	}
	for _, tt := range tests {
		prefix, ok := projectPrefixOf(top, tt.dir)
		assert.Equal(t, tt.prefix, prefix, tt.dir)
		assert.Equal(t, tt.ok, ok, tt.dir)
	}
}

// TestADeclaredPathOutsideTheProjectIsOutside: without a base, the implementer's files_changed
// are the changed files; one that leads out of the project root is outside every surface.
func TestADeclaredPathOutsideTheProjectIsOutside(t *testing.T) {
	t.Parallel()
	for p, out := range map[string]bool{
		"a.txt": false, "svc/a.txt": false, "..a": false, "a/../b": false,
		"../other/b.txt": true, "..": true, "/etc/passwd": true, "a/../../b": true, "./../b": true,
	} {
		assert.Equal(t, out, outsideProject(p), p)
	}
}

// TestTheChecksJudgeThePlaceThePolicyWasReadAt: the snapshot finds the project root's place in
// the repository when it reads the policy at the base, and the checks compare paths with that
// place, in the same repository; in another repository, or without one, they find it themselves.
func TestTheChecksJudgeThePlaceThePolicyWasReadAt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	in := f.gather()
	require.NotNil(t, in.rootIn, "the policy was read at the base")
	repo, err := git.Open(f.dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	assert.Equal(t, projectPathsOf(repo, f.dir), in.rootIn.paths)
	assert.Equal(t, repo.Top(), in.rootIn.top)

	found := &Snapshot{ProjectDir: f.dir, rootIn: &rootPlace{top: repo.Top(), paths: projectPaths{prefix: "svc/", within: true}}}
	assert.Equal(t, projectPaths{prefix: "svc/", within: true}, projectPathsIn(found, repo), "the snapshot's place, not found again")
	other := &Snapshot{ProjectDir: f.dir, rootIn: &rootPlace{top: filepath.Join(t.TempDir(), "other"), paths: projectPaths{prefix: "svc/", within: true}}}
	assert.Equal(t, projectPathsOf(repo, f.dir), projectPathsIn(other, repo), "another repository's place is not this one's")
	assert.Equal(t, projectPaths{within: true}, projectPathsIn(found, nil), "no repository: the implementer's paths")
}
