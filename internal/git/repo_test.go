package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo is a fixture repository built with the git CLI, with fixed identities and dates so that
// every SHA is the same on every run, and with the user's and the system's git config ignored.
type gitRepo struct {
	t     *testing.T
	dir   string
	clock int64 // unix time of the next commit
}

const fixtureEpoch = 1700000000

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir(), clock: fixtureEpoch}
	r.git("-c", "init.defaultBranch=main", "init", "-q")
	return r
}

// cmd prepares a git command in dir (the repository root when dir is empty).
func (r *gitRepo) cmd(dir string, stdin []byte, args ...string) *exec.Cmd {
	if dir == "" {
		dir = r.dir
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	date := fmt.Sprintf("@%d +0000", r.clock)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.com",
		"GIT_COMMITTER_NAME=Fixture", "GIT_COMMITTER_EMAIL=fixture@example.com",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return cmd
}

// git runs git in the repository and returns its trimmed stdout; a failure stops the test.
func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	return r.gitIn("", args...)
}

func (r *gitRepo) gitIn(dir string, args ...string) string {
	r.t.Helper()
	var stderr bytes.Buffer
	cmd := r.cmd(dir, nil, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}

// gitOK runs git and reports whether it exited 0; any exit other than 0 or 1 stops the test.
func (r *gitRepo) gitOK(args ...string) bool {
	r.t.Helper()
	err := r.cmd("", nil, args...).Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false
	}
	require.NoError(r.t, err, "git %s", strings.Join(args, " "))
	return true
}

func (r *gitRepo) write(path, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(path))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(r.t, os.WriteFile(full, []byte(content), 0o644))
}

func (r *gitRepo) remove(path string) {
	r.t.Helper()
	require.NoError(r.t, os.RemoveAll(filepath.Join(r.dir, filepath.FromSlash(path))))
}

// commit stages everything and commits it at the fixture clock, which then moves one minute on.
func (r *gitRepo) commit(msg string) string {
	r.t.Helper()
	return r.commitAt(msg, r.clock)
}

// commitAt commits with both dates set to when; the clock then continues one minute after the
// latest date used, so that later commits are not skewed unless asked.
func (r *gitRepo) commitAt(msg string, when int64) string {
	r.t.Helper()
	saved := r.clock
	r.clock = when
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	r.clock = max(saved, when) + 60
	return r.git("rev-parse", "HEAD")
}

func (r *gitRepo) open() *Repo {
	r.t.Helper()
	repo, err := Open(r.dir)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { assert.NoError(r.t, repo.Close()) })
	return repo
}

// history is a repository with a linear main line, a sibling branch, a merged feature branch,
// tags, and commits whose committer dates go backwards and forwards.
type history struct {
	*gitRepo
	c                []string // c[0] is the root; c[1..12] follow it on main
	side             []string // two commits branched from c[5], never merged
	feature          []string // two commits branched from c[8], merged into main by merge
	merge            string   // parents c[12] and feature[1]
	pastSkew         string   // child of merge, committed a day before it
	futureSkew       string   // child of pastSkew, committed ten years ahead
	head             string   // child of futureSkew, normal date; main and HEAD
	blob, tree, tagO string   // a blob, a tree, and the annotated tag object
}

