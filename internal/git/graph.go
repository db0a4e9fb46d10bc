package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	commitgraph "github.com/go-git/go-git/v5/plumbing/format/commitgraph/v2"
)

// openCommitGraph opens the repository's commit-graph, memory-mapped: objects/info/commit-graph,
// else the chain under objects/info/commit-graphs, as git looks for them. It returns nil and no
// error when there is none.
func openCommitGraph(objectsDir string) (commitgraph.Index, error) {
	single := filepath.Join(objectsDir, "info", "commit-graph")
	if _, err := os.Stat(single); err == nil {
		return openGraphFile(single, nil)
	}
	dir := filepath.Join(objectsDir, "info", "commit-graphs")
	chainFile, err := os.Open(filepath.Join(dir, "commit-graph-chain"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open commit-graph chain: %w", err)
	}
	chain, err := commitgraph.OpenChainFile(bufio.NewReader(chainFile))
	_ = chainFile.Close()
	if err != nil {
		return nil, fmt.Errorf("read commit-graph chain: %w", err)
	}
	var index commitgraph.Index
	for _, layer := range chain { // oldest first: each layer's parent is the one before
		next, err := openGraphFile(filepath.Join(dir, "graph-"+layer+".graph"), index)
		if err != nil {
			if index != nil {
				_ = index.Close()
			}
			return nil, err
		}
		index = next
	}
	return index, nil
}

// openGraphFile maps one commit-graph file over parent (nil for the base layer).
func openGraphFile(path string, parent commitgraph.Index) (commitgraph.Index, error) {
	data, err := mmapFile(path)
	if err != nil {
		return nil, fmt.Errorf("map commit-graph: %w", err)
	}
	index, err := commitgraph.OpenFileIndexWithParent(&mappedReaderAt{data: data}, parent)
	if err != nil {
		_ = unmap(data)
		return nil, fmt.Errorf("read commit-graph %s: %w", path, err)
	}
	return index, nil
}

// mappedReaderAt is the io.ReaderAt go-git's commit-graph reader wants, over a mapped file; Close
// unmaps it.
type mappedReaderAt struct{ data []byte }

func (m *mappedReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(b, m.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (m *mappedReaderAt) Close() error {
	if m.data == nil {
		return nil
	}
	err := unmap(m.data)
	m.data = nil
	return err
}

// generation is a commit's topological level from the graph; 0 (written by git before 2.19:
// unknown) counts as infinite, which prunes nothing.
func generation(d *commitgraph.CommitData) uint64 {
	if d.Generation == 0 {
		return math.MaxUint64
	}
	return d.Generation
}

// errNotInGraph says the commit-graph cannot answer: base is not in it.
var errNotInGraph = errors.New("base is not in the commit-graph")

// reachableByGraph decides whether base is reachable from head with the commit-graph: a walk
// from head that drops every commit whose generation is at or below base's, since a commit can
// only reach commits of a lower generation. Commits newer than the graph (not in it) are read
// from the object store until the walk enters the graph, whose parents are always in it. It
// returns errNotInGraph when base is not in the graph.
func (r *Repo) reachableByGraph(g commitgraph.Index, base, head plumbing.Hash) (bool, error) {
	bi, err := g.GetIndexByHash(base)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, errNotInGraph
	}
	if err != nil {
		return false, fmt.Errorf("commit-graph lookup %s: %w", base, err)
	}
	bd, err := g.GetCommitDataByIndex(bi)
	if err != nil {
		return false, fmt.Errorf("commit-graph read %s: %w", base, err)
	}
	baseGen := generation(bd)

	seen := make([]uint64, (g.MaximumNumberOfHashes()+63)/64)
	var inGraph []uint32                           // graph positions to visit
	outside := []plumbing.Hash{head}               // commits not in the graph to visit
	seenOutside := map[plumbing.Hash]bool{}        // they are few: the ones newer than the graph
	enter := func(h plumbing.Hash) (bool, error) { // queue h; true when it is base
		if h == base {
			return true, nil
		}
		i, err := g.GetIndexByHash(h)
		switch {
		case err == nil:
			inGraph = append(inGraph, i)
		case errors.Is(err, plumbing.ErrObjectNotFound):
			outside = append(outside, h)
		default:
			return false, fmt.Errorf("commit-graph lookup %s: %w", h, err)
		}
		return false, nil
	}
	if i, err := g.GetIndexByHash(head); err == nil {
		outside, inGraph = nil, []uint32{i}
	}
	for len(outside) > 0 {
		h := outside[len(outside)-1]
		outside = outside[:len(outside)-1]
		if seenOutside[h] {
			continue
		}
		seenOutside[h] = true
		c, err := r.readCommit(h)
		if err != nil {
			return false, err
		}
		for _, p := range c.parents {
			if found, err := enter(p); found || err != nil {
				return found, err
			}
		}
	}
	for len(inGraph) > 0 {
		i := inGraph[len(inGraph)-1]
		inGraph = inGraph[:len(inGraph)-1]
		if seen[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		seen[i/64] |= 1 << (i % 64)
		d, err := g.GetCommitDataByIndex(i)
		if err != nil {
			return false, fmt.Errorf("commit-graph read position %d: %w", i, err)
		}
		if generation(d) <= baseGen {
			continue // cannot reach base
		}
		for _, p := range d.ParentIndexes {
			if p == bi {
				return true, nil
			}
			if int(p/64) < len(seen) && seen[p/64]&(1<<(p%64)) == 0 {
				inGraph = append(inGraph, p)
			}
		}
	}
	return false, nil
}

// commitHeader is what the walks need of a commit.
type commitHeader struct {
	parents []plumbing.Hash
	when    int64 // committer time, unix seconds; 0 if unreadable (it only orders the walk)
}

// readCommit reads a commit's parents and committer time without decoding the rest of it; from a
// pack, most commits are inflated only as far as their committer line.
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
