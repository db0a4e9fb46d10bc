package git

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The commit-graph is read in place from the mapped files (git's gitformat-commit-graph(5)):
// commits are numbered by position (a layer's OID Lookup index plus the commits of the layers
// below it), and the walk reads parents and generations from the Commit Data chunk without
// hashes. Anything malformed or inconsistent makes the graph unusable (errBadGraph): the caller
// then walks the objects, as if there were no graph.

// errBadGraph says the commit-graph is malformed or inconsistent and must not be used.
var errBadGraph = errors.New("malformed commit-graph")

const (
	graphHashLen    = 20         // SHA-1: the only hash version read (1)
	graphCDATWidth  = 20 + 16    // root tree, two parents, generation and date
	graphParentNone = 0x70000000 // no parent in that slot
	graphHighBit    = 0x80000000 // parent 2: an EDGE index; EDGE: the last parent; GDA2: a GDO2 index
	graphLevelMax   = 0x3FFFFFFF // a topological level clamped here says nothing
	graphMaxCommits = 0x70000000 // positions must stay below graphParentNone
)

// graphLayer is one commit-graph file, mapped.
type graphLayer struct {
	data   []byte // the whole mapping (unmapped by close)
	fanout []byte // OIDF: 256 big-endian counts
	oids   []byte // OIDL: n sorted hashes
	cdat   []byte // CDAT: n entries of graphCDATWidth bytes
	edge   []byte // EDGE: extra parents of octopus merges; may be empty
	gda2   []byte // GDA2: n corrected commit date offsets; nil when absent
	gdo2   []byte // GDO2: overflowing offsets, 8 bytes each
	bases  []byte // BASE: the hashes of the layers below, oldest first
	first  uint32 // global position of this layer's first commit
	n      uint32 // commits in this layer
}

// commitGraph is a commit-graph: one file, or a split chain of layers, base first.
type commitGraph struct {
	layers []graphLayer
	total  uint32 // commits in all layers
	genV2  bool   // every layer has GDA2: generations are corrected commit dates
	mapped bool   // layers' data are mappings to release on close
}

// openCommitGraph opens the repository's commit-graph, memory-mapped: objects/info/commit-graph,
// else the chain under objects/info/commit-graphs, as git looks for them. It returns nil and no
// error when there is none; an error (wrapping errBadGraph when the files are malformed) means
// the graph cannot be used.
func openCommitGraph(objectsDir string) (*commitGraph, error) {
	single := filepath.Join(objectsDir, "info", "commit-graph")
	if _, err := os.Stat(single); err == nil {
		return openGraphFiles([]string{single}, nil)
	}
	dir := filepath.Join(objectsDir, "info", "commit-graphs")
	chainData, err := readRegular(filepath.Join(dir, "commit-graph-chain"), maxSmallFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read commit-graph chain: %w", err)
	}
	chain, err := parseGraphChain(chainData)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(chain))
	for i, h := range chain {
		paths[i] = filepath.Join(dir, "graph-"+hex.EncodeToString(h[:])+".graph")
	}
	return openGraphFiles(paths, chain)
}

