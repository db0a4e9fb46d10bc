package tiers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// hostilePaths are repository paths an agent can commit to look like, or unlike, the project's
// files and its bookkeeping: other case, other Unicode form, a shared prefix without the slash,
// the project directory itself, doubled and trailing slashes, backslashes, dot segments, spaces.
var hostilePaths = []string{
	"a.txt", "svc", "svc2/a.txt", "svcx", "SVC/a.txt", "Svc/.geas/missions/m/x.json",
	"svc/a.txt", "svc/api/h.go", "svc/api2/h.go", "svc/api", "svc//a.txt", "svc/./a.txt", "svc/../a.txt",
	".geas/missions/m/x.json", ".geas/rules.md", ".geas/rules.md/x", ".geas/rules.mdx", ".geas/missions",
	".geas/missions/", ".GEAS/missions/m/x.json", ".geas/Missions/m/x.json", ".geas/gate-policy.json",
	".geas/state/s.json", ".geas/memory/m.md", ".geas/recovery/r.json", ".geas/statex/s.json",
	"svc/.geas/missions/m/x.json", "svc/.geas/rules.md", "svc/.GEAS/rules.md", "svc/.geas/gate-policy.json",
	"svc/api/.geas/missions/m/x.json", "svc\\.geas\\missions\\x.json", " svc/a.txt", "svc /a.txt",
	"s\u00e9rvice/a.txt", "se\u0301rvice/a.txt", "s\u00e9rvice/.geas/rules.md", "se\u0301rvice/.geas/rules.md",
	".ge\u0430s/rules.md", "\uff53vc/a.txt", "..svc/a.txt", "../a.txt", "/abs/a.txt", "",
}

// TestThePlacementOfAChangeIsWhatEachPathPlacesTo: the checks look a changed path up in the
// placement tier 0 made once (placeChange) instead of placing it themselves; for every project
// root (the top, a service, a nested service, a name with an accent, a root outside the
// repository) and every hostile path, the placement holds exactly what placing the path alone
// gives (rel, bookkeeping), and the project's own bookkeeping is only a path inside the root.
func TestThePlacementOfAChangeIsWhatEachPathPlacesTo(t *testing.T) {
	t.Parallel()
	roots := []projectPaths{
		{within: true}, {prefix: "svc/", within: true}, {prefix: "svc/api/", within: true},
		{prefix: "s\u00e9rvice/", within: true}, {within: false},
	}
	var changes []git.FileChange
	for _, p := range hostilePaths {
		changes = append(changes, git.FileChange{Path: p})
	}
	for _, pp := range roots {
		pl := placeChange(pp, changes)
		assert.Equal(t, pp.path(), pl.path, "root %+v", pp)
		assert.Equal(t, pp.within, pl.within, "root %+v", pp)
		require.Len(t, pl.paths, len(hostilePaths), "root %+v: one place per path", pp)
		for _, p := range hostilePaths {
			rel, in := pp.rel(p)
			at, ok := pl.paths[p]
			require.True(t, ok, "%q in %+v is placed", p, pp)
			assert.Equal(t, rel, at.rel, "%q in %+v", p, pp)
			assert.Equal(t, in, at.in, "%q in %+v", p, pp)
			assert.Equal(t, bookkeeping(rel), at.bookkeeping, "%q in %+v", p, pp)
		}
	}
	// What that is, spelled out for a service: its own bookkeeping only, byte for byte.
	pl := placeChange(projectPaths{prefix: "svc/", within: true}, changes)
	own := func(p string) bool { at := pl.paths[p]; return at.in && at.bookkeeping }
	assert.True(t, own("svc/.geas/missions/m/x.json"))
	assert.True(t, own("svc/.geas/rules.md"))
	for _, p := range []string{".geas/missions/m/x.json", "svc/.GEAS/rules.md", "Svc/.geas/missions/m/x.json",
		"svc/.geas/gate-policy.json", "svc/api/.geas/missions/m/x.json", "svc\\.geas\\missions\\x.json", "svc/a.txt"} {
		assert.False(t, own(p), "%q is not the service's bookkeeping", p)
	}
	assert.Equal(t, "../.geas/missions/m/x.json", pl.paths[".geas/missions/m/x.json"].rel, "another directory's bookkeeping is shown as the path to it")
}

// TestTestIntegrityPlacesAChangedPathAsThePrefixDoes: test integrity judges a changed path inside
// the project root's prefix, relative to it, unless it is the bookkeeping; it reads whether it is
// the bookkeeping from the placement (a path of base..head) or from attribution (a verified change
// this head undid), and answers what the prefix and bookkeeping alone answer, for every hostile
// path and every root, the root outside the repository included.
func TestTestIntegrityPlacesAChangedPathAsThePrefixDoes(t *testing.T) {
	t.Parallel()
	byPrefix := func(prefix, p string) (string, bool) {
		if !strings.HasPrefix(p, prefix) {
			return "", false
		}
		p = strings.TrimPrefix(p, prefix)
		return p, !bookkeeping(p)
	}
	roots := []projectPaths{
		{within: true}, {prefix: "svc/", within: true}, {prefix: "svc/api/", within: true}, {within: false},
	}
	for _, pp := range roots {
		var changes []git.FileChange
		undoneAt := map[string]placed{}
		for i, p := range hostilePaths {
			if i%3 == 0 {
				undoneAt[p] = pp.place(p) // not in base..head: placed by attribution
				continue
			}
			changes = append(changes, git.FileChange{Path: p})
		}
		pass := &Pass{placed: placeChange(pp, changes), attrib: attribution{undoneAt: undoneAt}}
		ig := &integrity{pass: pass, prefix: pp.prefix}
		for _, p := range hostilePaths {
			wantRel, wantOK := byPrefix(pp.prefix, p)
			rel, ok := ig.rel(p)
			assert.Equal(t, wantOK, ok, "%q in %+v", p, pp)
			if wantOK {
				assert.Equal(t, wantRel, rel, "%q in %+v", p, pp)
			}
		}
	}
}

