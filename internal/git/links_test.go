package git

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// link makes a symbolic link at path (relative to the repository) with target as it is.
func (r *gitRepo) link(path, target string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(path))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(r.t, os.Symlink(target, full))
}

// stageLink adds a link whose target no file system can hold (empty, a NUL byte) straight to the
// index.
func (r *gitRepo) stageLink(path, target string) {
	r.t.Helper()
	cmd := r.cmd("", []byte(target), "hash-object", "-w", "--stdin")
	out, err := cmd.Output()
	require.NoError(r.t, err)
	r.git("update-index", "--add", "--cacheinfo", "120000,"+strings.TrimSpace(string(out))+","+path)
}

func linkEscapes(t *testing.T, r *gitRepo, head string, fenced []string) (int, map[string]string) {
	t.Helper()
	rep, err := r.open().CheckLinks(head, fenced)
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range rep.Escapes {
		got[e.Path] = e.Why
	}
	return rep.Links, got
}

// TestALinkLeadsOnlyIntoTheCommit: every link of the head tree that leads outside the repository,
// into .git or into a fenced path, directly, through a chain of links or through a directory link,
// escapes; a link that stays in the tree does not, whatever its spelling.
func TestALinkLeadsOnlyIntoTheCommit(t *testing.T) {
	r := newGitRepo(t)
	r.write("README.md", "# readme\n")
	r.write("src/greet.py", "def greet(): pass\n")
	r.write("src/deep/mod.py", "x = 1\n")
	r.write(".geas/missions/m/fixed.py", "fixed\n")
	r.write(".geas/rules.md", "rules\n")
	honest := map[string]string{
		"docs/readme":     "../README.md",
		"lib":             "src",
		"src/alias.py":    "greet.py",
		"src/chain.py":    "../lib/greet.py",
		"src/dot.py":      "./greet.py",
		"src/slashes.py":  "..//src/./greet.py",
		"src/trail":       "../src/deep/",
		"src/up":          "..",
		"src/deep/back":   "../../lib/deep/../alias.py",
		"dangling":        "build/out.bin",
		"self":            ".",
		"src/through.py":  "../lib/deep/mod.py",
		"src/gitkeep":     "../.gitkeep-not-git",
		"src/geasfile.md": "../.geas/gate-policy.json",
	}
	escaping := map[string]string{
		"abs.py":               "an absolute path",
		"src/greet_link.py":    "out of the repository",
		"src/up2":              "out of the repository",
		"src/viaup.py":         "out of the repository",
		"src/viadir.py":        "out of the repository",
		"src/c1.py":            "an absolute path (through src/c2.py)",
		"src/bk.py":            "into .geas/missions, whose content is not compared with the commit",
		"src/bkcase.py":        "into .GEAS/Missions, whose content is not compared with the commit",
		"src/rules.md":         "into .geas/rules.md, whose content is not compared with the commit",
		"src/bkpass.py":        "into .geas/missions, whose content is not compared with the commit",
		"src/g":                "into .git",
		"src/G":                "into .git",
		"src/gdot":             "into .git",
		"src/gzw":              "into .git",
		"loop1":                "through more than 40 links",
		"src/drive.py":         "an absolute path",
		"src/unc.py":           "an absolute path",
		"src/chainup.py":       "out of the repository",
		"src/deep/linkbk/x.py": "into .geas/missions, whose content is not compared with the commit",
		"src/backout.py":       "back out of build, which is not a directory of the commit",
		"src/backfile.py":      "back out of src/greet.py, which is not a directory of the commit",
	}
	for p, target := range honest {
		r.link(p, target)
	}
	targets := map[string]string{
		"abs.py":               "/opt/fixed/greet.py",
		"src/greet_link.py":    "../../outside/greet.py",
		"src/up2":              "../../x",
		"src/viaup.py":         "up/../x",        // src/up is the top: up/.. is above it
		"src/viadir.py":        "../lib/../../x", // lib is src, its parent the top
		"src/c1.py":            "c2.py",
		"src/c2.py":            "/opt/fixed.py",
		"src/bk.py":            "../.geas/missions/m/fixed.py",
		"src/bkcase.py":        "../.GEAS/Missions/m/fixed.py",
		"src/rules.md":         "../.geas/rules.md",
		"src/bkpass.py":        "../.geas/missions/../../src/greet.py",
		"src/g":                "../.git/config",
		"src/G":                "../.GIT/hooks/pre-commit",
		"src/gdot":             "../.git./config",
		"src/gzw":              "../.g\u200cit/config",
		"loop1":                "loop2",
		"loop2":                "loop1",
		"src/drive.py":         "C:/fixed/greet.py",
		"src/unc.py":           `\\server\share\greet.py`,
		"src/chainup.py":       "alias2.py",
		"src/alias2.py":        "../src/deep/../../..",
		"src/deep/linkbk/x.py": "../../../.geas/missions/m/fixed.py",
		".geas/missions/m/l":   "/not/judged",
		"src/backout.py":       "../build/../src/greet.py", // build may be a link on disk
		"src/backfile.py":      "greet.py/../alias.py",
	}
	for p, target := range targets {
		r.link(p, target)
	}
	r.git("add", "-A")
	r.stageLink("empty", "")
	r.stageLink("nul", "a\x00b")
	r.git("commit", "-q", "-m", "links") // not r.commit: add -A would drop the links not on disk
	head := r.git("rev-parse", "HEAD")
	escaping["src/c2.py"] = "an absolute path"
	escaping["loop2"] = "through more than 40 links"
	escaping["src/alias2.py"] = "out of the repository"
	escaping["empty"] = "an empty target"
	escaping["nul"] = "a target with a NUL byte"

	fenced := []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}
	n, got := linkEscapes(t, r, head, fenced)
	assert.Equal(t, escaping, got)
	assert.Equal(t, len(honest)+len(targets)-1+2, n, "every link but the fenced one is judged")

	// The honest links that lead to a path the tree does not have are named with that path.
	rep, err := r.open().CheckLinks(head, fenced)
	require.NoError(t, err)
	dangling := map[string]string{}
	for _, d := range rep.Dangling {
		dangling[d.Path] = d.Why
	}
	assert.Equal(t, map[string]string{
		"dangling":        "build/out.bin",
		"src/gitkeep":     ".gitkeep-not-git",
		"src/geasfile.md": ".geas/gate-policy.json",
	}, dangling)
}