func newHistory(t *testing.T) *history {
	t.Helper()
	h := &history{gitRepo: newGitRepo(t)}
	for i := range 13 {
		h.write("f.txt", fmt.Sprintf("%d\n", i))
		h.c = append(h.c, h.commit(fmt.Sprintf("c%d", i)))
	}
	h.git("tag", "light", h.c[3])
	h.git("tag", "-a", "-m", "annotated", "ann", h.c[4])
	h.git("switch", "-q", "-c", "side", h.c[5])
	for i := range 2 {
		h.write("side.txt", fmt.Sprintf("%d\n", i))
		h.side = append(h.side, h.commit(fmt.Sprintf("s%d", i)))
	}
	h.git("switch", "-q", "-c", "feature", h.c[8])
	for i := range 2 {
		h.write("feature.txt", fmt.Sprintf("%d\n", i))
		h.feature = append(h.feature, h.commit(fmt.Sprintf("f%d", i)))
	}
	h.git("switch", "-q", "main")
	h.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
	h.merge = h.git("rev-parse", "HEAD")
	h.clock += 60
	h.write("f.txt", "past\n")
	h.pastSkew = h.commitAt("committed a day before its parent", h.clock-86400)
	h.write("f.txt", "future\n")
	futureDate := h.clock + 10*365*86400
	h.futureSkew = h.commitAt("committed ten years ahead", futureDate)
	h.clock = fixtureEpoch + 100000 // back to the present, long after the other commits
	h.write("f.txt", "head\n")
	h.head = h.commit("head")
	h.blob = h.git("rev-parse", "HEAD:f.txt")
	h.tree = h.git("rev-parse", "HEAD^{tree}")
	h.tagO = h.git("rev-parse", "ann")
	return h
}

func TestResolve(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	repo := h.open()
	short := h.git("rev-parse", "--short=4", h.c[3])
	require.Len(t, short, 4)

	for _, tc := range []struct {
		name, rev, want string
	}{
		{"full SHA", h.c[3], h.c[3]},
		{"full SHA in capitals", strings.ToUpper(h.c[3]), h.c[3]},
		{"abbreviated SHA, 4 digits", short, h.c[3]},
		{"abbreviated SHA, 7 digits", h.c[3][:7], h.c[3]},
		{"HEAD", "HEAD", h.head},
		{"branch", "side", h.side[1]},
		{"branch under refs/heads", "refs/heads/side", h.side[1]},
		{"lightweight tag", "light", h.c[3]},
		{"annotated tag peeled", "ann", h.c[4]},
		{"annotated tag SHA peeled", h.tagO, h.c[4]},
		{"annotated tag under refs/tags", "refs/tags/ann", h.c[4]},
		{"HEAD~1", "HEAD~1", h.futureSkew},
		{"HEAD~ and HEAD^", "HEAD~^", h.pastSkew},
		{"first parent of a merge", "main~3^", h.c[12]},
		{"second parent of a merge", "main~3^2", h.feature[1]},
		{"^0 and ^{commit}", "ann^0^{commit}", h.c[4]},
		{"tag then ancestry", "ann~2", h.c[2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repo.Resolve(tc.rev)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, h.git("rev-parse", "--verify", tc.rev+"^{commit}"), got, "git disagrees")
		})
	}

	for _, tc := range []struct {
		name, rev, why string
		gitResolves    bool // git accepts it but the gate does not support the syntax
	}{
		{name: "unknown name", rev: "nope", why: "unknown revision"},
		{name: "unknown full SHA", rev: strings.Repeat("ab", 20), why: "unknown revision"},
		{name: "blob SHA", rev: h.blob, why: "is a blob"},
		{name: "tree SHA", rev: h.tree, why: "is a tree"},
		{name: "too few hex digits", rev: short[:3], why: "unknown revision"},
		{name: "beyond the root", rev: "HEAD~99", why: "no such ancestor"},
		{name: "second parent of a non-merge", rev: "HEAD^2", why: "has 1 parent(s), not 2"},
		{name: "empty", rev: "", why: "empty revision"},
		{name: "range", rev: "main..side", why: "not a commit name"},
		{name: "trailing garbage", rev: "HEAD~1x", why: "unsupported revision syntax"},
		{name: "path traversal", rev: "../../etc/passwd", why: "not a commit name"},
		{name: "a .git file name", rev: "config", why: "unknown revision"},
		{name: "reflog", rev: "HEAD@{1}", why: "not a commit name", gitResolves: true},
		{name: "path in a commit", rev: "HEAD:f.txt", why: "not a commit name", gitResolves: false},
		{name: "tree of a commit", rev: "HEAD^{tree}", why: "unsupported revision syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repo.Resolve(tc.rev)
			assert.Empty(t, got)
			var revErr *RevisionError
			require.ErrorAs(t, err, &revErr)
			assert.Equal(t, tc.rev, revErr.Rev)
			assert.Contains(t, err.Error(), tc.why)
			assert.Contains(t, err.Error(), strconv.Quote(tc.rev))
			if !tc.gitResolves {
				assert.False(t, h.gitOK("rev-parse", "-q", "--verify", tc.rev+"^{commit}"), "git resolves it")
			}
		})
	}
}

