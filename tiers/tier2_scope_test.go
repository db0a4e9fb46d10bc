package tiers

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// TestASurfaceCoversWhatIsBelowOnlyADirectory (SPEC §5.3 Part B): an entry covers the paths it
// names; what is below a named path only when the entry ends in "/" or the path is a directory
// of the base, or one the work made that the entry spells out (the rule of treeDir). Paths are
// case-sensitive, as git's.
func TestASurfaceCoversWhatIsBelowOnlyADirectory(t *testing.T) {
	t.Parallel()
	dirs := map[string]bool{}
	for _, d := range []string{"greeter", "greeter/cmd", "greeter/cmd/deep", "greeterx", "src", "src/sub", "src/a",
		"docs", "docs/a", "docs/a/b", "docs/guide", "pkg", "pkg/api", "pkg/api/v1", "pkg/api/v2", "lib", "anything", "anything/at"} {
		dirs[d] = true
	}
	// New directories the work made (nothing at the base): a spelled-out entry names them, a
	// glob's match does not make them part of the surface.
	newDirs := map[string]bool{"newpkg": true, "docs/new.md": true, "services/new": true}
	isDir := func(p string) (dirKind, error) {
		switch {
		case dirs[p]:
			return baseDir, nil
		case newDirs[p]:
			return newHeadDir, nil
		}
		return notDir, nil
	}
	tests := []struct {
		file     string
		surfaces []string
		in       bool
	}{
		// Directories, with and without the slash.
		{"greeter/main.go", []string{"greeter/"}, true},
		{"greeter/cmd/deep/x.go", []string{"greeter/"}, true},
		{"greeter/main.go", []string{"greeter"}, true},
		{"greeter/cmd/deep/x.go", []string{"greeter"}, true},
		{"greeter", []string{"greeter/"}, true},
		{"greeterx/main.go", []string{"greeter/"}, false},
		{"greeterx/main.go", []string{"greeter"}, false},
		{"src/greeter/main.go", []string{"greeter/"}, false},
		{"lib/x.go", []string{"greeter/", "lib/"}, true},
		// Files: a file surface covers the file, never what the work put below it.
		{"README.md", []string{"README.md"}, true},
		{"README.md", []string{"./README.md"}, true},
		{"README.md", []string{"././README.md"}, true},
		{"docs/README.md", []string{"README.md"}, false},
		{"README.md/install.sh", []string{"README.md"}, false},
		{"README.md/install.sh", []string{"./README.md"}, false},
		{"README.md/a/b/install.sh", []string{"README.md"}, false},
		{"README.md/install.sh", []string{"README.md/"}, true}, // the slash says directory
		{"README.md/install.sh", []string{"README.md/**"}, true},
		// Globs: what they match, and below a match only when it is a directory.
		{"src/a.go", []string{"src/*.go"}, true},
		{"src/sub/a.go", []string{"src/*.go"}, false},
		{"src/a_test.go", []string{"src/*_test.go"}, true},
		{"src/sub/a.go", []string{"src/**/*.go"}, true},
		{"src/a.go", []string{"src/**/*.go"}, true},
		{"src/sub/a.txt", []string{"src/**/*.go"}, false},
		{"docs/guide.md", []string{"docs/*.md"}, true},
		{"docs/guide.md/run.sh", []string{"docs/*.md"}, false},
		{"docs/guide.md/run.sh", []string{"./docs/*.md"}, false},
		{"docs/guide.md/run.sh", []string{"**/*.md"}, false},
		{"docs/guide.md/run.sh", []string{"docs/*.md/"}, true},
		{"docs/guide/run.sh", []string{"docs/*"}, true}, // docs/guide is a directory
		{"docs/guide.md/run.sh", []string{"docs/*"}, false},
		{"docs/a/b/c.md", []string{"docs/**"}, true},
		{"docs/guide.md/run.sh", []string{"docs/**"}, true},
		{"pkg/api/v1/x.go", []string{"pkg/*/v1"}, true},
		{"pkg/api/v2/x.go", []string{"pkg/*/v1"}, false},
		// A directory the work made: covered when the entry spells it out or ends in "/", not
		// when a glob happens to match the name the work chose.
		{"newpkg/x.go", []string{"newpkg"}, true},
		{"docs/new.md/run.sh", []string{"docs/*.md"}, false},
		{"docs/new.md/run.sh", []string{"docs/new.md"}, true},
		{"services/new/main.go", []string{"services/*"}, false},
		{"services/new/main.go", []string{"services/*/"}, true},
		{"services/new/main.go", []string{"services/"}, true},
		{"services/new/main.go", []string{"services/**"}, true},
		// The whole project.
		{"anything/at/all.txt", []string{"**"}, true},
		{"anything/at/all.txt", []string{"**/"}, true},
		{"anything/at/all.txt", []string{"."}, true},
		// Case-sensitive, as git paths are.
		{"docs/a/b.md", []string{"Docs/"}, false},
		{"Docs/a.md", []string{"docs/"}, false},
		{"readme.md", []string{"README.md"}, false},
		{"docs/x.MD", []string{"docs/*.md"}, false},
		// Spelling: doubled slashes and "." elements are cleaned.
		{"docs/a/b.md", []string{"docs//a/"}, true},
		{"docs/a/b.md", []string{"docs/./a"}, true},
		// Nothing.
		{"lib/x.go", []string{"", "./"}, false},
		{"lib/x.go", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.file+" in "+text.JoinLimited(tc.surfaces, 5), func(t *testing.T) {
			in, err := newSurfaces(tc.surfaces, isDir).covers(tc.file)
			require.NoError(t, err)
			assert.Equal(t, tc.in, in)
		})
	}
}

