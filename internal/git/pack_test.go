package git

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/stretchr/testify/require"
)

// testPack writes a pack and its version 2 index by hand, entry by entry, so that a test can
// make what git never writes: thin packs, REF_DELTA cycles, chains deeper than git allows,
// damaged entries.
type testPack struct {
	t       testing.TB
	buf     bytes.Buffer
	entries []testEntry
	// wide puts every offset in the 64-bit offset table, as git does for offsets past 2 GiB.
	wide bool
}

type testEntry struct {
	id  plumbing.Hash
	off int64
	crc uint32
}

func newTestPack(t testing.TB) *testPack {
	p := &testPack{t: t}
	p.buf.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x00") // the count is set by write
	return p
}

// entryHeader encodes an entry's type and size.
func entryHeader(typ plumbing.ObjectType, size int64) []byte {
	c := byte(typ)<<4 | byte(size&0x0f)
	size >>= 4
	var out []byte
	for size > 0 {
		out = append(out, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(out, c)
}

// ofsEncoding encodes a base offset rel bytes back, as git does.
func ofsEncoding(rel int64) []byte {
	out := []byte{byte(rel & 0x7f)}
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		out = append([]byte{0x80 | byte(rel&0x7f)}, out...)
	}
	return out
}

// zlibWriters keeps deflaters for reuse: one costs hundreds of kilobytes to make.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

func deflate(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(w)
	w.Reset(&b)
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// raw appends an entry of the given bytes, indexed under id, and returns its offset.
func (p *testPack) raw(id plumbing.Hash, entry []byte) int64 {
	off := int64(p.buf.Len())
	p.buf.Write(entry)
	p.entries = append(p.entries, testEntry{id: id, off: off, crc: crc32.ChecksumIEEE(entry)})
	return off
}

// object appends an undeltified object and returns its id and offset.
func (p *testPack) object(typ plumbing.ObjectType, content []byte) (plumbing.Hash, int64) {
	id := plumbing.ComputeHash(typ, content)
	return id, p.raw(id, slices.Concat(entryHeader(typ, int64(len(content))), deflate(p.t, content)))
}

// ofsDelta appends result of type typ as a delta against the entry at baseOff, whose content is
// base.
func (p *testPack) ofsDelta(typ plumbing.ObjectType, baseOff int64, base, result []byte) (plumbing.Hash, int64) {
	delta := packfile.DiffDelta(base, result)
	off := int64(p.buf.Len())
	id := plumbing.ComputeHash(typ, result)
	return id, p.raw(id, slices.Concat(entryHeader(plumbing.OFSDeltaObject, int64(len(delta))),
		ofsEncoding(off-baseOff), deflate(p.t, delta)))
}

// refDelta appends result of type typ as a delta against object baseID, whose content is base.
func (p *testPack) refDelta(typ plumbing.ObjectType, baseID plumbing.Hash, base, result []byte) (plumbing.Hash, int64) {
	delta := packfile.DiffDelta(base, result)
	id := plumbing.ComputeHash(typ, result)
	return id, p.raw(id, slices.Concat(entryHeader(plumbing.REFDeltaObject, int64(len(delta))), baseID[:],
		deflate(p.t, delta)))
}

// write finishes the pack into packDir, with its index, and returns its name (pack-<sha>).
func (p *testPack) write(packDir string) string {
	p.t.Helper()
	data := slices.Clone(p.buf.Bytes())
	binary.BigEndian.PutUint32(data[8:], uint32(len(p.entries)))
	sum := sha1.Sum(data)
	data = append(data, sum[:]...)
	name := "pack-" + hex.EncodeToString(sum[:])
	require.NoError(p.t, os.MkdirAll(packDir, 0o755))
	require.NoError(p.t, os.WriteFile(filepath.Join(packDir, name+".pack"), data, 0o444))
	require.NoError(p.t, os.WriteFile(filepath.Join(packDir, name+".idx"), p.index(sum[:]), 0o444))
	return name
}

// index encodes the version 2 index of the entries.
func (p *testPack) index(packSum []byte) []byte {
	entries := slices.Clone(p.entries)
	slices.SortFunc(entries, func(a, b testEntry) int { return bytes.Compare(a.id[:], b.id[:]) })
	var idx, off64 bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	for b := range 256 {
		n := 0
		for _, e := range entries {
			if int(e.id[0]) <= b {
				n++
			}
		}
		idx.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
	}
	for _, e := range entries {
		idx.Write(e.id[:])
	}
	for _, e := range entries {
		idx.Write(binary.BigEndian.AppendUint32(nil, e.crc))
	}
	for _, e := range entries {
		if p.wide || e.off >= 1<<31 {
			idx.Write(binary.BigEndian.AppendUint32(nil, 0x80000000|uint32(off64.Len()/8)))
			off64.Write(binary.BigEndian.AppendUint64(nil, uint64(e.off)))
		} else {
			idx.Write(binary.BigEndian.AppendUint32(nil, uint32(e.off)))
		}
	}
	idx.Write(off64.Bytes())
	idx.Write(packSum)
	sum := sha1.Sum(idx.Bytes())
	idx.Write(sum[:])
	return idx.Bytes()
}

// newGitDir makes the smallest git directory go-git opens, without the git CLI, and returns the
// working tree's path.
func newGitDir(t *testing.T) string {
	dir := t.TempDir()
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "config"),
		[]byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"), 0o644))
	return dir
}

// writeLoose stores content as a loose object of type typ and returns its id.
func writeLoose(t *testing.T, dir string, typ plumbing.ObjectType, content []byte) plumbing.Hash {
	id := plumbing.ComputeHash(typ, content)
	writeLooseRaw(t, dir, id, deflate(t, fmt.Appendf(nil, "%s %d\x00%s", typ, len(content), content)))
	return id
}

func writeLooseRaw(t *testing.T, dir string, id plumbing.Hash, file []byte) {
	hx := id.String()
	path := filepath.Join(dir, ".git", "objects", hx[:2], hx[2:])
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, file, 0o444))
}

