package git

import (
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
)

// firstParentAncestor returns the commit n first parents back from h (h~n). With a commit-graph
// that holds h, the steps are read from the graph's Commit Data, no object inflated; any error
// there (a malformed graph) makes it take the objects' way, commit by commit, as without a graph,
// which also gives the error when the history is shorter than n. Above the graph (commits newer
// than it) it reads the objects until it enters the graph. A shallow repository's graph is not
// used, as in reachable (git ignores it too): its shallow commits have no parents.
func (r *Repo) firstParentAncestor(h plumbing.Hash, n int) (plumbing.Hash, error) {
	shallow, err := r.store.Shallow()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read shallow commits: %w", err)
	}
	if len(shallow) > 0 {
		return r.firstParentsByObjects(h, n)
	}
	for ; n > 0; n-- {
		if g := r.commitGraph(); g != nil {
			if pos, ok := g.lookup(h); ok {
				if a, ok := g.firstParentAncestor(pos, n); ok {
					return a, nil
				}
				return r.firstParentsByObjects(h, n)
			}
		}
		var err error
		if h, err = r.parent(h, 1); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return h, nil
}

// firstParentsByObjects is firstParentAncestor reading each commit from the object store.
func (r *Repo) firstParentsByObjects(h plumbing.Hash, n int) (plumbing.Hash, error) {
	for range n {
		var err error
		if h, err = r.parent(h, 1); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return h, nil
}

// firstParentAncestor returns the commit n first parents back from position pos (< g.total); ok
// is false when the graph cannot say: a root met first (the objects then give the error, with its
// concrete values) or a malformed entry, such as a parent whose generation is not below its
// child's (which also ends a cycle), as reachableByGraph checks every edge it follows.
func (g *commitGraph) firstParentAncestor(pos uint32, n int) (plumbing.Hash, bool) {
	var buf [2]uint32
	gen, err := g.generation(pos)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	for range n {
		ps, err := g.appendParents(buf[:0], pos)
		if err != nil || len(ps) == 0 {
			return plumbing.ZeroHash, false
		}
		pgen, err := g.generation(ps[0])
		if err != nil || gen != math.MaxUint64 && pgen != math.MaxUint64 && pgen >= gen {
			return plumbing.ZeroHash, false
		}
		pos, gen = ps[0], pgen
	}
	return g.hashAt(pos), true
}