// TestASurfaceAsksOnlyAboutTheNamedAncestors: the directory question is asked about the paths an
// entry names, once each, and its error is the matcher's.
func TestASurfaceAsksOnlyAboutTheNamedAncestors(t *testing.T) {
	t.Parallel()
	var asked []string
	s := newSurfaces([]string{"docs/*.md", "src"}, func(p string) (dirKind, error) {
		asked = append(asked, p)
		return notDir, nil
	})
	for _, f := range []string{"docs/guide.md/run.sh", "docs/guide.md/b.sh", "src/x.go", "other/y.go"} {
		in, err := s.covers(f)
		require.NoError(t, err)
		assert.False(t, in, f)
	}
	assert.Equal(t, []string{"docs/guide.md", "src"}, asked)
	boom := errors.New("boom")
	_, err := newSurfaces([]string{"src"}, func(string) (dirKind, error) { return notDir, boom }).covers("src/x.go")
	assert.ErrorIs(t, err, boom)
}

func TestMatchesAny(t *testing.T) {
	t.Parallel()
	defaults := policy.Default().SharedGlobs
	tests := []struct {
		file  string
		globs []string
		match bool
	}{
		{"go.mod", defaults, true},
		{"go.sum", defaults, true},
		{"tools/go.mod", defaults, true},
		{"src/cli/package.json", defaults, true},
		{"web/app/package-lock.json", defaults, true},
		{"a/b/c/Cargo.lock", defaults, true},
		{"a/b/deps.lock", defaults, true},
		{"sub/.gitignore", defaults, true},
		{"yarn.lock", defaults, true},
		{"go.mod.bak", defaults, false},
		{"package.json.orig", defaults, false},
		{"src/main.go", defaults, false},
		{"lockfile", defaults, false},
		{"docs/a.md", []string{"docs/*.md"}, true},
		{"x/docs/a.md", []string{"docs/*.md"}, false},
		{"docs/sub/a.md", []string{"docs/*.md"}, false},
		{"x/docs/a.md", []string{"**/docs/*.md"}, true},
		{"deep/x/VERSION", []string{"VERSION"}, true},
		{"deep/x/version", []string{"VERSION"}, false},
		{"go.mod", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			assert.Equal(t, tc.match, matchesAny(tc.file, tc.globs))
		})
	}
}

