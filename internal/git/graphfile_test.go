package git

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCommit is one commit of a hand-made commit-graph, at the position of its index.
type testCommit struct {
	parents []uint32
	level   uint32 // topological level
	date    uint64 // 34 bits
	offset  uint64 // corrected date - date (GDA2, or GDO2 above 31 bits)
}

// testHash is the hash of the commit at position i of a hand-made graph: ascending with i.
func testHash(i int) plumbing.Hash {
	var h plumbing.Hash
	h[0], h[1], h[19] = byte(i>>8), byte(i), 0x5a
	return h
}

// buildGraph writes a commit-graph file (single layer, SHA-1) of commits; v2 adds GDA2 (and GDO2
// when an offset needs it). The trailer's checksum is zeros: it is not read.
func buildGraph(commits []testCommit, v2 bool) []byte {
	be32 := func(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
	var oidf, oidl, cdat, edge, gda2, gdo2 []byte
	counts := [256]uint32{}
	for i, c := range commits {
		h := testHash(i)
		counts[h[0]]++
		oidl = append(oidl, h[:]...)
		cdat = append(cdat, make([]byte, 20)...) // root tree: unused
		p1, p2 := uint32(graphParentNone), uint32(graphParentNone)
		switch len(c.parents) {
		case 0:
		case 1:
			p1 = c.parents[0]
		case 2:
			p1, p2 = c.parents[0], c.parents[1]
		default:
			p1, p2 = c.parents[0], graphHighBit|uint32(len(edge)/4)
			for k, p := range c.parents[1:] {
				if k == len(c.parents)-2 {
					p |= graphHighBit
				}
				edge = be32(edge, p)
			}
		}
		cdat = be32(be32(cdat, p1), p2)
		cdat = be32(be32(cdat, c.level<<2|uint32(c.date>>32)&3), uint32(c.date))
		if c.offset >= graphHighBit {
			gda2 = be32(gda2, graphHighBit|uint32(len(gdo2)/8))
			gdo2 = binary.BigEndian.AppendUint64(gdo2, c.offset)
		} else {
			gda2 = be32(gda2, uint32(c.offset))
		}
	}
	sum := uint32(0)
	for _, n := range counts {
		sum += n
		oidf = be32(oidf, sum)
	}
	type chunk struct {
		id   string
		data []byte
	}
	chunks := []chunk{{"OIDF", oidf}, {"OIDL", oidl}, {"CDAT", cdat}}
	if len(edge) > 0 {
		chunks = append(chunks, chunk{"EDGE", edge})
	}
	if v2 {
		chunks = append(chunks, chunk{"GDA2", gda2})
		if len(gdo2) > 0 {
			chunks = append(chunks, chunk{"GDO2", gdo2})
		}
	}
	out := []byte{'C', 'G', 'P', 'H', 1, 1, byte(len(chunks)), 0}
	off := uint64(len(out) + (len(chunks)+1)*12)
	for _, c := range chunks {
		out = append(out, c.id...)
		out = binary.BigEndian.AppendUint64(out, off)
		off += uint64(len(c.data))
	}
	out = binary.BigEndian.AppendUint64(append(out, 0, 0, 0, 0), off)
	for _, c := range chunks {
		out = append(out, c.data...)
	}
	return append(out, make([]byte, graphHashLen)...)
}

// sampleCommits is a small history: two roots (0, 1), a chain, a merge, an octopus merge (5), a
// commit whose corrected date offset overflows 31 bits (6) and a third root that nothing reaches (7).
func sampleCommits() []testCommit {
	return []testCommit{
		{nil, 1, 100, 0},
		{nil, 1, 50, 0},
		{[]uint32{0}, 2, 200, 0},
		{[]uint32{2, 1}, 3, 150, 51},
		{[]uint32{0}, 2, 90, 11},
		{[]uint32{3, 4, 1, 2}, 4, 300, 0},
		{[]uint32{5}, 5, 10, 1 << 33},
		{nil, 1, 1, 0},
	}
}

func TestCommitGraphParse(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		g, err := newCommitGraph([][]byte{buildGraph(sampleCommits(), v2)}, nil)
		require.NoError(t, err)
		require.Equal(t, uint32(8), g.total)
		assert.Equal(t, v2, g.genV2)
		for i, c := range sampleCommits() {
			pos, ok := g.lookup(testHash(i))
			require.True(t, ok)
			assert.Equal(t, uint32(i), pos)
			assert.Equal(t, testHash(i), g.hashAt(pos))
			ps, err := g.appendParents(nil, pos)
			require.NoError(t, err)
			assert.Equal(t, c.parents, ps, "parents of %d", i)
			gen, err := g.generation(pos)
			require.NoError(t, err)
			want := uint64(c.level)
			if v2 {
				want = c.date + c.offset
			}
			assert.Equal(t, want, gen, "generation of %d", i)
		}
		_, ok := g.lookup(testHash(8))
		assert.False(t, ok, "a commit outside the graph")
		var r *Repo // the walk needs no object store when head is in the graph (the confirmation does)
		for _, tc := range []struct {
			base, head int
			want       bool
		}{{1, 5, true}, {4, 6, true}, {0, 3, true}, {4, 3, false}, {1, 0, false}, {6, 5, false}, {2, 4, false}, {7, 6, false}} {
			got, _, err := r.graphPath(g, testHash(tc.base), testHash(tc.head))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "%d reaches %d (v2 %v)", tc.head, tc.base, v2)
		}
		got, _, err := r.graphPath(g, testHash(9), testHash(6))
		require.NoError(t, err)
		assert.False(t, got, "no commit of a graph reaches a commit outside it")
	}
}