// TestEveryPathTheChecksSeeOfAChangeIsPlaced: the checks look up the paths the diff lists
// (empty_change, scope, attribution, tests_modified), the files of the added lines (the stub and
// marker scans, renames detected), the binary files and the changed submodules; tier 0 placed
// each of them, from the same diff of base..head, so that none is looked up and missed.
func TestEveryPathTheChecksSeeOfAChangeIsPlaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	body := strings.Repeat("line of the module\n", 40)
	f.write("svc/old.go", body)
	f.write("svc/keep.go", "package svc\n")
	f.write("gone.txt", "gone\n")
	f.git("add", "-A")
	base := f.commit("base")
	f.git("mv", "svc/old.go", "svc/new name.go")
	f.write("svc/new name.go", body+"// TODO: a stub\n")
	f.write("svc/keep.go", "package svc\n\nfunc A() {}\n")
	f.write(".geas/missions/m/notes.md", "bookkeeping\n")
	f.write("se\u0301rvice/a.txt", "a\n")
	f.write("svc/blob.bin", "\x00\x01binary")
	f.remove("gone.txt")
	f.git("add", "-A")
	f.git("update-index", "--add", "--cacheinfo", "160000,"+base+",svc/sub")
	f.git("commit", "-q", "-m", "head") // not f.commit: its add -A would drop the gitlink
	head := f.git("rev-parse", "HEAD")

	repo, err := git.Open(f.dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	changes, err := repo.FileChanges(base, head)
	require.NoError(t, err)
	pl := placeChange(projectPaths{prefix: "svc/", within: true}, changes)

	files, err := repo.ChangedFiles(base, head)
	require.NoError(t, err)
	seen := slices.Clone(files)
	lines := 0
	scan, err := repo.ScanAdded(base, head, func(l git.AddedLine) error {
		lines++
		seen = append(seen, l.Path)
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, lines)
	require.NotEmpty(t, scan.Binary, "the fixture has a binary file")
	seen = append(seen, scan.Binary...)
	subs, err := repo.ChangedSubmodules(base, head)
	require.NoError(t, err)
	require.NotEmpty(t, subs, "the fixture has a submodule")
	for _, s := range subs {
		seen = append(seen, s.Path)
	}
	for _, p := range seen {
		_, ok := pl.paths[p]
		assert.True(t, ok, "%q is seen by a check but not placed", p)
	}
	assert.Contains(t, seen, "svc/new name.go")
	assert.True(t, pl.paths["svc/new name.go"].in)
	assert.False(t, pl.paths[".geas/missions/m/notes.md"].in, "the top's bookkeeping is outside the service")
}

// TestAPathNotPlacedIsNeitherInsideNorBookkeeping: a path a check looks up that tier 0 did not
// place (not in base..head, not an undone verified change) must fail closed: its zero place is
// outside the project and not the bookkeeping, so the scope check names it, the stub scan and
// attribution count it, and test integrity judges it (a test path inside the prefix, or a path
// that only looks like the bookkeeping, is never exempted for being missing from the map).
func TestAPathNotPlacedIsNeitherInsideNorBookkeeping(t *testing.T) {
	t.Parallel()
	pl := placeChange(projectPaths{prefix: "svc/", within: true}, []git.FileChange{{Path: "svc/a.go"}, {Path: "svc/.geas/missions/m/x.json"}})
	// The control: placed paths are where they lie.
	require.True(t, pl.paths["svc/a.go"].in)
	require.True(t, pl.paths["svc/.geas/missions/m/x.json"].bookkeeping)
	for _, p := range []string{"svc/b_test.go", "svc/.geas/missions/m/y.json", "svc/.geas/rules.md", "SVC/.geas/state/s.json", "svc/.ge\u0301as/rules.md"} {
		at, ok := pl.paths[p]
		require.False(t, ok, "%q was not placed", p)
		assert.False(t, at.in, "%q not placed is not inside the project", p)
		assert.False(t, at.bookkeeping, "%q not placed is not the bookkeeping", p)
		pass := &Pass{placed: pl}
		ig := &integrity{pass: pass, prefix: "svc/"}
		if strings.HasPrefix(p, "svc/") {
			rel, judged := ig.rel(p)
			assert.True(t, judged, "%q not placed is judged by test integrity", p)
			assert.Equal(t, strings.TrimPrefix(p, "svc/"), rel)
		}
	}
	// The control for integrity: the placed bookkeeping is exempt, the placed code judged.
	ig := &integrity{pass: &Pass{placed: pl}, prefix: "svc/"}
	_, judged := ig.rel("svc/.geas/missions/m/x.json")
	assert.False(t, judged)
	_, judged = ig.rel("svc/a.go")
	assert.True(t, judged)
}
