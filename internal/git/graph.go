package git

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// graphEntry is a commit of the commit-graph waiting in the walk, with its generation.
type graphEntry struct {
	pos uint32
	gen uint64
}

// reachableByGraph decides whether base is reachable from head with the commit-graph (graphfile.go):
// a walk in positions from head, parents read from the graph, a bitset of the positions seen, that
// drops every commit whose generation is at or below base's, since a commit can only reach commits
// of a lower generation. When base is not in the graph no commit of the graph can reach it (a graph
// holds every ancestor of its commits). Commits newer than the graph (not in it) are read from the
// object store until the walk enters the graph. It returns an error wrapping errBadGraph when the
// graph turns out inconsistent (a parent of a generation not below its child's, a bad EDGE or GDO2
// entry): the caller then walks the objects instead.
//
// The graph is written by whoever can write the repository, so it only finds a path: when the
// walk reaches base, the commits of the path it took are read as objects (verified against their
// ids) and each must name exactly the parents the graph gives it (confirmGraphCommit), else the
// answer is a *CorruptError.
func (r *Repo) reachableByGraph(g *commitGraph, base, head plumbing.Hash) (bool, error) {
	found, path, err := r.graphPath(g, base, head)
	if !found || err != nil {
		return found, err
	}
	var buf []uint32
	for _, pos := range path {
		if buf, err = r.confirmGraphCommit(g, pos, buf); err != nil {
			return false, err
		}
	}
	return true, nil
}

// graphPath is reachableByGraph's walk. When it reaches base, path holds the positions of the
// graph commits the walk took to it, base's child first, up to the first one it entered (head, or
// a parent of a commit outside the graph): the commits whose parents in the graph the answer
// rests on. A path through commits outside the graph alone is empty: their objects were read.
func (r *Repo) graphPath(g *commitGraph, base, head plumbing.Hash) (found bool, path []uint32, err error) {
	bpos, baseIn := g.lookup(base)
	baseGen := uint64(math.MaxUint64) // base outside the graph: every commit of the graph is dropped
	if baseIn {
		gen, err := g.generation(bpos)
		if err != nil {
			return false, nil, err
		}
		baseGen = gen
		if gen == math.MaxUint64 {
			baseGen = 0 // unknown: prune nothing
		}
	}
	seen := make([]uint64, (g.total+63)/64)
	var stack []graphEntry
	// pred is, for each position queued, the position whose parent it was (graphOutside: a
	// parent of a commit outside the graph, or head): the path back to head when base is found.
	pred := map[uint32]uint32{}
	// enter queues the graph commit at p, a parent of the commit at from (graphOutside when it is
	// not in the graph) of generation child (MaxUint64 when unknown or outside the graph); true
	// when p is base, and then path is the way to it.
	enter := func(p, from uint32, child uint64) (bool, error) {
		if baseIn && p == bpos {
			for q := from; q != graphOutside; q = pred[q] {
				if len(path) > int(g.total) {
					return false, fmt.Errorf("%w: the path to base loops", errBadGraph)
				}
				path = append(path, q)
			}
			return true, nil
		}
		gen, err := g.generation(p) // every edge is checked, so a cycle is refused too
		if err != nil {
			return false, err
		}
		if gen != math.MaxUint64 && child != math.MaxUint64 && gen >= child {
			return false, fmt.Errorf("%w: position %d of generation %d is a parent of generation %d",
				errBadGraph, p, gen, child)
		}
		if seen[p/64]&(1<<(p%64)) != 0 {
			return false, nil
		}
		seen[p/64] |= 1 << (p % 64)
		if gen > baseGen {
			stack = append(stack, graphEntry{p, gen})
			pred[p] = from
		}
		return false, nil
	}
	if hpos, ok := g.lookup(head); ok {
		if _, err := enter(hpos, graphOutside, math.MaxUint64); err != nil {
			return false, nil, err
		}
	} else if found, err := r.walkIntoGraph(g, base, head, enter); found || err != nil {
		return found, path, err
	}
	var parents []uint32
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var err error
		if parents, err = g.appendParents(parents[:0], e.pos); err != nil {
			return false, nil, err
		}
		for _, p := range parents {
			if found, err := enter(p, e.pos, e.gen); found || err != nil {
				return found, path, err
			}
		}
	}
	return false, nil, nil
}