// TestResolvePackedRefs resolves branches and tags after git moved them into .git/packed-refs.
func TestResolvePackedRefs(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.git("pack-refs", "--all", "--prune")
	require.NoFileExists(t, filepath.Join(h.dir, ".git", "refs", "tags", "ann"))
	repo := h.open()
	for rev, want := range map[string]string{
		"side": h.side[1], "refs/heads/side": h.side[1], "light": h.c[3], "ann": h.c[4], "ann~1": h.c[3], "HEAD": h.head,
	} {
		got, err := repo.Resolve(rev)
		require.NoError(t, err, rev)
		assert.Equal(t, want, got, rev)
	}
}

// TestResolveAmbiguousPrefix builds enough commits for two of them to share their first four hex
// digits, and checks that such a prefix is refused rather than resolved to one of them.
func TestResolveAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	_, prefix, byPrefix := commitsSharingAPrefix(t, r)
	repo := r.open()

	_, err := repo.Resolve(prefix)
	var revErr *RevisionError
	require.ErrorAs(t, err, &revErr)
	assert.ErrorIs(t, err, errRevAmbiguous)
	for _, sha := range byPrefix[prefix] {
		assert.Contains(t, err.Error(), sha, "the message lists the candidates")
	}
	assert.False(t, r.gitOK("rev-parse", "-q", "--verify", prefix+"^{commit}"), "git resolves it")

	one := byPrefix[prefix][0]
	got, err := repo.Resolve(one[:12])
	require.NoError(t, err)
	assert.Equal(t, one, got)
}