// openStore opens the store of the repository at dir.
func openStore(t *testing.T, dir string) *lazyStore {
	t.Helper()
	repo, err := Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, repo.Close()) })
	return repo.store
}

// requireObject reads id through readObject and EncodedObject and checks the type, the content
// and that the content hashes to id.
func requireObject(t *testing.T, s *lazyStore, id plumbing.Hash, typ plumbing.ObjectType, content []byte) {
	t.Helper()
	gotTyp, got, err := s.readObject(id)
	require.NoError(t, err, "%s", id)
	require.Equal(t, typ, gotTyp, "%s", id)
	require.Equal(t, len(content), len(got), "%s", id)
	require.True(t, bytes.Equal(content, got), "content of %s", id)
	require.Equal(t, id, plumbing.ComputeHash(gotTyp, got), "%s", id)
	obj, err := s.EncodedObject(typ, id)
	require.NoError(t, err)
	require.Equal(t, int64(len(content)), obj.Size())
	require.Equal(t, id, obj.Hash())
}

// sampleText is n bytes of lines that differ from one another: text that deflates and deltifies
// as source code does.
func sampleText(n int, seed string) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: %x\n", seed, i, sha1.Sum([]byte(fmt.Sprint(seed, i))))
	}
	return b.Bytes()[:n]
}