// TestALinkFromAProjectBelowTheTopMayLeaveTheProject: the boundary is the repository's top, and
// the fenced paths are the ones the caller names (a project's bookkeeping below the top).
func TestALinkFromAProjectBelowTheTopMayLeaveTheProject(t *testing.T) {
	r := newGitRepo(t)
	r.write("tools/run.py", "print(1)\n")
	r.write("proj/src/a.py", "a\n")
	r.link("proj/src/tool.py", "../../tools/run.py")
	r.link("proj/src/bk.py", "../.geas/state/run.json")
	r.link("proj/src/out.py", "../../../elsewhere.py")
	head := r.commit("project below the top")
	fenced := []string{"proj/.geas/missions/", "proj/.geas/state/", "proj/.geas/memory/", "proj/.geas/recovery/", "proj/.geas/rules.md"}
	n, got := linkEscapes(t, r, head, fenced)
	assert.Equal(t, 3, n)
	assert.Equal(t, map[string]string{
		"proj/src/bk.py":  "into proj/.geas/state, whose content is not compared with the commit",
		"proj/src/out.py": "out of the repository",
	}, got)
}

// TestATreeWithoutLinksHasNoEscapes is the control: a tree of files and directories only.
func TestATreeWithoutLinksHasNoEscapes(t *testing.T) {
	r := newGitRepo(t)
	r.write("a/b/c.txt", "c\n")
	r.write("d.txt", "d\n")
	head := r.commit("files")
	n, got := linkEscapes(t, r, head, nil)
	assert.Zero(t, n)
	assert.Empty(t, got)
}

func TestFoldNameSeesWhatCaseInsensitiveSystemsSee(t *testing.T) {
	for _, s := range []string{".git", ".GIT", ".Git", ".git.", ".git ", ".g\u200cit", "\ufeff.git"} {
		assert.Equal(t, ".git", foldName(s), "%q", s)
	}
	assert.Equal(t, foldName("missions"), foldName("Miſſions"))
	assert.Equal(t, foldName("kit"), foldName("\u212Ait"))
	assert.NotEqual(t, ".git", foldName(".gitx"))
	assert.NotEqual(t, ".git", foldName("git"))
}