func TestOpenRepo(t *testing.T) {
	t.Parallel()
	t.Run("no repository", func(t *testing.T) {
		dir := t.TempDir()
		repo, err := Open(dir)
		assert.Nil(t, repo)
		require.ErrorIs(t, err, ErrNoRepository)
		assert.Contains(t, err.Error(), dir)
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "absent"))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrNoRepository)
	})

	r := newGitRepo(t)
	r.write("a/b/c.txt", "c\n")
	mainHead := r.commit("root")

	t.Run("subdirectory of a repository", func(t *testing.T) {
		repo, err := Open(filepath.Join(r.dir, "a", "b"))
		require.NoError(t, err)
		defer repo.Close()
		got, err := repo.Resolve("HEAD")
		require.NoError(t, err)
		assert.Equal(t, mainHead, got)
	})

	t.Run("linked worktree", func(t *testing.T) {
		wt := filepath.Join(t.TempDir(), "wt")
		r.git("worktree", "add", "-q", "-b", "topic", wt)
		require.NoError(t, os.WriteFile(filepath.Join(wt, "topic.txt"), []byte("topic\n"), 0o644))
		r.gitIn(wt, "add", "-A")
		r.gitIn(wt, "commit", "-q", "-m", "topic")
		topicHead := r.gitIn(wt, "rev-parse", "HEAD")

		repo, err := Open(wt)
		require.NoError(t, err)
		defer repo.Close()
		for rev, want := range map[string]string{"HEAD": topicHead, "topic": topicHead, "main": mainHead} {
			got, err := repo.Resolve(rev)
			require.NoError(t, err, rev)
			assert.Equal(t, want, got, rev)
		}
		ok, err := repo.IsAncestor(mainHead, topicHead)
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

func TestIsAncestor(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	repo := h.open()
	type ancestorCase struct {
		name       string
		base, head string
		want       bool
	}
	cases := []ancestorCase{
		{"one commit back", h.c[11], h.c[12], true},
		{"ten commits back", h.c[2], h.c[12], true},
		{"root", h.c[0], h.head, true},
		{"base is head", h.head, h.head, true},
		{"sibling branch commit", h.side[1], h.head, false},
		{"main commit from a sibling branch", h.c[12], h.side[1], false},
		{"fork point from a sibling branch", h.c[5], h.side[1], true},
		{"only through the second parent of a merge", h.feature[0], h.head, true},
		{"the merge itself", h.merge, h.head, true},
		{"parent of a commit dated before it", h.merge, h.pastSkew, true},
		{"across a commit dated before its parent", h.c[1], h.head, true},
		{"commit dated ten years ahead", h.futureSkew, h.head, true},
		{"head is an ancestor of base", h.c[12], h.c[2], false},
		{"head is the root", h.head, h.c[0], false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repo.IsAncestor(tc.base, tc.head)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, h.gitOK("merge-base", "--is-ancestor", tc.base, tc.head), got, "git disagrees")
		})
	}

	// The same answers through a commit-graph, with one commit made after it (outside it).
	t.Run("commit-graph", func(t *testing.T) {
		h.git("commit-graph", "write", "--reachable", "--no-progress")
		h.write("f.txt", "after the graph\n")
		after := h.commit("after the graph")
		repo := h.open()
		g := repo.commitGraph()
		require.NoError(t, repo.graphErr)
		require.NotNil(t, g, "the commit-graph is found")
		for _, tc := range cases {
			got, err := repo.IsAncestor(tc.base, tc.head)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, tc.name)
			if tc.head == h.head {
				got, err := repo.IsAncestor(tc.base, after)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got, "%s, from a commit newer than the graph", tc.name)
			}
		}
		got, err := repo.IsAncestor(after, h.head)
		require.NoError(t, err)
		assert.False(t, got, "a commit outside the graph from one inside")
	})

	for _, tc := range []struct{ name, base, head, want string }{
		{"abbreviated base", h.c[1][:12], h.head, "not a full commit SHA"},
		{"branch name as head", h.c[1], "main", "not a full commit SHA"},
		{"blob as base", h.blob, h.head, "is not a commit"},
		{"unknown head", h.c[1], strings.Repeat("0", 40), "is not a commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := repo.IsAncestor(tc.base, tc.head)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestIsAncestorShallowClone walks down to the shallow boundary of a clone and stops there, as git
// does, instead of failing on the parents it does not have.
func TestIsAncestorShallowClone(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	clone := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "clone"), clock: h.clock}
	h.git("clone", "-q", "--depth", "2", "--no-single-branch", "file://"+h.dir, clone.dir)
	require.FileExists(t, filepath.Join(clone.dir, ".git", "shallow"))
	repo := clone.open()
	for _, tc := range []struct {
		name       string
		base, head string
		want       bool
	}{
		{"inside the clone", h.futureSkew, h.head, true},
		{"other branch, walk ends at the boundary", h.side[1], h.head, false},
		{"other branch, its own boundary", h.head, h.side[1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repo.IsAncestor(tc.base, tc.head)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, clone.gitOK("merge-base", "--is-ancestor", tc.base, tc.head), got, "git disagrees")
		})
	}
}

// TestIsAncestorRandomHistory checks every pair of commits of a random history — several roots,
// octopus merges, committer dates unrelated to the topology — against the ancestry computed from
// the history's own description, and a sample of pairs against git.
func TestIsAncestorRandomHistory(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	const n = 80
	sha, ancestors := randomHistory(t, r, 1, n, 0) // ancestors[i][j]: commit j is reachable from commit i
	repo := r.open()
	checkedWithGit := 0
	for head := range n {
		for base := range n {
			got, err := repo.IsAncestor(sha[base], sha[head])
			require.NoError(t, err)
			require.Equal(t, ancestors[head][base], got, "IsAncestor(c%d, c%d)", base, head)
			if (head*n+base)%97 == 0 {
				checkedWithGit++
				require.Equal(t, got, r.gitOK("merge-base", "--is-ancestor", sha[base], sha[head]),
					"git disagrees on IsAncestor(c%d, c%d)", base, head)
			}
		}
	}
	assert.Greater(t, checkedWithGit, 50)
}