// TestReadObjectFromCraftedPacks reads, through readObject and EncodedObject, every kind of entry
// a pack can hold: each object type, an empty blob, objects over 16 KB and over 1 MB, a 60-deep
// OFS_DELTA chain, REF_DELTA bases in the same pack, in another pack (a thin pack) and loose,
// chains that mix both, and a pack whose index keeps 64-bit offsets; then again with a cache too
// small to keep anything, and in reverse order.
func TestReadObjectFromCraftedPacks(t *testing.T) {
	t.Parallel()
	dir := newGitDir(t)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	type want struct {
		id      plumbing.Hash
		typ     plumbing.ObjectType
		content []byte
	}
	var all []want
	add := func(id plumbing.Hash, typ plumbing.ObjectType, content []byte) {
		all = append(all, want{id, typ, content})
	}

	other := newTestPack(t) // the thin pack's bases, its index with 64-bit offsets
	other.wide = true
	baseB := sampleText(3000, "other")
	idB, _ := other.object(plumbing.BlobObject, baseB)
	add(idB, plumbing.BlobObject, baseB)
	other.write(packDir)

	looseBase := sampleText(2000, "loose")
	idLoose := writeLoose(t, dir, plumbing.BlobObject, looseBase)
	add(idLoose, plumbing.BlobObject, looseBase)
	emptyTree := writeLoose(t, dir, plumbing.TreeObject, nil)
	add(emptyTree, plumbing.TreeObject, nil)

	p := newTestPack(t)
	for _, o := range []struct {
		typ     plumbing.ObjectType
		content []byte
	}{
		{plumbing.BlobObject, nil},
		{plumbing.BlobObject, []byte("x")},
		{plumbing.BlobObject, sampleText(20<<10, "medium")},
		{plumbing.BlobObject, sampleText(1<<20+12345, "large")},
		{plumbing.CommitObject, []byte("tree " + emptyTree.String() + "\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n")},
		{plumbing.TreeObject, []byte("100644 a\x00" + string(idB[:]))},
		{plumbing.TagObject, []byte("object " + idB.String() + "\ntype blob\ntag t\n\nt\n")},
	} {
		id, _ := p.object(o.typ, o.content)
		add(id, o.typ, o.content)
	}
	// a 60-deep OFS chain over a 20 KB text, each version a few lines longer than the last
	prev := sampleText(20<<10, "chain")
	_, prevOff := p.object(plumbing.BlobObject, prev)
	add(plumbing.ComputeHash(plumbing.BlobObject, prev), plumbing.BlobObject, prev)
	for i := range 60 {
		next := slices.Concat(prev[:len(prev)/2], fmt.Appendf(nil, "version %d\n", i), prev[len(prev)/2:])
		id, off := p.ofsDelta(plumbing.BlobObject, prevOff, prev, next)
		add(id, plumbing.BlobObject, next)
		prev, prevOff = next, off
	}
	// REF deltas: against an object of this pack, of the other pack, and a loose one; then an
	// OFS delta whose base is the REF delta into the other pack.
	sameBase := sampleText(5000, "same")
	idSame, _ := p.object(plumbing.BlobObject, sameBase)
	add(idSame, plumbing.BlobObject, sameBase)
	for _, b := range []struct {
		id   plumbing.Hash
		base []byte
	}{{idSame, sameBase}, {idB, baseB}, {idLoose, looseBase}} {
		result := append(slices.Clone(b.base), "and one more line\n"...)
		id, off := p.refDelta(plumbing.BlobObject, b.id, b.base, result)
		add(id, plumbing.BlobObject, result)
		result2 := append(slices.Clone(result), "and another\n"...)
		id2, _ := p.ofsDelta(plumbing.BlobObject, off, result, result2)
		add(id2, plumbing.BlobObject, result2)
	}
	p.write(packDir)

	s := openStore(t, dir)
	require.Len(t, s.packs, 2)
	for range 2 { // the second time, from the cache
		for _, w := range all {
			requireObject(t, s, w.id, w.typ, w.content)
		}
	}
	s.objects = newObjectCache(0)
	for _, w := range slices.Backward(all) {
		requireObject(t, s, w.id, w.typ, w.content)
	}
	require.Zero(t, s.objects.used, "a cache of 0 bytes keeps nothing")
}