// chunkAt returns the offset of chunk id in a commit-graph file.
func chunkAt(t *testing.T, data []byte, id string) int {
	t.Helper()
	for i := 0; i < int(data[6]); i++ {
		e := data[8+12*i:]
		if string(e[:4]) == id {
			return int(binary.BigEndian.Uint64(e[4:]))
		}
	}
	t.Fatalf("no chunk %s", id)
	return 0
}

func TestCommitGraphMalformedIsRefused(t *testing.T) {
	good := buildGraph(sampleCommits(), true)
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, b []byte) []byte
	}{
		{"signature", func(_ *testing.T, b []byte) []byte { b[0] = 'X'; return b }},
		{"version 2", func(_ *testing.T, b []byte) []byte { b[4] = 2; return b }},
		{"SHA-256", func(_ *testing.T, b []byte) []byte { b[5] = 2; return b }},
		{"base graphs in a single file", func(_ *testing.T, b []byte) []byte { b[7] = 1; return b }},
		{"empty", func(_ *testing.T, _ []byte) []byte { return nil }},
		{"header only", func(_ *testing.T, b []byte) []byte { return b[:8] }},
		{"truncated in the chunks", func(_ *testing.T, b []byte) []byte { return b[:len(b)-40] }},
		{"more chunks than the table", func(_ *testing.T, b []byte) []byte { b[6] = 200; return b }},
		{"chunk offset past the end", func(_ *testing.T, b []byte) []byte {
			binary.BigEndian.PutUint64(b[8+4:], 1<<40)
			return b
		}},
		{"chunk offset inside the table", func(_ *testing.T, b []byte) []byte {
			binary.BigEndian.PutUint64(b[8+4:], 9)
			return b
		}},
		{"table not terminated", func(_ *testing.T, b []byte) []byte { copy(b[8+12*int(b[6]):], "ZZZZ"); return b }},
		{"duplicate chunk", func(_ *testing.T, b []byte) []byte { copy(b[8+12:], "OIDF"); return b }},
		{"chunk id zero inside", func(_ *testing.T, b []byte) []byte { copy(b[8+12:], "\x00\x00\x00\x00"); return b }},
		{"missing CDAT", func(_ *testing.T, b []byte) []byte { copy(b[8+24:], "CDAX"); return b }},
		{"fanout decreasing", func(t *testing.T, b []byte) []byte {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "OIDF")+4*10:], 99)
			return b
		}},
		{"fanout above the OIDL", func(t *testing.T, b []byte) []byte {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "OIDF")+4*255:], 9)
			return b
		}},
		{"fanout bucket not the hashes' first byte", func(t *testing.T, b []byte) []byte {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "OIDF")+4*0:], 7) // the 8th hash starts with 00 too
			return b
		}},
		{"OIDL unsorted", func(t *testing.T, b []byte) []byte {
			o := chunkAt(t, b, "OIDL")
			b[o+20+1] = 0 // commit 1's hash below commit 0's
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCommitGraph([][]byte{tc.edit(t, bytes.Clone(good))}, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, errBadGraph)
		})
	}
}

