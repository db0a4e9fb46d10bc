package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wtFixture is a committed repository whose working tree is clean.
func wtFixture(t *testing.T) (*gitRepo, string) {
	r := newGitRepo(t)
	r.write("a.go", "package a\n")
	r.write("dir/b.txt", "bee\n")
	r.write("dir/sub/c.txt", "sea\n")
	r.write(".gitignore", "build/\n*.log\n")
	r.write(".geas/missions/m/tasks/t/record.json", "{}\n")
	r.write(".geas/gate-policy.json", "{}\n")
	require.NoError(t, os.Symlink("a.go", filepath.Join(r.dir, "link")))
	return r, r.commit("base")
}

var bookkeeping = []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}

func checkWT(t *testing.T, r *gitRepo, head string) *WorktreeReport {
	t.Helper()
	repo, err := Open(r.dir)
	require.NoError(t, err)
	defer repo.Close()
	rep, err := repo.CheckWorktree(head, bookkeeping)
	require.NoError(t, err)
	return rep
}

// backdate moves a file's mtime (and that of the index) so that no entry is racily clean.
func settle(t *testing.T, r *gitRepo) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	for _, p := range []string{"a.go", "dir/b.txt", "dir/sub/c.txt", ".gitignore", ".geas/gate-policy.json", ".geas/missions/m/tasks/t/record.json"} {
		require.NoError(t, os.Chtimes(filepath.Join(r.dir, p), past, past))
	}
	r.git("update-index", "--refresh")
}

func TestCheckWorktreeClean(t *testing.T) {
	for opener, open := range dirOpeners {
		t.Run(opener, func(t *testing.T) {
			defer useDirOpener(open)()
			testCheckWorktreeClean(t)
		})
	}
}

func testCheckWorktreeClean(t *testing.T) {
	r, head := wtFixture(t)
	rep := checkWT(t, r, head)
	assert.True(t, rep.Clean(head), "%+v", rep)
	assert.Equal(t, 6, rep.Entries, "the bookkeeping record.json is not compared")
	settle(t, r)
	rep = checkWT(t, r, head)
	assert.True(t, rep.Clean(head), "%+v", rep)
	// After a refresh with old mtimes nothing is racily clean: only the symlink (whose mtime is
	// fresh) may need hashing.
	assert.LessOrEqual(t, rep.Hashed, 1)
	// Ignored files and bookkeeping files are not changes.
	r.write("build/out.bin", "x")
	r.write("x.log", "x")
	r.write(".geas/missions/m/tasks/t/evidence/qa.json", "{}")
	r.write(".geas/state/events.jsonl", "{}")
	r.write(".geas/rules.md", "changed")
	rep = checkWT(t, r, head)
	assert.True(t, rep.Clean(head), "%+v", rep)
}

func TestCheckWorktreeFindsEveryChange(t *testing.T) {
	cases := map[string]struct {
		edit func(r *gitRepo)
		want []string
	}{
		"modified":        {func(r *gitRepo) { r.write("a.go", "package b\n") }, []string{"a.go"}},
		"deleted":         {func(r *gitRepo) { r.remove("dir/sub/c.txt") }, []string{"dir/sub/c.txt"}},
		"deleted dir":     {func(r *gitRepo) { r.remove("dir") }, []string{"dir/b.txt", "dir/sub/c.txt"}},
		"untracked":       {func(r *gitRepo) { r.write("dir/new.go", "x") }, []string{"dir/new.go"}},
		"untracked dir":   {func(r *gitRepo) { r.write("z/y/x.go", "x") }, []string{"z/y/x.go"}},
		"policy":          {func(r *gitRepo) { r.write(".geas/gate-policy.json", `{"x":1}`) }, []string{".geas/gate-policy.json"}},
		"untracked .geas": {func(r *gitRepo) { r.write(".geas/other.json", "{}") }, []string{".geas/other.json"}},
		"staged": {func(r *gitRepo) {
			r.write("a.go", "package staged\n")
			r.git("add", "a.go")
			r.write("a.go", "package a\n") // the file is back, the index holds the change
		}, []string{"a.go"}},
		"staged new": {func(r *gitRepo) {
			r.write("n.go", "x")
			r.git("add", "n.go")
		}, []string{"n.go"}},
		"removed from index": {func(r *gitRepo) { r.git("rm", "-q", "--cached", "dir/b.txt") }, []string{"dir/b.txt"}},
		"chmod": {func(r *gitRepo) {
			require.NoError(r.t, os.Chmod(filepath.Join(r.dir, "a.go"), 0o755))
		}, []string{"a.go"}},
		"symlink retargeted": {func(r *gitRepo) {
			r.remove("link")
			require.NoError(r.t, os.Symlink("dir/b.txt", filepath.Join(r.dir, "link")))
		}, []string{"link"}},
		"file becomes dir": {func(r *gitRepo) {
			r.remove("a.go")
			r.write("a.go/x", "x")
		}, []string{"a.go", "a.go/x"}},
		"untracked gitignore hides itself": {func(r *gitRepo) {
			r.write("dir/.gitignore", "*\n")
			r.write("dir/evil.go", "x")
		}, []string{"dir/.gitignore", "dir/evil.go"}},
		"gitignore edited": {func(r *gitRepo) {
			r.write(".gitignore", "build/\n*.log\n*.go\n")
			r.write("evil.go", "x")
		}, []string{".gitignore"}},
		"assume-unchanged": {func(r *gitRepo) {
			r.git("update-index", "--assume-unchanged", "a.go")
			r.write("a.go", "package z\n")
		}, []string{"a.go"}},
		"skip-worktree": {func(r *gitRepo) {
			r.git("update-index", "--skip-worktree", "dir/b.txt")
			r.write("dir/b.txt", "wasp\n")
		}, []string{"dir/b.txt"}},
		"nested repository": {func(r *gitRepo) {
			r.write("vendor/x/.git/HEAD", "ref: refs/heads/main\n")
		}, []string{"vendor/x/"}},
	}
	for opener, open := range dirOpeners {
		for name, tc := range cases {
			t.Run(opener+"/"+name, func(t *testing.T) {
				defer useDirOpener(open)()
				r, head := wtFixture(t)
				tc.edit(r)
				rep := checkWT(t, r, head)
				assert.False(t, rep.Clean(head))
				assert.Equal(t, tc.want, rep.Paths)
			})
		}
	}
}

