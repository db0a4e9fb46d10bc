package git

import (
	"os"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// benchRepo opens the repository GEAS_BENCH_GITDIR names (a clone of git/git, say, bare or not),
// or skips: object-reading benchmarks need a large real pack.
func benchRepo(b *testing.B) *Repo {
	b.Helper()
	dir := os.Getenv("GEAS_BENCH_GITDIR")
	if dir == "" {
		b.Skip("set GEAS_BENCH_GITDIR to a large repository (a clone of git/git)")
	}
	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return repo
}

// BenchmarkReadTrees reads every tree of HEAD's commit through go-git's object API (what the
// tree diff does), on a freshly opened repository each time: no object cached between
// iterations.
func BenchmarkReadTrees(b *testing.B) {
	benchRepo(b).Close()
	dir := os.Getenv("GEAS_BENCH_GITDIR")
	var trees int
	for b.Loop() {
		repo, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		head, err := repo.resolve("HEAD")
		if err != nil {
			b.Fatal(err)
		}
		c, err := object.GetCommit(repo.store, head)
		if err != nil {
			b.Fatal(err)
		}
		trees = 0
		if err := walkTrees(repo, c.TreeHash, &trees); err != nil {
			b.Fatal(err)
		}
		if err := repo.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(trees), "trees")
}

func walkTrees(repo *Repo, h plumbing.Hash, n *int) error {
	t, err := object.GetTree(repo.store, h)
	if err != nil {
		return err
	}
	*n++
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := walkTrees(repo, e.Hash, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkCommitHeaders reads the headers (parents, committer time) of the first 20,000
// commits reached from HEAD, breadth first, with readCommit: the walk IsAncestor does without a
// commit-graph.
func BenchmarkCommitHeaders(b *testing.B) {
	repo := benchRepo(b)
	defer repo.Close()
	head, err := repo.resolve("HEAD")
	if err != nil {
		b.Fatal(err)
	}
	const want = 20000
	var n int
	for b.Loop() {
		seen := map[plumbing.Hash]bool{head: true}
		queue := []plumbing.Hash{head}
		for n = 0; n < want && len(queue) > 0; n++ {
			c, err := repo.readCommit(queue[0])
			if err != nil {
				b.Fatal(err)
			}
			queue = queue[1:]
			for _, p := range c.parents {
				if !seen[p] {
					seen[p] = true
					queue = append(queue, p)
				}
			}
		}
	}
	b.ReportMetric(float64(n), "commits")
}
