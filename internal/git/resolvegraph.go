package git

import (
	"errors"
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
)

// firstParentAncestor returns the commit n first parents back from h (h~n). With a commit-graph
// that holds h, the steps are found in the graph's Commit Data, then each commit of the path is
// read as an object and must name the parents the graph gives it (a *CorruptError if not); a
// malformed graph makes it take the objects' way, commit by commit, as without a graph, which
// also gives the error when the history is shorter than n. Above the graph (commits newer
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
				path, ok := g.firstParentPath(pos, n)
				if !ok {
					return r.firstParentsByObjects(h, n)
				}
				// The graph found the path; the commit objects confirm it (SPEC §5.1).
				var buf []uint32
				for _, p := range path[:n] {
					if buf, err = r.confirmGraphCommit(g, p, buf); err != nil {
						if errors.Is(err, errBadGraph) {
							return r.firstParentsByObjects(h, n)
						}
						return plumbing.ZeroHash, err
					}
				}
				return g.hashAt(path[n]), nil
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

// firstParentPath returns the positions of the commits from pos (< g.total) n first parents back,
// pos first (n+1 of them); ok is false when the graph cannot say: a root met first (the objects
// then give the error, with its concrete values) or a malformed entry, such as a parent whose
// generation is not below its child's (which also ends a cycle), as reachableByGraph checks every
// edge it follows.
func (g *commitGraph) firstParentPath(pos uint32, n int) ([]uint32, bool) {
	var buf [2]uint32
	gen, err := g.generation(pos)
	if err != nil {
		return nil, false
	}
	path := make([]uint32, 0, n+1)
	path = append(path, pos)
	for range n {
		ps, err := g.appendParents(buf[:0], pos)
		if err != nil || len(ps) == 0 {
			return nil, false
		}
		pgen, err := g.generation(ps[0])
		if err != nil || gen != math.MaxUint64 && pgen != math.MaxUint64 && pgen >= gen {
			return nil, false
		}
		pos, gen = ps[0], pgen
		path = append(path, pos)
	}
	return path, true
}