// A same-size edit whose mtime is restored, after a refresh under core.checkStat=minimal and
// core.trustctime=false, is invisible to git status; the ctime and inode still differ, so the
// gate hashes it.
func TestCheckWorktreeSameSizeEditMtimeRestored(t *testing.T) {
	r, head := wtFixture(t)
	settle(t, r)
	path := filepath.Join(r.dir, "dir", "b.txt")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	r.git("config", "core.checkStat", "minimal")
	r.git("config", "core.trustctime", "false")
	require.NoError(t, os.WriteFile(path+".new", []byte("BEE\n"), 0o644))
	require.NoError(t, os.Rename(path+".new", path)) // a new inode
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	assert.Empty(t, r.git("status", "--porcelain"), "git is talked out of the change")
	rep := checkWT(t, r, head)
	assert.Equal(t, []string{"dir/b.txt"}, rep.Paths)
}

// A clean filter makes git see the file as it was; the gate hashes raw bytes.
func TestCheckWorktreeIgnoresFilters(t *testing.T) {
	r, head := wtFixture(t)
	r.write(".git/info/attributes", "a.go filter=hide\n")
	r.git("config", "filter.hide.clean", "printf 'package a\\n'")
	r.git("config", "filter.hide.smudge", "cat")
	r.write("a.go", "package evil\n")
	r.git("add", "a.go") // the clean filter stores the old blob: the index keeps the head's hash
	assert.Empty(t, r.git("status", "--porcelain"), "git is talked out of the change")
	rep := checkWT(t, r, head)
	assert.Equal(t, []string{"a.go"}, rep.Paths)
}

// A filter defined past the first 4 MiB of the configuration is still a filter: a configuration
// too large to read whole, or one that cannot be read, makes the check hash every entry.
func TestCheckWorktreeSeesAFilterDefinedFarIntoTheConfig(t *testing.T) {
	r, head := wtFixture(t)
	config := filepath.Join(r.dir, ".git", "config")
	old, err := os.ReadFile(config)
	require.NoError(t, err)
	padding := strings.Repeat("# "+strings.Repeat("x", 1021)+"\n", 4<<10) // 4 MiB of comments
	require.NoError(t, os.WriteFile(config, []byte(padding+string(old)), 0o644))
	r.write(".git/info/attributes", "a.go filter=hide\n")
	r.git("config", "filter.hide.clean", "printf 'package a\\n'")
	r.git("config", "filter.hide.smudge", "cat")
	r.write("a.go", "package evil\n")
	r.git("add", "a.go")
	assert.Empty(t, r.git("status", "--porcelain"), "git is talked out of the change")
	rep := checkWT(t, r, head)
	assert.Equal(t, []string{"a.go"}, rep.Paths)

	gitDir := filepath.Join(r.dir, ".git")
	require.NoError(t, os.WriteFile(config, old, 0o644))
	t.Setenv("HOME", t.TempDir())
	for _, env := range []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		t.Setenv(env, "")
	}
	etc, _ := os.ReadFile("/etc/gitconfig")
	if bytes.Contains(bytes.ToLower(etc), []byte("filter")) || bytes.Contains(bytes.ToLower(etc), []byte("include")) {
		t.Skip("/etc/gitconfig mentions a filter or an include")
	}
	assert.False(t, filtersConfigured(gitDir, gitDir), "no filter anywhere")
	// GIT_CONFIG_GLOBAL=/dev/null is git's empty configuration, not one that cannot be read
	// (refusing it hashed every entry of every run that CI or a bench started that way).
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	assert.False(t, filtersConfigured(gitDir, gitDir), "/dev/null is an empty configuration")
	// Any other special file there still may hold anything.
	t.Setenv("GIT_CONFIG_GLOBAL", gitDir)
	assert.True(t, filtersConfigured(gitDir, gitDir), "a directory as the global configuration cannot be read")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	require.NoError(t, os.Mkdir(filepath.Join(gitDir, "config.worktree"), 0o755))
	assert.True(t, filtersConfigured(gitDir, gitDir), "a configuration that cannot be read may hold one")
}