// TestCommitGraphInconsistentIsRefusedInTheWalk corrupts what only the walk reads: the walk stops
// with errBadGraph (the caller then walks the objects), never a wrong answer or a panic.
func TestCommitGraphInconsistentIsRefusedInTheWalk(t *testing.T) {
	good := buildGraph(sampleCommits(), true)
	cdatParents := func(t *testing.T, b []byte, pos int) []byte {
		return b[chunkAt(t, b, "CDAT")+pos*graphCDATWidth+graphHashLen:]
	}
	for _, tc := range []struct {
		name string
		v2   bool
		edit func(t *testing.T, b []byte)
	}{
		{"parent position out of range", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 6), 8)
		}},
		{"second parent out of range", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 3)[4:], 1000)
		}},
		{"second parent without a first", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 6), graphParentNone)
			binary.BigEndian.PutUint32(cdatParents(t, b, 6)[4:], 5)
		}},
		{"EDGE index out of range", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 5)[4:], graphHighBit|50)
		}},
		{"EDGE list not terminated", true, func(t *testing.T, b []byte) {
			o := chunkAt(t, b, "EDGE")
			binary.BigEndian.PutUint32(b[o+8:], 2) // the last of 3 entries loses its end bit
		}},
		{"EDGE parent out of range", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "EDGE"):], 4000)
		}},
		{"GDO2 index out of range", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "GDA2")+4*5:], graphHighBit|3)
		}},
		{"a parent of a higher level", false, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 3)[8:], 9<<2) // 3, a parent of 5 (level 4), at 9
		}},
		{"a commit its own parent", false, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(cdatParents(t, b, 5), 5)
		}},
		{"a corrected date not above a parent's", true, func(t *testing.T, b []byte) {
			binary.BigEndian.PutUint32(b[chunkAt(t, b, "GDA2")+4*4:], 1000) // 4 (parent of 5) above 5
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := buildGraph(sampleCommits(), tc.v2)
			if tc.v2 {
				b = bytes.Clone(good)
			}
			tc.edit(t, b)
			g, err := newCommitGraph([][]byte{b}, nil)
			require.NoError(t, err, "only the walk sees it")
			var r *Repo
			// 7 is reached by nothing: the walk reads every commit above level 1.
			_, _, err = r.graphPath(g, testHash(7), testHash(6))
			require.Error(t, err)
			assert.ErrorIs(t, err, errBadGraph)
		})
	}
}