func TestChangedFiles(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	for path, content := range map[string]string{
		"a.txt": "a\n", "b.txt": "b\n", "old.txt": "moved content\n", "keep.txt": "keep\n",
		"dir/sub/x.go": "package sub\n", "dir/with space.txt": "s\n", "script.sh": "#!/bin/sh\n", "t": "a file\n",
	} {
		r.write(path, content)
	}
	base := r.commit("base")

	r.write("temp.txt", "added, then removed\n")
	r.write("keep.txt", "changed, then restored\n")
	r.write("a.txt", "a, modified in mid\n")
	mid := r.commit("mid")

	r.remove("temp.txt")
	r.write("keep.txt", "keep\n")
	r.write("new.txt", "new\n")
	r.write("a.txt", "a, modified in head\n")
	r.remove("b.txt")
	r.git("mv", "old.txt", "renamed.txt")
	r.write("dir/sub/y.go", "package sub\n")
	r.write("dir/sub/x.go", "package sub // modified\n")
	r.write("dir/with space.txt", "s2\n")
	require.NoError(t, os.Chmod(filepath.Join(r.dir, "script.sh"), 0o755))
	r.remove("t")
	r.write("t/inner", "now a directory\n")
	r.write("ünï.txt", "non-ASCII name\n")
	head := r.commit("head")
	repo := r.open()

	for _, tc := range []struct {
		name       string
		base, head string
		want       []string
	}{
		{"add, modify, delete, rename, mode, subdirectory", base, head, []string{
			"a.txt", "b.txt", "dir/sub/x.go", "dir/sub/y.go", "dir/with space.txt", "new.txt", "old.txt",
			"renamed.txt", "script.sh", "t", "t/inner", "ünï.txt",
		}},
		{"one commit", base, mid, []string{"a.txt", "keep.txt", "temp.txt"}},
		{"next commit", mid, head, []string{
			"a.txt", "b.txt", "dir/sub/x.go", "dir/sub/y.go", "dir/with space.txt", "keep.txt", "new.txt",
			"old.txt", "renamed.txt", "script.sh", "t", "t/inner", "temp.txt", "ünï.txt",
		}},
		{"reversed", head, base, []string{
			"a.txt", "b.txt", "dir/sub/x.go", "dir/sub/y.go", "dir/with space.txt", "new.txt", "old.txt",
			"renamed.txt", "script.sh", "t", "t/inner", "ünï.txt",
		}},
		{"same commit", head, head, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repo.ChangedFiles(tc.base, tc.head)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			var fromGit []string
			for p := range strings.SplitSeq(r.git("diff", "-z", "--name-only", "--no-renames", tc.base, tc.head), "\x00") {
				if p != "" {
					fromGit = append(fromGit, p)
				}
			}
			assert.Equal(t, fromGit, got, "git disagrees")
		})
	}

	_, err := repo.ChangedFiles("main", head)
	assert.ErrorContains(t, err, "not a full commit SHA")
}