func TestCheckWorktreeHEADMoved(t *testing.T) {
	r, head := wtFixture(t)
	r.write("a.go", "package later\n")
	later := r.commit("later")
	rep := checkWT(t, r, head)
	assert.Equal(t, later, rep.HEAD)
	assert.False(t, rep.Clean(head))
	assert.Equal(t, []string{"a.go"}, rep.Paths, "the index holds the later commit's a.go")
	rep = checkWT(t, r, later)
	assert.True(t, rep.Clean(later), "%+v", rep)
}

func TestCheckWorktreeInfoExclude(t *testing.T) {
	r, head := wtFixture(t)
	r.write(".git/info/exclude", "# comment\nscratch/\n")
	r.write("scratch/x", "x")
	rep := checkWT(t, r, head)
	assert.True(t, rep.Clean(head), "%+v", rep)
}

func TestCheckWorktreeCorruptIndex(t *testing.T) {
	r, head := wtFixture(t)
	path := filepath.Join(r.dir, ".git", "index")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-30] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))
	repo, err := Open(r.dir)
	require.NoError(t, err)
	defer repo.Close()
	_, err = repo.CheckWorktree(head, bookkeeping)
	assert.ErrorContains(t, err, "index")
}

func TestCheckout(t *testing.T) {
	r, _ := wtFixture(t)
	r.write("run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755))
	head := r.commit("script")
	repo := r.open()
	co, err := repo.Checkout(head)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, RemoveCheckout(co.Dir))
		_, err := os.Stat(co.Dir)
		assert.ErrorIs(t, err, os.ErrNotExist)
	}()
	data, err := os.ReadFile(filepath.Join(co.Dir, "dir", "sub", "c.txt"))
	require.NoError(t, err)
	assert.Equal(t, "sea\n", string(data))
	fi, err := os.Stat(filepath.Join(co.Dir, "run.sh"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&0o100, "the executable bit is kept")
	target, err := os.Readlink(filepath.Join(co.Dir, "link"))
	require.NoError(t, err)
	assert.Equal(t, "a.go", target)
	_, err = os.Stat(filepath.Join(co.Dir, ".git"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	changed, err := co.Changed()
	require.NoError(t, err)
	assert.Empty(t, changed)
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "a.go"), []byte("package b\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "new.go"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "x.log"), []byte("ignored by the commit's .gitignore"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(co.Dir, "dir", "b.txt")))
	changed, err = co.Changed()
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go", "dir/b.txt", "new.go"}, changed)

	assert.Error(t, RemoveCheckout(r.dir), "only a gate checkout is removed")
}

// The index's tree id is git's: the check reads no tree of the head when the index is the head.
func TestIndexTreeHashIsGits(t *testing.T) {
	r, _ := wtFixture(t)
	r.write("dir.txt", "sorts before dir/ in a tree, after it in the index\n")
	r.write("dir-x/y", "y\n")
	r.write("dir0", "z\n")
	r.write("run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755))
	r.commit("more")
	idx, _, err := readIndex(filepath.Join(r.dir, ".git", "index"))
	require.NoError(t, err)
	got, ok := indexTreeHash(idx.Entries)
	require.True(t, ok)
	assert.Equal(t, r.git("rev-parse", "HEAD^{tree}"), got.String())

	r.write("a.go", "package staged\n")
	r.git("add", "a.go")
	idx, _, err = readIndex(filepath.Join(r.dir, ".git", "index"))
	require.NoError(t, err)
	got, ok = indexTreeHash(idx.Entries)
	require.True(t, ok)
	assert.Equal(t, r.git("write-tree"), got.String())
	assert.NotEqual(t, r.git("rev-parse", "HEAD^{tree}"), got.String())
}

// A linked worktree has its own index and HEAD (under .git/worktrees/NAME) and shares
// info/exclude with the main checkout.
func TestCheckWorktreeLinkedWorktree(t *testing.T) {
	r, head := wtFixture(t)
	wt := filepath.Join(t.TempDir(), "linked")
	r.git("worktree", "add", "-q", "-b", "side", wt)
	r.write(".git/info/exclude", "scratch\n")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "scratch"), []byte("ignored"), 0o644))
	repo, err := Open(wt)
	require.NoError(t, err)
	defer repo.Close()
	rep, err := repo.CheckWorktree(head, bookkeeping)
	require.NoError(t, err)
	assert.True(t, rep.Clean(head), "%+v", rep)
	assert.Equal(t, 6, rep.Entries)

	require.NoError(t, os.WriteFile(filepath.Join(wt, "a.go"), []byte("package linked\n"), 0o644))
	rep, err = repo.CheckWorktree(head, bookkeeping)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go"}, rep.Paths)
	main := checkWT(t, r, head)
	assert.True(t, main.Clean(head), "the main checkout is not the linked one: %+v", main)
}