// TestCommitGraphBadFilesFallBack damages real commit-graph files on disk: IsAncestor answers
// every pair as the history says, through the object walk, and says why the graph is not used.
func TestCommitGraphBadFilesFallBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		split bool
		edit  func(t *testing.T, info string)
	}{
		{"bad signature", false, func(t *testing.T, info string) {
			patchFile(t, filepath.Join(info, "commit-graph"), func(b []byte) { b[0] = 'X' })
		}},
		{"SHA-256 hash version", false, func(t *testing.T, info string) {
			patchFile(t, filepath.Join(info, "commit-graph"), func(b []byte) { b[5] = 2 })
		}},
		{"parent position out of range", false, func(t *testing.T, info string) {
			patchFile(t, filepath.Join(info, "commit-graph"), func(b []byte) {
				for i := range int(binary.BigEndian.Uint32(b[chunkAt(t, b, "OIDF")+4*255:])) {
					e := b[chunkAt(t, b, "CDAT")+i*graphCDATWidth+graphHashLen:]
					if binary.BigEndian.Uint32(e) != graphParentNone {
						binary.BigEndian.PutUint32(e, 0x6fffffff)
					}
				}
			})
		}},
		{"chain names a missing graph", true, func(t *testing.T, info string) {
			chain := filepath.Join(info, "commit-graphs", "commit-graph-chain")
			data, err := os.ReadFile(chain)
			require.NoError(t, err)
			first := strings.Fields(string(data))[0]
			require.NoError(t, os.Remove(filepath.Join(info, "commit-graphs", "graph-"+first+".graph")))
		}},
		{"chain is not hashes", true, func(t *testing.T, info string) {
			require.NoError(t, os.WriteFile(filepath.Join(info, "commit-graphs", "commit-graph-chain"), []byte("../../x\n"), 0o644))
		}},
		{"chain in the wrong order", true, func(t *testing.T, info string) {
			chain := filepath.Join(info, "commit-graphs", "commit-graph-chain")
			data, err := os.ReadFile(chain)
			require.NoError(t, err)
			f := strings.Fields(string(data))
			require.Len(t, f, 2)
			require.NoError(t, os.WriteFile(chain, []byte(f[1]+"\n"+f[0]+"\n"), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &growingHistory{r: newGitRepo(t), rng: rand.New(rand.NewPCG(9, 9))}
			h.grow(t, 30)
			if tc.split {
				h.r.git("commit-graph", "write", "--reachable", "--split", "--no-progress")
			}
			h.grow(t, 30)
			h.r.git("commit-graph", "write", "--reachable", "--split=no-merge", "--no-progress")
			if !tc.split {
				h.r.git("commit-graph", "write", "--reachable", "--no-progress")
			}
			tc.edit(t, filepath.Join(h.r.dir, ".git", "objects", "info"))
			repo := h.r.open()
			for head := range h.sha {
				for base := range h.sha {
					got, err := repo.IsAncestor(h.sha[base], h.sha[head])
					require.NoError(t, err)
					require.Equal(t, h.reach[head][base], got, "IsAncestor(c%d, c%d)", base, head)
				}
			}
			require.Error(t, repo.graphErr, "the graph is not used")
			assert.Nil(t, repo.graph)
		})
	}
}

// patchFile rewrites a file that git wrote read-only.
func patchFile(t *testing.T, path string, edit func([]byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edit(data)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// FuzzCommitGraph parses any bytes as a commit-graph file: no panic; when it parses, every
// position's lookup, parents and generation are read without one, and wherever the walk answers,
// it equals a plain unpruned walk over edges whose generations are consistent.
func FuzzCommitGraph(f *testing.F) {
	f.Add(buildGraph(sampleCommits(), true))
	f.Add(buildGraph(sampleCommits(), false))
	f.Add(buildGraph(nil, true))
	if real := realGraph(f); real != nil {
		f.Add(real)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := newCommitGraph([][]byte{data}, nil)
		if err != nil {
			require.ErrorIs(t, err, errBadGraph)
			return
		}
		n := min(g.total, 300)
		for pos := range n {
			got, ok := g.lookup(g.hashAt(pos))
			require.True(t, ok)
			require.Equal(t, pos, got)
			_, _ = g.appendParents(nil, pos)
			_, _ = g.generation(pos)
		}
		if n == 0 {
			return
		}
		var r *Repo
		for _, pair := range [][2]uint32{{0, n - 1}, {n - 1, 0}, {n / 2, n - 1}} {
			got, _, err := r.graphPath(g, g.hashAt(pair[0]), g.hashAt(pair[1]))
			want, consistent := plainReach(g, pair[0], pair[1])
			if err != nil {
				require.ErrorIs(t, err, errBadGraph)
				continue
			}
			if consistent && pair[0] != pair[1] {
				require.Equal(t, want, got, "%d reaches %d", pair[1], pair[0])
			}
		}
	})
}

// plainReach walks every commit reachable from head, unpruned; consistent is false when any edge
// on the way is unreadable or has a parent whose generation is not below its child's.
func plainReach(g *commitGraph, base, head uint32) (found, consistent bool) {
	seen := map[uint32]bool{head: true}
	stack := []uint32{head}
	consistent = true
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cg, err := g.generation(c)
		ps, err2 := g.appendParents(nil, c)
		if err != nil || err2 != nil {
			return found, false
		}
		for _, p := range ps {
			pg, err := g.generation(p)
			if err != nil || (pg != math.MaxUint64 && cg != math.MaxUint64 && pg >= cg) {
				consistent = false
			}
			if p == base {
				found = true
			}
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return found, consistent
}

// realGraph is a commit-graph written by git over a small generated history (merges, an
// octopus merge, two roots); nil without git.
func realGraph(f *testing.F) []byte {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	dir := f.TempDir()
	stream := "commit refs/heads/a\nmark :1\ncommitter F <f@example.com> 1700000000 +0000\ndata 2\nc1\n" +
		"commit refs/heads/b\nmark :2\ncommitter F <f@example.com> 1700000100 +0000\ndata 2\nc2\n" +
		"commit refs/heads/c\nmark :3\ncommitter F <f@example.com> 1600000000 +0000\ndata 2\nc3\nfrom :1\n" +
		"commit refs/heads/d\nmark :4\ncommitter F <f@example.com> 1700000300 +0000\ndata 2\nc4\nfrom :3\nmerge :2\nmerge :1\n" +
		"commit refs/heads/e\nmark :5\ncommitter F <f@example.com> 1700000400 +0000\ndata 2\nc5\nfrom :4\nmerge :2\n"
	for _, args := range [][]string{{"init", "-q"}, {"fast-import", "--quiet"}, {"commit-graph", "write", "--reachable", "--no-progress"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if args[0] == "fast-import" {
			cmd.Stdin = strings.NewReader(stream)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			f.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, ".git", "objects", "info", "commit-graph"))
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// TestOIDsSorted checks the sort check of OIDL on the pairs its integer comparison of the first 8
// bytes could get wrong: equal prefixes that differ only further on, in either order, or not at
// all.
func TestOIDsSorted(t *testing.T) {
	h := func(first8 uint64, last byte) []byte {
		b := make([]byte, graphHashLen)
		binary.BigEndian.PutUint64(b, first8)
		b[graphHashLen-1] = last
		return b
	}
	for _, tc := range []struct {
		name string
		oids [][]byte
		at   int // position of the first hash out of order; 0 when sorted
	}{
		{"empty", nil, 0},
		{"one", [][]byte{h(5, 0)}, 0},
		{"prefixes increase", [][]byte{h(1, 9), h(2, 0), h(1<<63, 0)}, 0},
		{"equal prefixes, last byte increases", [][]byte{h(1, 1), h(1, 2), h(2, 0)}, 0},
		{"prefix decreases", [][]byte{h(1, 0), h(3, 0), h(2, 9)}, 2},
		{"prefix decreases in its high byte", [][]byte{h(1<<56, 0), h(1, 0)}, 1},
		{"equal prefixes, last byte decreases", [][]byte{h(1, 0), h(4, 2), h(4, 1)}, 2},
		{"duplicate", [][]byte{h(1, 0), h(4, 2), h(4, 2)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok := oidsSorted(bytes.Join(tc.oids, nil))
			assert.Equal(t, tc.at == 0, ok)
			assert.Equal(t, tc.at, at)
		})
	}
}