// parseGraphChain reads a commit-graph-chain file: one graph hash a line, the base first.
func parseGraphChain(data []byte) ([]plumbing.Hash, error) {
	var chain []plumbing.Hash
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if len(line) != 2*graphHashLen || !isHex(line) {
			return nil, fmt.Errorf("%w: chain line %q is not a graph hash", errBadGraph, line)
		}
		chain = append(chain, plumbing.NewHash(strings.ToLower(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: chain: %v", errBadGraph, err)
	}
	if len(chain) == 0 || len(chain) > 255 {
		return nil, fmt.Errorf("%w: chain of %d graphs", errBadGraph, len(chain))
	}
	return chain, nil
}

// openGraphFiles maps the layers at paths, base first; chain names them (nil for a single file).
func openGraphFiles(paths []string, chain []plumbing.Hash) (*commitGraph, error) {
	datas := make([][]byte, 0, len(paths))
	release := func() {
		for _, d := range datas {
			_ = unmap(d)
		}
	}
	for _, p := range paths {
		d, err := mmapFile(p)
		if err != nil {
			release()
			return nil, fmt.Errorf("%w: map %s: %w", errBadGraph, p, err)
		}
		datas = append(datas, d)
	}
	g, err := newCommitGraph(datas, chain)
	if err != nil {
		release()
		return nil, err
	}
	g.mapped = true
	return g, nil
}

// newCommitGraph parses layers (base first) over datas; chain, when not nil, is the hash of each
// layer as the chain file names it, which each layer's BASE chunk must repeat.
func newCommitGraph(datas [][]byte, chain []plumbing.Hash) (*commitGraph, error) {
	g := &commitGraph{genV2: true}
	for i, d := range datas {
		l, err := parseGraphLayer(d, i)
		if err != nil {
			return nil, err
		}
		for k := range i {
			if !bytes.Equal(l.bases[k*graphHashLen:(k+1)*graphHashLen], chain[k][:]) {
				return nil, fmt.Errorf("%w: layer %d names base %x, the chain %s", errBadGraph, i,
					l.bases[k*graphHashLen:(k+1)*graphHashLen], chain[k])
			}
		}
		if uint64(g.total)+uint64(l.n) >= graphMaxCommits {
			return nil, fmt.Errorf("%w: too many commits", errBadGraph)
		}
		l.first = g.total
		g.total += l.n
		g.genV2 = g.genV2 && l.gda2 != nil // git uses corrected dates only if every layer has them
		g.layers = append(g.layers, l)
	}
	return g, nil
}

// graphChunks reads the chunk table of a commit-graph file whose header says it has count chunks.
func graphChunks(data []byte, count int) (map[string][]byte, error) {
	const header, entry = 8, 12
	tocEnd := header + (count+1)*entry
	if len(data) < tocEnd+graphHashLen {
		return nil, fmt.Errorf("%w: %d bytes is too short for %d chunks", errBadGraph, len(data), count)
	}
	end := uint64(len(data) - graphHashLen) // the trailer's checksum follows the chunks
	chunks := map[string][]byte{}
	for i := range count {
		e := data[header+i*entry:]
		id := string(e[:4])
		start, next := binary.BigEndian.Uint64(e[4:12]), binary.BigEndian.Uint64(e[16:24])
		if id == "\x00\x00\x00\x00" || start < uint64(tocEnd) || next < start || next > end {
			return nil, fmt.Errorf("%w: chunk %q at %d..%d out of range", errBadGraph, id, start, next)
		}
		if _, dup := chunks[id]; dup {
			return nil, fmt.Errorf("%w: chunk %q twice", errBadGraph, id)
		}
		chunks[id] = data[start:next]
	}
	if last := data[header+count*entry:]; !bytes.Equal(last[:4], []byte{0, 0, 0, 0}) {
		return nil, fmt.Errorf("%w: chunk table not terminated", errBadGraph)
	}
	return chunks, nil
}

// parseGraphLayer checks the header and the chunks of layer number index of a chain (0 for a
// single file) and returns it, positions from 0.
func parseGraphLayer(data []byte, index int) (graphLayer, error) {
	if len(data) < 8 || string(data[:4]) != "CGPH" {
		return graphLayer{}, fmt.Errorf("%w: no CGPH signature", errBadGraph)
	}
	if data[4] != 1 || data[5] != 1 {
		return graphLayer{}, fmt.Errorf("%w: version %d, hash version %d (only 1 and 1, SHA-1, are read)",
			errBadGraph, data[4], data[5])
	}
	if int(data[7]) != index {
		return graphLayer{}, fmt.Errorf("%w: layer %d says it has %d base graphs", errBadGraph, index, data[7])
	}
	chunks, err := graphChunks(data, int(data[6]))
	if err != nil {
		return graphLayer{}, err
	}
	l := graphLayer{data: data, fanout: chunks["OIDF"], oids: chunks["OIDL"], cdat: chunks["CDAT"],
		edge: chunks["EDGE"], gda2: chunks["GDA2"], gdo2: chunks["GDO2"], bases: chunks["BASE"]}
	if len(l.fanout) != 256*4 {
		return graphLayer{}, fmt.Errorf("%w: OIDF of %d bytes", errBadGraph, len(l.fanout))
	}
	prev := uint32(0)
	for b := range 256 {
		c := binary.BigEndian.Uint32(l.fanout[4*b:])
		if c < prev {
			return graphLayer{}, fmt.Errorf("%w: OIDF decreases at %d", errBadGraph, b)
		}
		prev = c
	}
	l.n = prev
	n := uint64(l.n)
	switch {
	case n >= graphMaxCommits:
		return graphLayer{}, fmt.Errorf("%w: %d commits", errBadGraph, n)
	case uint64(len(l.oids)) != n*graphHashLen:
		return graphLayer{}, fmt.Errorf("%w: OIDL of %d bytes for %d commits", errBadGraph, len(l.oids), n)
	case uint64(len(l.cdat)) != n*graphCDATWidth:
		return graphLayer{}, fmt.Errorf("%w: CDAT of %d bytes for %d commits", errBadGraph, len(l.cdat), n)
	case l.gda2 != nil && uint64(len(l.gda2)) != n*4:
		return graphLayer{}, fmt.Errorf("%w: GDA2 of %d bytes for %d commits", errBadGraph, len(l.gda2), n)
	case len(l.edge)%4 != 0 || len(l.gdo2)%8 != 0:
		return graphLayer{}, fmt.Errorf("%w: EDGE or GDO2 of a partial entry", errBadGraph)
	case len(l.bases) != index*graphHashLen:
		return graphLayer{}, fmt.Errorf("%w: BASE of %d bytes for %d base graphs", errBadGraph, len(l.bases), index)
	}
	lo := uint32(0)
	for b := range 256 { // each fanout bucket holds exactly the hashes of its first byte
		hi := binary.BigEndian.Uint32(l.fanout[4*b:])
		if lo < hi && (l.oids[lo*graphHashLen] != byte(b) || l.oids[(hi-1)*graphHashLen] != byte(b)) {
			return graphLayer{}, fmt.Errorf("%w: OIDF bucket %02x does not match OIDL", errBadGraph, b)
		}
		lo = hi
	}
	if i, ok := oidsSorted(l.oids); !ok { // lookups binary-search OIDL: it must be strictly sorted
		return graphLayer{}, fmt.Errorf("%w: OIDL not sorted at %d", errBadGraph, i)
	}
	return l, nil
}

// oidsSorted reports whether the hashes of oids (graphHashLen bytes each) are strictly increasing,
// and if not, the position of the first one not above the one before. Nearly all neighbours in a
// sorted list differ in their first 8 bytes, so one integer comparison decides most pairs: this
// runs over all of OIDL (82,000 hashes on git/git) each time a graph is opened.
func oidsSorted(oids []byte) (int, bool) {
	if len(oids) < graphHashLen {
		return 0, true
	}
	prev := binary.BigEndian.Uint64(oids)
	for off := graphHashLen; off+graphHashLen <= len(oids); off += graphHashLen {
		cur := binary.BigEndian.Uint64(oids[off : off+8])
		if cur < prev || cur == prev && bytes.Compare(oids[off-graphHashLen+8:off], oids[off+8:off+graphHashLen]) >= 0 {
			return off / graphHashLen, false
		}
		prev = cur
	}
	return 0, true
}

// close unmaps the layers.
func (g *commitGraph) close() error {
	if g == nil || !g.mapped {
		return nil
	}
	var errs []error
	for _, l := range g.layers {
		errs = append(errs, unmap(l.data))
	}
	g.layers, g.mapped = nil, false
	return errors.Join(errs...)
}

// lookup returns the position of commit h, and whether the graph holds it.
func (g *commitGraph) lookup(h plumbing.Hash) (uint32, bool) {
	for i := range g.layers {
		l := &g.layers[i]
		lo := uint32(0)
		if h[0] > 0 {
			lo = binary.BigEndian.Uint32(l.fanout[4*(int(h[0])-1):])
		}
		hi := binary.BigEndian.Uint32(l.fanout[4*int(h[0]):])
		for lo < hi {
			mid := lo + (hi-lo)/2
			switch c := bytes.Compare(l.oids[mid*graphHashLen:(mid+1)*graphHashLen], h[:]); {
			case c == 0:
				return l.first + mid, true
			case c < 0:
				lo = mid + 1
			default:
				hi = mid
			}
		}
	}
	return 0, false
}

// layerOf returns the layer that holds position pos (< g.total).
func (g *commitGraph) layerOf(pos uint32) *graphLayer {
	for i := len(g.layers) - 1; i > 0; i-- {
		if pos >= g.layers[i].first {
			return &g.layers[i]
		}
	}
	return &g.layers[0]
}

// hashAt returns the commit at position pos (< g.total).
func (g *commitGraph) hashAt(pos uint32) plumbing.Hash {
	l := g.layerOf(pos)
	i := pos - l.first
	return plumbing.Hash(l.oids[i*graphHashLen : (i+1)*graphHashLen])
}

// generation returns the generation of the commit at pos (< g.total): its corrected commit date
// when every layer has them, else its topological level. A level of 0 (written by git before
// levels) or clamped at the maximum says nothing and counts as infinite (math.MaxUint64).
func (g *commitGraph) generation(pos uint32) (uint64, error) {
	l := g.layerOf(pos)
	i := pos - l.first
	e := l.cdat[i*graphCDATWidth+graphHashLen+8:]
	word := binary.BigEndian.Uint32(e)
	if !g.genV2 {
		level := uint64(word >> 2)
		if level == 0 || level == graphLevelMax {
			return math.MaxUint64, nil
		}
		return level, nil
	}
	date := uint64(word&3)<<32 | uint64(binary.BigEndian.Uint32(e[4:]))
	off := uint64(binary.BigEndian.Uint32(l.gda2[4*i:]))
	if off&graphHighBit != 0 {
		k := off &^ graphHighBit
		if k >= uint64(len(l.gdo2)/8) {
			return 0, fmt.Errorf("%w: GDO2 entry %d of %d", errBadGraph, k, len(l.gdo2)/8)
		}
		off = binary.BigEndian.Uint64(l.gdo2[8*k:])
	}
	if off > math.MaxUint64-1-date {
		return 0, fmt.Errorf("%w: corrected date overflows at position %d", errBadGraph, pos)
	}
	return date + off, nil
}

// appendParents appends the parents' positions of the commit at pos (< g.total) to dst. Each is
// below the end of pos's layer: a layer's parents are in it or in the layers below.
func (g *commitGraph) appendParents(dst []uint32, pos uint32) ([]uint32, error) {
	l := g.layerOf(pos)
	i := pos - l.first
	e := l.cdat[i*graphCDATWidth+graphHashLen:]
	limit := l.first + l.n
	p1, p2 := binary.BigEndian.Uint32(e), binary.BigEndian.Uint32(e[4:])
	if p1 == graphParentNone {
		if p2 != graphParentNone {
			return dst, fmt.Errorf("%w: second parent without a first at position %d", errBadGraph, pos)
		}
		return dst, nil
	}
	if p1 >= limit {
		return dst, fmt.Errorf("%w: parent %d of position %d out of range", errBadGraph, p1, pos)
	}
	dst = append(dst, p1)
	switch {
	case p2 == graphParentNone:
		return dst, nil
	case p2&graphHighBit == 0:
		if p2 >= limit {
			return dst, fmt.Errorf("%w: parent %d of position %d out of range", errBadGraph, p2, pos)
		}
		return append(dst, p2), nil
	}
	for k := int(p2 &^ graphHighBit); ; k++ {
		if k >= len(l.edge)/4 {
			return dst, fmt.Errorf("%w: EDGE entry %d of %d at position %d", errBadGraph, k, len(l.edge)/4, pos)
		}
		v := binary.BigEndian.Uint32(l.edge[4*k:])
		if p := v &^ graphHighBit; p < limit {
			dst = append(dst, p)
		} else {
			return dst, fmt.Errorf("%w: parent %d of position %d out of range", errBadGraph, p, pos)
		}
		if v&graphHighBit != 0 {
			return dst, nil
		}
	}
}
