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

// growingHistory is a generated history that grows batch by batch: each new commit has up to four
// parents among all the commits made so far (merges, octopus merges), or none (another root), and
// a committer date unrelated to the topology.
type growingHistory struct {
	r     *gitRepo
	rng   *rand.Rand
	sha   []string
	reach [][]bool // reach[i][j]: commit j is commit i or one of its ancestors
}

// grow imports n more commits on branches g<i> (every commit a branch tip: many unmerged).
func (h *growingHistory) grow(t *testing.T, n int) {
	t.Helper()
	var stream bytes.Buffer
	first := len(h.sha)
	parents := make([][]int, n)
	for k := range n {
		i := first + k
		if i > 0 && h.rng.IntN(8) > 0 {
			for range 1 + h.rng.IntN(4) {
				if p := h.rng.IntN(i); !slices.Contains(parents[k], p) {
					parents[k] = append(parents[k], p)
				}
			}
		}
		fmt.Fprintf(&stream, "commit refs/heads/g%d\nmark :%d\ncommitter F <f@example.com> %d +0000\ndata <<EOT\nc%d\nEOT\n",
			i, k+1, fixtureEpoch+h.rng.Int64N(1000000), i)
		for j, p := range parents[k] {
			ref := h.ref(p, first)
			fmt.Fprintf(&stream, "%s %s\n", map[bool]string{true: "from", false: "merge"}[j == 0], ref)
		}
		stream.WriteString("\n")
	}
	for k := range n {
		fmt.Fprintf(&stream, "get-mark :%d\n", k+1)
	}
	cmd := h.r.cmd("", stream.Bytes(), "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	sha := strings.Fields(string(out))
	require.Len(t, sha, n)
	h.sha = append(h.sha, sha...)
	total := len(h.sha)
	for i := range h.reach {
		h.reach[i] = append(h.reach[i], make([]bool, total-len(h.reach[i]))...)
	}
	for k := range n {
		row := make([]bool, total)
		row[first+k] = true
		for _, p := range parents[k] {
			for j := range total {
				row[j] = row[j] || h.reach[p][j]
			}
		}
		h.reach = append(h.reach, row)
	}
}

// ref names commit p in a fast-import stream whose first new commit is first.
func (h *growingHistory) ref(p, first int) string {
	if p >= first {
		return fmt.Sprintf(":%d", p-first+1)
	}
	return h.sha[p]
}

// TestIsAncestorEqualsGit checks IsAncestor against `git merge-base --is-ancestor` and against the
// history's own ancestry, on every pair of a generated history of three batches (merges, octopus
// merges, several roots, unmerged branches, dates unrelated to the topology): without a
// commit-graph, with one file (generation v2, and topological levels only), with a split chain
// (and one whose base layer has no corrected dates, so that levels are used), each written before
// the last batch, so that the newest commits are outside it.
func TestIsAncestorEqualsGit(t *testing.T) {
	t.Parallel()
	v1 := []string{"-c", "commitGraph.generationVersion=1"}
	write := []string{"commit-graph", "write", "--reachable", "--no-progress"}
	for _, tc := range []struct {
		name   string
		writes [2][]string // after batch 0 and after batch 1; nil: none
		inV2   bool        // the graph must be read with corrected commit dates
	}{
		{"no commit-graph", [2][]string{nil, nil}, false},
		{"one file", [2][]string{nil, write}, true},
		{"one file, topological levels", [2][]string{nil, append(slices.Clone(v1), write...)}, false},
		{"one file, then stale", [2][]string{write, nil}, true},
		{"split chain", [2][]string{append(slices.Clone(write), "--split"), append(slices.Clone(write), "--split=no-merge")}, true},
		{"split chain, levels in the base", [2][]string{append(append(slices.Clone(v1), write...), "--split"),
			append(slices.Clone(write), "--split=no-merge")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &growingHistory{r: newGitRepo(t), rng: rand.New(rand.NewPCG(42, 7))}
			inGraph := 0
			for k := range 3 {
				h.grow(t, 45)
				if k < 2 && tc.writes[k] != nil {
					h.r.git(tc.writes[k]...)
					inGraph = len(h.sha)
				}
			}
			repo := h.r.open()
			g := repo.commitGraph()
			require.NoError(t, repo.graphErr)
			if inGraph == 0 {
				require.Nil(t, g)
			} else {
				require.NotNil(t, g)
				assert.Equal(t, tc.inV2, g.genV2, "generation version read")
				n := 0
				for _, s := range h.sha {
					if _, ok := g.lookup(plumbing.NewHash(s)); ok {
						n++
					}
				}
				assert.Equal(t, inGraph, n, "commits in the graph")
			}
			n := len(h.sha)
			for head := range n {
				for base := range n {
					got, err := repo.IsAncestor(h.sha[base], h.sha[head])
					require.NoError(t, err)
					require.Equal(t, h.reach[head][base], got, "IsAncestor(c%d, c%d)", base, head)
				}
			}
			require.NoError(t, repo.graphErr, "the graph was used throughout")
			rng := rand.New(rand.NewPCG(3, 4))
			trues := 0
			for range 60 {
				base, head := rng.IntN(n), rng.IntN(n)
				if rng.IntN(3) == 0 { // bias towards pairs that are ancestors
					for j := range n {
						if h.reach[head][j] && rng.IntN(4) == 0 {
							base = j
						}
					}
				}
				got, err := repo.IsAncestor(h.sha[base], h.sha[head])
				require.NoError(t, err)
				require.Equal(t, h.r.gitOK("merge-base", "--is-ancestor", h.sha[base], h.sha[head]), got,
					"git disagrees on IsAncestor(c%d, c%d)", base, head)
				if got {
					trues++
				}
			}
			assert.Greater(t, trues, 5, "the sample has ancestors")
			assert.Less(t, trues, 55, "the sample has non-ancestors")
		})
	}
}
