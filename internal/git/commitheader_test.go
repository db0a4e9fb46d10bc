package git

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadCommitHeaderMatchesGit reads every commit of a packed repository (plain commits, an
// octopus merge of 24 branches, a committer name longer than the first inflate, a commit with an
// extra header before the committer) with readCommitHeader, and requires git's parents and
// committer time, the whole read's parse, readCommitStart's answer, and both the header-only path
// and its fall-back to have been taken.
func TestReadCommitHeaderMatchesGit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var stream strings.Builder
	mark := 0
	commit := func(ref, committer string, when int, extra string, merges ...int) {
		mark++
		fmt.Fprintf(&stream, "commit %s\nmark :%d\ncommitter %s %d +0000\ndata <<EOT\ncommit %d\n%sEOT\n", ref, mark, committer, when, mark, extra)
		for i, m := range merges {
			if i == 0 {
				fmt.Fprintf(&stream, "from :%d\n", m)
			} else {
				fmt.Fprintf(&stream, "merge :%d\n", m)
			}
		}
		fmt.Fprintf(&stream, "M 100644 inline f%d\ndata 2\n%d\n\n", mark%3, mark%10)
	}
	commit("refs/heads/main", "C <c@example.com>", fixtureEpoch, "")
	var tips []int
	for b := range 24 {
		commit(fmt.Sprintf("refs/heads/b%d", b), "C <c@example.com>", fixtureEpoch+b+1, "", 1)
		tips = append(tips, mark)
	}
	commit("refs/heads/main", "Octopus <o@example.com>", fixtureEpoch+100, "", append([]int{1}, tips...)...)
	commit("refs/heads/main", strings.Repeat("Long Name ", 60)+"<l@example.com>", fixtureEpoch+200, "", mark)
	for i := range 20 {
		commit("refs/heads/main", "C <c@example.com>", fixtureEpoch+300+i, strings.Repeat("message line\n", i), mark)
	}
	out, err := r.cmd("", []byte(stream.String()), "fast-import", "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)
	// a commit with an encoding header between the committer and the message, made by hand
	raw := fmt.Sprintf("tree %s\nparent %s\nauthor A <a@b> 5 +0000\ncommitter B <b@c> 1700000999 +0000\nencoding ISO-8859-1\n\nm\n",
		r.git("rev-parse", "main^{tree}"), r.git("rev-parse", "main"))
	hashOut, err := r.cmd("", []byte(raw), "hash-object", "-t", "commit", "-w", "--stdin").Output()
	require.NoError(t, err)
	r.git("update-ref", "refs/heads/extra", strings.TrimSpace(string(hashOut)))
	r.git("repack", "-a", "-d", "-q")

	s := r.open().store
	prefixOK, fellBack := 0, 0
	lines := strings.Split(r.git("rev-list", "--all", "--parents", "--format=%ct"), "\n")
	require.Len(t, lines, 2*(mark+1))
	for i := 0; i < len(lines); i += 2 {
		f := strings.Fields(lines[i])
		id := plumbing.NewHash(f[1])
		when, err := strconv.ParseInt(lines[i+1], 10, 64)
		require.NoError(t, err)
		got, err := s.readCommitHeader(id)
		require.NoError(t, err)
		assert.Equal(t, when, got.when, f[1])
		var parents []plumbing.Hash
		for _, p := range f[2:] {
			parents = append(parents, plumbing.NewHash(p))
		}
		assert.Equal(t, parents, got.parents, f[1])
		_, data, err := s.readObject(id)
		require.NoError(t, err)
		whole, err := parseCommitHeader(data)
		require.NoError(t, err)
		assert.Equal(t, whole, got)
		start, err := s.readCommitStart(id)
		require.NoError(t, err)
		assert.Equal(t, whole.parents, start.parents, "the walk's read of the start")
		assert.Equal(t, whole.when, start.when, "the walk's read of the start")

		pi, off, ok, err := s.locate(id)
		require.NoError(t, err)
		require.True(t, ok)
		e, err := parsePackEntry(s.packs[pi].pack, off)
		require.NoError(t, err)
		if e.typ != plumbing.CommitObject {
			continue
		}
		pack := s.packs[pi].pack
		if c, _, ok := s.commitHeaderPrefix(pack[e.dataOff:len(pack)-packTrailerLen], e.size); ok {
			prefixOK++
			assert.Equal(t, whole, c)
		} else {
			fellBack++
		}
	}
	assert.Positive(t, prefixOK, "commits read from the start of their stream")
	assert.Positive(t, fellBack, "commits whose header needs more than the first inflate")

	tree := plumbing.NewHash(r.git("rev-parse", "main^{tree}"))
	_, err = s.readCommitHeader(tree)
	assert.ErrorIs(t, err, plumbing.ErrObjectNotFound, "a tree is not a commit")
}

// TestHeaderEnds checks where a commit's start is enough for parseCommitHeader.
func TestHeaderEnds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data string
		ends bool
	}{
		{"tree x\nparent y\ncommitter A <a> 1 +0000\n", true},
		{"tree x\nparent y\ncommitter A <a> 1 +00", false},
		{"tree x\nparent y\ncommitter A <a> 1", false},
		{"tree x\nparent y\ncommit", false},
		{"tree x\nparent y\n", false},
		{"committer A <a> 1 +0000\n", true},
		{"committer A <a> 1 +0000", false},
		{"tree x\n\nmessage", true},
		{"\nmessage", true},
		{"tree x\nparent y\nauthor committer A\n", false},
		{"", false},
	} {
		assert.Equal(t, c.ends, headerEnds([]byte(c.data)), "%q", c.data)
	}
}