func TestAddedLines(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line%d\n", i)
		}
		return b.String()
	}
	moved := "package moved\n\nfunc A() {}\n\nfunc B() {}\n\nfunc C() {}\n// end\n"
	r.write("f.txt", lines(1, 10))
	r.write("gone.txt", "deleted TODO\n")
	r.write("bin.dat", "\x00\x01binary\n")
	r.write("big.txt", strings.Repeat("0123456789\n", 10))
	r.write("nonl.txt", "a\nb")
	r.write("moved.go", moved)
	base := r.commit("base")

	r.write("f.txt", lines(1, 3)+"added A\n"+lines(4, 6)+"line7 TODO\n"+lines(8, 10)+"added B\nadded C\n")
	r.remove("gone.txt")
	r.write("bin.dat", "\x00\x01binary\nTODO text in a binary file\n")
	r.write("big.txt", strings.Repeat("0123456789\n", 10)+"TODO past the size limit\n")
	r.write("nonl.txt", "a\nb\nc\n")
	r.remove("moved.go")
	r.write("pkg/moved.go", moved+"// moved TODO\n")
	r.write("new.txt", "x\ny\n")
	r.write("crlf.txt", "p\r\nq\r\n")
	head := r.commit("head")
	repo := r.open()

	t.Run("head line numbers, binary and deleted files", func(t *testing.T) {
		got, scan, err := repo.AddedLines(base, head)
		require.NoError(t, err)
		assert.Equal(t, []AddedLine{
			{"big.txt", 11, "TODO past the size limit"},
			{"crlf.txt", 1, "p"}, {"crlf.txt", 2, "q"},
			{"f.txt", 4, "added A"}, {"f.txt", 8, "line7 TODO"}, {"f.txt", 12, "added B"}, {"f.txt", 13, "added C"},
			{"new.txt", 1, "x"}, {"new.txt", 2, "y"},
			{"nonl.txt", 2, "b"}, {"nonl.txt", 3, "c"},
			{"pkg/moved.go", 9, "// moved TODO"},
		}, got)
		assert.Equal(t, []string{"bin.dat"}, scan.Binary, "the binary file is counted, not silently skipped")
		assert.Equal(t, 6, scan.Files)
	})

	t.Run("same lines as git diff", func(t *testing.T) {
		got, _, err := repo.AddedLines(base, head)
		require.NoError(t, err)
		want := gitAddedLines(t, r, base, head)
		assert.Equal(t, want, got)
	})

	t.Run("nothing added", func(t *testing.T) {
		got, scan, err := repo.AddedLines(head, head)
		require.NoError(t, err)
		assert.Empty(t, got)
		assert.Empty(t, scan.Binary)
	})

	_, _, err := repo.AddedLines(base, "HEAD")
	assert.ErrorContains(t, err, "not a full commit SHA")
}

// gitAddedLines parses `git diff -U0 base head` into the lines it adds, numbered in head.
func gitAddedLines(t *testing.T, r *gitRepo, base, head string) []AddedLine {
	t.Helper()
	var added []AddedLine
	var path string
	line := 0
	sc := bufio.NewScanner(strings.NewReader(r.git("diff", "-U0", "--no-color", "--no-ext-diff", base, head)))
	for sc.Scan() {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "+++ "):
			path = strings.TrimPrefix(strings.TrimPrefix(text, "+++ "), "b/")
		case strings.HasPrefix(text, "@@ "):
			// @@ -a[,b] +c[,d] @@
			plus := strings.Fields(text)[2]
			start, _, _ := strings.Cut(strings.TrimPrefix(plus, "+"), ",")
			n, err := strconv.Atoi(start)
			require.NoError(t, err, text)
			line = n
		case strings.HasPrefix(text, "+"):
			added = append(added, AddedLine{Path: path, Line: line, Text: strings.TrimSuffix(text[1:], "\r")})
			line++
		}
	}
	require.NoError(t, sc.Err())
	return added
}

// commitsSharingAPrefix makes 1,500 commits on main (enough for two to share their first four
// hex digits) and returns their ids newest first, the first 4-digit prefix two of them share,
// and the ids by prefix.
func commitsSharingAPrefix(t *testing.T, r *gitRepo) (shas []string, prefix string, byPrefix map[string][]string) {
	t.Helper()
	var stream bytes.Buffer
	for i := range 1500 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter F <f@example.com> %d +0000\ndata <<EOT\nc%d\nEOT\n\n",
			fixtureEpoch+i, i)
	}
	out, err := r.cmd("", stream.Bytes(), "fast-import", "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)
	byPrefix = map[string][]string{}
	shas = strings.Fields(r.git("rev-list", "main"))
	for _, sha := range shas {
		byPrefix[sha[:4]] = append(byPrefix[sha[:4]], sha)
		if len(byPrefix[sha[:4]]) == 2 && prefix == "" {
			prefix = sha[:4]
		}
	}
	require.NotEmpty(t, prefix, "no two of the commits share a 4-digit prefix")
	return shas, prefix, byPrefix
}