// walkIntoGraph walks from head, which is not in the commit-graph, through the commits that are
// not in it either, reading them from the object store; the parents it finds in the graph go to
// enter. It returns true when it reaches base.
func (r *Repo) walkIntoGraph(g *commitGraph, base, head plumbing.Hash,
	enter func(p, from uint32, child uint64) (bool, error)) (bool, error) {
	outside := []plumbing.Hash{head}
	seen := map[plumbing.Hash]bool{head: true} // few: the commits newer than the graph
	for len(outside) > 0 {
		h := outside[len(outside)-1]
		outside = outside[:len(outside)-1]
		c, err := r.readCommit(h)
		if err != nil {
			return false, err
		}
		for _, p := range c.parents {
			if p == base {
				return true, nil
			}
			if pos, ok := g.lookup(p); ok {
				if found, err := enter(pos, graphOutside, math.MaxUint64); found || err != nil {
					return found, err
				}
			} else if !seen[p] {
				seen[p] = true
				outside = append(outside, p)
			}
		}
	}
	return false, nil
}

// graphOutside stands, in reachableByGraph's path, for a commit that is not in the graph (its
// parents were read from its object) or for head itself.
const graphOutside = math.MaxUint32

// confirmGraphCommit reads the commit at position pos of the graph as an object, verified against
// its id, and requires it to name exactly the parents, in order, that the graph gives it (a
// *CorruptError if not). buf is scratch space, returned for reuse.
func (r *Repo) confirmGraphCommit(g *commitGraph, pos uint32, buf []uint32) ([]uint32, error) {
	id := g.hashAt(pos)
	c, err := r.readCommit(id)
	if err != nil {
		return buf, err
	}
	if buf, err = g.appendParents(buf[:0], pos); err != nil {
		return buf, err
	}
	same := len(buf) == len(c.parents)
	for i := 0; same && i < len(buf); i++ {
		same = g.hashAt(buf[i]) == c.parents[i]
	}
	if same {
		return buf, nil
	}
	graphParents := make([]plumbing.Hash, len(buf))
	for i, p := range buf {
		graphParents[i] = g.hashAt(p)
	}
	return buf, r.store.corruption(id, fmt.Sprintf("the commit-graph gives it the parents [%s], the commit object names [%s]",
		joinHashes(graphParents), joinHashes(c.parents)))
}

// joinHashes lists ids for an error, separated by spaces.
func joinHashes(ids []plumbing.Hash) string {
	var b strings.Builder
	for i, h := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h.String())
	}
	return b.String()
}

// commitHeader is what the walks need of a commit.
type commitHeader struct {
	parents []plumbing.Hash
	when    int64 // committer time, unix seconds; 0 if unreadable (it only orders the walk)
	// verified: the whole commit was read and hashes to its id (readCommitStart answers some
	// commits from their start alone)
	verified bool
}

// readCommit reads a commit's parents and committer time, verified against h, without decoding
// the rest of it.
func (r *Repo) readCommit(h plumbing.Hash) (commitHeader, error) {
	c, err := r.store.readCommitHeader(h)
	if err != nil {
		return commitHeader{}, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// parseCommitHeader reads the parent lines and the committer date of a raw commit.
func parseCommitHeader(data []byte) (commitHeader, error) {
	var c commitHeader
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		switch {
		case len(line) == 0:
			return c, nil // end of the header
		case bytes.HasPrefix(line, []byte("parent ")):
			hx := line[len("parent "):]
			if len(hx) != 40 || !isHex(string(hx)) {
				return c, fmt.Errorf("malformed parent line %q", line)
			}
			c.parents = append(c.parents, plumbing.NewHash(string(hx)))
		case bytes.HasPrefix(line, []byte("committer ")):
			// committer Name <email> 1700000000 +0000
			if i := bytes.LastIndexByte(line, '>'); i >= 0 {
				var ts int64
				for _, b := range bytes.TrimLeft(line[i+1:], " ") {
					if b < '0' || b > '9' {
						break
					}
					ts = ts*10 + int64(b-'0')
				}
				c.when = ts
			}
			return c, nil // parents come before the committer
		}
	}
	return c, nil
}