// BenchmarkCheckLinks walks the head tree of 100,000 files in 1,000 directories with 10 links,
// the cost the symlinks check adds to every gate run (bench/README.md).
func BenchmarkCheckLinks(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	dir := b.TempDir()
	var stream strings.Builder
	stream.WriteString("blob\nmark :1\ndata 6\nhello\n")
	stream.WriteString("blob\nmark :2\ndata 8\nfile.txt\n")
	stream.WriteString("commit refs/heads/main\ncommitter B <b@example.com> 1700000000 +0000\ndata 4\nbig\n")
	for d := range 1000 {
		for f := range 100 {
			fmt.Fprintf(&stream, "M 100644 :1 d%04d/f%03d.txt\n", d, f)
		}
		if d%100 == 0 {
			fmt.Fprintf(&stream, "M 120000 :2 d%04d/link\n", d)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"fast-import", "--quiet"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if args[0] == "fast-import" {
			cmd.Stdin = strings.NewReader(stream.String())
		}
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	cmd := exec.Command("git", "rev-parse", "main")
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(b, err)
	head := strings.TrimSpace(string(out))
	fenced := []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}
	b.ResetTimer()
	for b.Loop() {
		// A repository opened for each check: a gate run reads these trees once, cold.
		repo, err := Open(dir)
		require.NoError(b, err)
		rep, err := repo.CheckLinks(head, fenced)
		repo.Close()
		if err != nil || rep.Links != 10 || len(rep.Escapes) != 0 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// TestAFileSwappedForALinkOnDiskIsAChange: the link need not be committed; one put on disk in
// place of a committed file (pointing at fixed code outside) is a change of the working tree.
func TestAFileSwappedForALinkOnDiskIsAChange(t *testing.T) {
	r, head := wtFixture(t)
	settle(t, r)
	outside := filepath.Join(t.TempDir(), "fixed.go")
	require.NoError(t, os.WriteFile(outside, []byte("package a\n"), 0o644)) // the same content
	r.remove("a.go")
	require.NoError(t, os.Symlink(outside, filepath.Join(r.dir, "a.go")))
	assert.Equal(t, []string{"a.go"}, checkWT(t, r, head).Paths)
}

// TestLinkResolutionAgreesWithTheKernel builds random trees of directories, files and links whose
// targets climb, descend, chain and loop, with the same names outside the repository, and asks
// the kernel where each link leads in the working tree (which is a checkout of the commit): every
// link the kernel resolves outside the top, into .git or into the fenced path must be an escape
// for CheckLinks. (CheckLinks may refuse more: a path through the fence that comes back out.)
func TestLinkResolutionAgreesWithTheKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds many repositories")
	}
	rng := rand.New(rand.NewPCG(19, 7))
	words := []string{"..", "..", ".", "", "d1", "d2", "d3", "f1", "l1", "l2", "l3", ".geas", "missions", "fx", ".git", "objects"}
	dirs := []string{"", "d1", "d2", "d1/d3"}
	judgedHonest, judgedEscaping := 0, 0
	for round := range 25 {
		base := t.TempDir()
		// The same names outside the repository, so that links climbing out resolve.
		for _, d := range []string{"d1/d3", "d2", "r/d1/d3", "r/d2"} {
			require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(base, d, "f1"), []byte("outside\n"), 0o644))
		}
		r := &gitRepo{t: t, dir: filepath.Join(base, "r", "top"), clock: fixtureEpoch}
		require.NoError(t, os.MkdirAll(r.dir, 0o755))
		r.git("-c", "init.defaultBranch=main", "init", "-q")
		for _, d := range dirs {
			r.write(filepath.Join(d, "f1"), "inside\n")
		}
		r.write(".geas/missions/fx", "fenced\n")
		for i := range 10 {
			var parts []string
			if rng.IntN(10) == 0 {
				parts = append(parts, "") // a leading slash: absolute
			}
			for range 1 + rng.IntN(4) {
				parts = append(parts, words[rng.IntN(len(words))])
			}
			target := strings.Join(parts, "/")
			if strings.Trim(target, "/") == "" && !strings.HasPrefix(target, "/") {
				target = "."
			}
			r.link(filepath.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("l%d", i%3+1)+strings.Repeat("x", i/3)), target)
		}
		head := r.commit(fmt.Sprintf("round %d", round))
		rep, err := r.open().CheckLinks(head, []string{".geas/missions/"})
		require.NoError(t, err)
		escapes := map[string]string{}
		for _, e := range rep.Escapes {
			escapes[e.Path] = e.Why
		}
		top, err := filepath.EvalSymlinks(r.dir)
		require.NoError(t, err)
		out := r.git("ls-files", "-s")
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "120000 ") {
				continue
			}
			path := line[strings.IndexByte(line, '\t')+1:]
			resolved, err := filepath.EvalSymlinks(filepath.Join(r.dir, filepath.FromSlash(path)))
			if err != nil {
				continue // dangling or a loop: nothing is read through it
			}
			rel, err := filepath.Rel(top, resolved)
			require.NoError(t, err)
			rel = filepath.ToSlash(rel)
			leaves := rel == ".." || strings.HasPrefix(rel, "../") || rel == ".git" || strings.HasPrefix(rel, ".git/") ||
				strings.HasPrefix(rel+"/", ".geas/missions/")
			target, _ := os.Readlink(filepath.Join(r.dir, filepath.FromSlash(path)))
			if leaves {
				judgedEscaping++
				assert.Contains(t, escapes, path, "round %d: %s -> %s resolves to %s", round, path, target, resolved)
			} else if _, ok := escapes[path]; !ok {
				judgedHonest++
			}
		}
	}
	t.Logf("%d links the kernel resolved outside, %d inside and not refused", judgedEscaping, judgedHonest)
	assert.Positive(t, judgedEscaping)
	assert.Positive(t, judgedHonest)
}
