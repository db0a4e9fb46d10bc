package git

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolveFirstParentsThroughTheCommitGraph resolves SHA~N for every commit of a random history
// (merges, several roots) and N from 0 past the longest first-parent line, with a commit-graph
// that holds the first 30 of 100 commits (the others are newer than it), with a split chain of
// the first 30 and the next 30, and with one whose Commit Data is damaged: the same commit, or the
// same error, as from the objects alone.
func TestResolveFirstParentsThroughTheCommitGraph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write [][]string
		// damage edits the commit-graph file after it is written; nil: none
		damage func(t *testing.T, info string)
	}{
		{"one file", [][]string{{"commit-graph", "write", "--reachable", "--no-progress"}}, nil},
		{"split chain", [][]string{
			{"commit-graph", "write", "--reachable", "--split", "--no-progress"},
			{"commit-graph", "write", "--reachable", "--split=no-merge", "--no-progress"},
		}, nil},
		{"every commit its own first parent", [][]string{{"commit-graph", "write", "--reachable", "--no-progress"}},
			func(t *testing.T, info string) {
				patchFile(t, filepath.Join(info, "commit-graph"), func(b []byte) {
					cdat := chunkAt(t, b, "CDAT")
					for pos := range 30 {
						e := b[cdat+pos*graphCDATWidth+graphHashLen:]
						e[0], e[1], e[2], e[3] = 0, 0, 0, byte(pos)
					}
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newGitRepo(t)
			sha, _ := randomHistory(t, r, 7, 30, 0)
			r.git(tc.write[0]...)
			more, _ := randomHistory(t, r, 8, 30, 30)
			sha = append(sha, more...)
			for _, w := range tc.write[1:] {
				r.git(w...)
			}
			last, _ := randomHistory(t, r, 9, 40, 60)
			sha = append(sha, last...)
			if tc.damage != nil {
				tc.damage(t, filepath.Join(r.dir, ".git", "objects", "info"))
			}
			withGraph, objects := r.open(), r.open()
			require.NotNil(t, withGraph.commitGraph(), "the graph is used: %v", withGraph.graphErr)
			objects.graphOpened = true // as if there were no commit-graph
			fromGraph := 0
			for _, s := range sha {
				for n := range 40 {
					rev := fmt.Sprintf("%s~%d", s, n)
					want, wantErr := objects.Resolve(rev)
					got, err := withGraph.Resolve(rev)
					if wantErr != nil {
						require.EqualError(t, err, wantErr.Error(), rev)
						continue
					}
					require.NoError(t, err, rev)
					require.Equal(t, want, got, rev)
					if pos, ok := withGraph.commitGraph().lookup(plumbing.NewHash(s)); ok && n > 0 {
						if path, ok := withGraph.commitGraph().firstParentPath(pos, n); ok {
							require.Equal(t, want, withGraph.commitGraph().hashAt(path[n]).String(), "%s from the graph", rev)
							fromGraph++
						}
					}
				}
			}
			if tc.damage == nil {
				assert.Positive(t, fromGraph, "answers from the graph")
			} else {
				assert.Zero(t, fromGraph, "a damaged graph answers nothing")
			}
		})
	}
}

// TestAForgedGraphDoesNotMoveAFirstParentStep makes the commit-graph lie (the tip's first parent
// is the root, a valid position of a lower generation): Resolve finds tip~1 in the graph, then
// reads the tip's commit object, which names another parent, so the answer is a *CorruptError
// naming the tip, never the root; once .git/shallow lists a commit, the graph is not used (as by
// IsAncestor and git) and the objects answer.
func TestAForgedGraphDoesNotMoveAFirstParentStep(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var sha []string
	for i := range 5 {
		sha = append(sha, r.commitAt(fmt.Sprintf("c%d", i), fixtureEpoch+int64(i)))
	}
	r.git("commit-graph", "write", "--reachable", "--no-progress")
	g := r.open().commitGraph()
	require.NotNil(t, g)
	got, err := r.open().Resolve(sha[4] + "~1")
	require.NoError(t, err)
	assert.Equal(t, sha[3], got, "the honest graph")
	tip, ok, root, ok2 := lookup2(g, sha[4], sha[0])
	require.True(t, ok && ok2)
	patchFile(t, filepath.Join(r.dir, ".git", "objects", "info", "commit-graph"), func(b []byte) {
		e := b[chunkAt(t, b, "CDAT")+int(tip)*graphCDATWidth+graphHashLen:]
		e[0], e[1], e[2], e[3] = byte(root>>24), byte(root>>16), byte(root>>8), byte(root)
	})
	repo := r.open()
	got, err = repo.Resolve(sha[4] + "~1")
	var ce *CorruptError
	require.ErrorAs(t, err, &ce, "the lying graph answered %s", got)
	assert.Equal(t, sha[4], ce.ID)
	assert.Contains(t, ce.Detail, "the commit-graph gives it the parents ["+sha[0]+"]")
	assert.Len(t, repo.Corrupt(), 1)

	require.NoError(t, os.WriteFile(filepath.Join(r.dir, ".git", "shallow"), []byte(sha[0]+"\n"), 0o644))
	got, err = r.open().Resolve(sha[4] + "~1")
	require.NoError(t, err)
	assert.Equal(t, sha[3], got, "a shallow repository's graph is not used")
}

func lookup2(g *commitGraph, a, b string) (uint32, bool, uint32, bool) {
	pa, oka := g.lookup(plumbing.NewHash(a))
	pb, okb := g.lookup(plumbing.NewHash(b))
	return pa, oka, pb, okb
}