// TestPartBScopeFromGit: the changed files are git diff --name-only base..head; renames count both
// paths; shared files warn; scope.shared replaces the default table; undeclared changes warn.
func TestPartBScopeFromGit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		change   func(f *fixture)
		surfaces []string
		shared   []string
		declared []string // the implementer's files_changed; nil keeps the example's
		status   Status   // of the scope check
		evidence string
		outside  []string
		warns    map[string]string // warn check name -> evidence substring
	}{
		{name: "in scope", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write("README.md", "# greeter\n\n--verbose prints the configuration\n")
		}, declared: []string{"greeter/flags.go", "README.md"},
			status: StatusPass, evidence: "all 2 changed files are in the surfaces (from git diff --name-only "},
		{name: "outside the surfaces", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write("lib/util.go", "package lib\n")
			f.write("Makefile", "all:\n")
		}, declared: []string{"greeter/flags.go", "lib/util.go", "Makefile"},
			status: StatusFail, evidence: "2 of 3 changed files are outside the surfaces: Makefile, lib/util.go", outside: []string{"Makefile", "lib/util.go"}},
		{name: "shared files only warn", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write("go.mod", "module x\n")
			f.write("web/cli/package.json", "{}\n")
		}, declared: []string{"greeter/flags.go", "go.mod", "web/cli/package.json"},
			status: StatusPass, evidence: "1 changed files are in the surfaces and 2 are shared",
			warns: map[string]string{"scope:shared": "shared files changed: go.mod, web/cli/package.json"}},
		{name: "scope.shared replaces the default table", change: func(f *fixture) {
			f.write("go.mod", "module x\n")
			f.write("docs/notes.md", "notes\n")
		}, shared: []string{"docs/**"}, declared: []string{"go.mod", "docs/notes.md"},
			status: StatusFail, evidence: "1 of 2 changed files are outside the surfaces: go.mod", outside: []string{"go.mod"},
			warns: map[string]string{"scope:shared": "shared files changed: docs/notes.md"}},
		{name: "a rename counts its old path", change: renameMain,
			surfaces: []string{"lib/"}, declared: []string{"lib/main.go", "greeter/main.go"},
			status: StatusFail, evidence: "1 of 2 changed files are outside the surfaces: greeter/main.go", outside: []string{"greeter/main.go"}},
		{name: "a rename counts its new path", change: renameMain,
			surfaces: []string{"greeter/"}, declared: []string{"lib/main.go", "greeter/main.go"},
			status: StatusFail, evidence: "1 of 2 changed files are outside the surfaces: lib/main.go", outside: []string{"lib/main.go"}},
		{name: "a rename inside both surfaces", change: renameMain,
			surfaces: []string{"greeter/", "lib/"}, declared: []string{"lib/main.go", "greeter/main.go"},
			status: StatusPass, evidence: "all 2 changed files are in the surfaces"},
		{name: "a deleted file counts", change: func(f *fixture) { f.remove("greeter/main.go") },
			surfaces: []string{"README.md"}, declared: []string{"greeter/main.go"},
			status: StatusFail, evidence: "outside the surfaces: greeter/main.go", outside: []string{"greeter/main.go"}},
		{name: "undeclared changes warn", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write("greeter/extra.go", "package main\n")
		}, declared: []string{"greeter/flags.go"},
			status: StatusPass, evidence: "all 2 changed files are in the surfaces",
			warns: map[string]string{"scope:declared": "changed but not in the implementer's files_changed: greeter/extra.go"}},
		// (A diff of bookkeeping files alone is no change at all: tier 0 blocks it, empty_change.)
		{name: "the bookkeeping is not in scope questions", change: func(f *fixture) {
			f.write(".geas/missions/m1/tasks/t1/notes.json", "{}\n")
			f.write(".geas/state/run2.json", "{}\n")
			f.write(".geas/memory/m.md", "m\n")
			f.write(".geas/recovery/r.json", "{}\n")
			f.write(".geas/rules.md", "rules\n")
			f.write("greeter/main.go", "package main\n\nfunc main() { println() }\n")
		}, status: StatusPass, evidence: "all 1 changed files are in the surfaces"},
		// SPEC §5.3 B: only the bookkeeping is exempt; code or a policy elsewhere in .geas is not.
		{name: "code hidden under .geas is a scope question", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write(".geas/tools/evil.go", "package evil\n")
			f.write(".geas/missions.go", "package evil\n")
			f.write(".geas/rules.md.go", "package evil\n")
			f.write(".geas/statex/s.go", "package evil\n")
		}, declared: []string{"greeter/flags.go"},
			status: StatusFail, evidence: "4 of 5 changed files are outside the surfaces: .geas/missions.go, .geas/rules.md.go, .geas/statex/s.go, .geas/tools/evil.go",
			outside: []string{".geas/missions.go", ".geas/rules.md.go", ".geas/statex/s.go", ".geas/tools/evil.go"},
			warns:   map[string]string{"scope:declared": "changed but not in the implementer's files_changed: .geas/missions.go"}},
		{name: "the gate policy is a scope question", change: func(f *fixture) {
			f.write("greeter/flags.go", "package main\n")
			f.write(".geas/gate-policy.json", `{"shared_globs": ["*"]}`)
		}, declared: []string{"greeter/flags.go", ".geas/gate-policy.json"},
			status: StatusFail, evidence: "1 of 2 changed files are outside the surfaces: .geas/gate-policy.json", outside: []string{".geas/gate-policy.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			base := f.git("rev-parse", "HEAD")
			tc.change(f)
			f.commit("change")
			f.contract(func(m map[string]any) {
				m["base_snapshot"] = base
				scope := m["scope"].(map[string]any)
				if tc.surfaces != nil {
					scope["surfaces"] = tc.surfaces
				}
				if tc.shared != nil {
					scope["shared"] = tc.shared
				}
			})
			if tc.declared != nil {
				f.evidence("software-engineer.json", func(m map[string]any) { m["files_changed"] = tc.declared })
			}
			_, res, _ := f.evaluate()
			require.Equal(t, StatusPass, res.TierResults["tier_0"].Status, "tier 0: %+v", res.Causes)
			c := findCheck(t, res.Checks, "scope")
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, tc.evidence)
			var locs []string
			for _, l := range c.Locations {
				locs = append(locs, l.Path)
			}
			assert.Equal(t, tc.outside, locs)
			if tc.status == StatusFail {
				assert.Equal(t, vocab.CauseScopeViolation, c.Code)
				assertNotPass(t, res, vocab.VerdictFail, vocab.CauseScopeViolation)
			}
			for _, name := range []string{"scope:shared", "scope:declared"} {
				want, ok := tc.warns[name]
				if !ok {
					assert.False(t, hasCheck(res.Checks, name), "unexpected %s", name)
					continue
				}
				w := findCheck(t, res.Checks, name)
				assert.Equal(t, StatusWarn, w.Status)
				assert.False(t, w.Blocking)
				assert.Contains(t, w.Evidence, want)
			}
		})
	}
}

