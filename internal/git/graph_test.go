package git

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomHistory imports n commits with random parents (several roots, octopus merges, dates
// unrelated to the topology) on branches b0..b<n-1> and returns their SHAs and, for each commit,
// the set of commits it reaches.
func randomHistory(t *testing.T, r *gitRepo, seed uint64, n, first int) ([]string, [][]bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	parents := make([][]int, n)
	var stream bytes.Buffer
	for i := range n {
		if i > 0 && rng.IntN(10) > 0 {
			for range 1 + rng.IntN(3) {
				if p := rng.IntN(i); !slices.Contains(parents[i], p) {
					parents[i] = append(parents[i], p)
				}
			}
		}
		fmt.Fprintf(&stream, "commit refs/heads/b%d\nmark :%d\ncommitter F <f@example.com> %d +0000\ndata <<EOT\nc%d\nEOT\n",
			first+i, i+1, fixtureEpoch+rng.Int64N(1000000), first+i)
		for k, p := range parents[i] {
			fmt.Fprintf(&stream, "%s :%d\n", map[bool]string{true: "from", false: "merge"}[k == 0], p+1)
		}
		fmt.Fprintf(&stream, "\n")
	}
	for i := range n {
		fmt.Fprintf(&stream, "get-mark :%d\n", i+1)
	}
	cmd := r.cmd("", stream.Bytes(), "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	sha := strings.Fields(string(out))
	require.Len(t, sha, n)
	ancestors := make([][]bool, n)
	for i := range n {
		ancestors[i] = make([]bool, n)
		ancestors[i][i] = true
		for _, p := range parents[i] {
			for j := range n {
				ancestors[i][j] = ancestors[i][j] || ancestors[p][j]
			}
		}
	}
	return sha, ancestors
}

// TestIsAncestorThroughTheCommitGraph answers every pair of a random history from a commit-graph
// (a single file, and a split chain), with commits made after the graph was written (outside it,
// read from the objects until the walk enters the graph), and checks a sample with git.
func TestIsAncestorThroughTheCommitGraph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write [][]string // commit-graph writes, one after each batch of commits but the last
	}{
		{"single file", [][]string{{"commit-graph", "write", "--reachable", "--no-progress"}}},
		{"split chain", [][]string{
			{"commit-graph", "write", "--reachable", "--split", "--no-progress"},
			{"commit-graph", "write", "--reachable", "--split=no-merge", "--no-progress"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newGitRepo(t)
			var sha []string
			var reach [][]bool
			// Batches share no commits: batch k's branches are b<40k>...; a later batch's
			// commits are independent histories, so ancestry across batches is false.
			batches := len(tc.write) + 1
			const per = 40
			for k := range batches {
				s, a := randomHistory(t, r, uint64(k+7), per, k*per)
				sha = append(sha, s...)
				reach = append(reach, a...)
				if k < len(tc.write) {
					r.git(tc.write[k]...)
				}
			}
			repo := r.open()
			g := repo.commitGraph()
			require.NoError(t, repo.graphErr)
			require.NotNil(t, g, "the commit-graph is found")
			inGraph := 0
			for _, s := range sha {
				if _, ok := g.lookup(plumbing.NewHash(s)); ok {
					inGraph++
				}
			}
			assert.Equal(t, per*len(tc.write), inGraph, "the last batch is newer than the graph")

			n := len(sha)
			checked := 0
			for head := range n {
				for base := range n {
					want := head/per == base/per && reach[head][base%per] // batches share no commits
					got, err := repo.IsAncestor(sha[base], sha[head])
					require.NoError(t, err)
					require.Equal(t, want, got, "IsAncestor(c%d, c%d)", base, head)
					if (head*n+base)%997 == 0 {
						checked++
						require.Equal(t, got, r.gitOK("merge-base", "--is-ancestor", sha[base], sha[head]),
							"git disagrees on IsAncestor(c%d, c%d)", base, head)
					}
				}
			}
			assert.Greater(t, checked, 5)
		})
	}
}