// renameMain moves greeter/main.go to lib/main.go unchanged (a pure rename).
func renameMain(f *fixture) {
	require.NoError(f.t, os.MkdirAll(f.path("lib"), 0o755))
	require.NoError(f.t, os.Rename(f.path("greeter/main.go"), f.path("lib/main.go")))
}

// TestPartBWithoutBase: without a base to diff against, the implementer's files_changed are the
// changed files, and the check text says so.
func TestPartBWithoutBase(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	tests := []struct {
		name     string
		files    []string
		status   Status
		evidence string
	}{
		{"in scope", []string{"greeter/main.go", "./README.md", "greeter/main.go"}, StatusPass,
			"all 2 changed files are in the surfaces (from the implementer's files_changed (no base_snapshot to diff against))"},
		{"outside", []string{"greeter/main.go", "lib/x.go"}, StatusFail, "1 of 2 changed files are outside the surfaces: lib/x.go"},
		// SPEC §5.3 B: neither a base nor files_changed says what changed → block (no_change_source).
		{"nothing declared", nil, StatusBlock, "no base_snapshot to diff against and no implementer evidence lists files_changed"},
		// Without a base the working tree says what is a directory: "src" is one, README.md is not.
		{"below a directory surface", []string{"src/x.go"}, StatusPass, "all 1 changed files are in the surfaces"},
		{"below a file surface", []string{"README.md/install.sh"}, StatusFail, "1 of 1 changed files are outside the surfaces: README.md/install.sh"},
		{"below a surface that is not there", []string{"gone/x.go"}, StatusFail, "outside the surfaces: gone/x.go"},
	}
	u.write("README.md", "# x\n")
	u.write("src/x.go", "package x\n")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := unitContract()
			c.GateProfile = "artifact_only"
			c.Scope.Surfaces = []string{"greeter/", "README.md", "src", "gone"}
			b := builder()
			b.FilesChanged = tc.files
			r := u.run(c, nil, b, qa())
			checks := partB(r)
			ch := findCheck(t, checks, "scope")
			assert.Equal(t, tc.status, ch.Status, ch.Evidence)
			assert.Contains(t, ch.Evidence, tc.evidence)
			assert.False(t, hasCheck(checks, "scope:declared"), "no undeclared warning without a diff")
		})
	}
}
