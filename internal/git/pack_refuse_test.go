package git

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeID is an object id for an entry whose content does not matter.
func fakeID(n int) plumbing.Hash { return plumbing.NewHash(fmt.Sprintf("%040x", 0xf00000+n)) }

// rawDelta encodes a delta by hand: the two sizes, then the instructions.
func rawDelta(src, dst int, ops ...byte) []byte {
	var b []byte
	for _, v := range []int{src, dst} {
		for ; v >= 0x80; v >>= 7 {
			b = append(b, byte(v)|0x80)
		}
		b = append(b, byte(v))
	}
	return append(b, ops...)
}

// TestReadObjectRefusesDamage reads entries of a hand-made pack that are each damaged in one way
// and requires an error that says what is wrong, never a panic or a wrong object.
func TestReadObjectRefusesDamage(t *testing.T) {
	t.Parallel()
	dir := newGitDir(t)
	p := newTestPack(t)
	base := []byte("the base object\n")
	baseID, baseOff := p.object(plumbing.BlobObject, base)
	abc := deflate(t, []byte("abc"))
	corruptSum := slices.Clone(abc)
	corruptSum[len(corruptSum)-1] ^= 0xff
	large := deflate(t, sampleText(2000, "large")) // several blocks' worth of the inflater's fast path
	corruptLarge := slices.Clone(large)
	corruptLarge[len(corruptLarge)-1] ^= 0xff
	refTo := func(id plumbing.Hash, delta []byte) []byte {
		return slices.Concat(entryHeader(plumbing.REFDeltaObject, int64(len(delta))), id[:], deflate(t, delta))
	}
	cases := []struct {
		name, want string
		entry      []byte
	}{
		{"type 5", "unknown object type 5", slices.Concat(entryHeader(5, 3), abc)},
		{"type 0", "unknown object type 0", slices.Concat(entryHeader(0, 3), abc)},
		{"size over the limit", "size over 1073741824 bytes", slices.Concat(entryHeader(plumbing.BlobObject, maxObjectSize+1), abc)},
		{"size bits past 63", "size over 1073741824 bytes", slices.Concat([]byte{0xb0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08}, abc)},
		{"size field too long", "size field longer", slices.Concat([]byte{0xb0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, abc)},
		{"size larger than the data", "3 bytes, the header says 100", slices.Concat(entryHeader(plumbing.BlobObject, 100), abc)},
		{"size smaller than the data", "more than the 2 bytes", slices.Concat(entryHeader(plumbing.BlobObject, 2), abc)},
		{"size no stream can hold", "is more than", slices.Concat(entryHeader(plumbing.BlobObject, 1<<29), abc)},
		{"not zlib", "inflate: zlib: invalid header", slices.Concat(entryHeader(plumbing.BlobObject, 3), []byte("garbage!"))},
		{"bad zlib checksum", "inflate: zlib: invalid checksum", slices.Concat(entryHeader(plumbing.BlobObject, 3), corruptSum)},
		{"cut deflate stream", "inflate", slices.Concat(entryHeader(plumbing.BlobObject, 3), abc[:4])},
		{"bad checksum, large", "inflate: zlib: invalid checksum", slices.Concat(entryHeader(plumbing.BlobObject, 2000), corruptLarge)},
		{"size larger than the data, large", "2000 bytes, the header says 3000", slices.Concat(entryHeader(plumbing.BlobObject, 3000), large)},
		{"size smaller than the data, large", "more than the 1500 bytes", slices.Concat(entryHeader(plumbing.BlobObject, 1500), large)},
		{"OFS base 0 bytes back", "is not an entry before it", slices.Concat(entryHeader(plumbing.OFSDeltaObject, 3), []byte{0}, abc)},
		{"OFS base before the first entry", "is not an entry before it", slices.Concat(entryHeader(plumbing.OFSDeltaObject, 3), ofsEncoding(1<<20), abc)},
		{"OFS base offset too long", "base offset too large", slices.Concat(entryHeader(plumbing.OFSDeltaObject, 3), bytes.Repeat([]byte{0xff}, 12), []byte{1}, abc)},
		{"REF base missing", "object not found", refTo(fakeID(999), rawDelta(1, 1, 1, 'x'))},
		{"delta for another base size", "delta is for a base of 99 bytes, the base has 16", refTo(baseID, rawDelta(99, 1, 1, 'x'))},
		{"delta copy past the base", "delta copies bytes [10, 30) of a 16-byte base", refTo(baseID, rawDelta(16, 20, 0x91, 10, 20))},
		{"delta result too long", "delta result longer than its declared 2 bytes", refTo(baseID, rawDelta(16, 2, 3, 'a', 'b', 'c'))},
		{"delta result too short", "delta result is 1 bytes, it declares 2", refTo(baseID, rawDelta(16, 2, 1, 'a'))},
		{"delta opcode 0", "reserved delta opcode 0", refTo(baseID, rawDelta(16, 1, 0))},
		{"delta insert cut", "truncated delta insert", refTo(baseID, rawDelta(16, 5, 5, 'a'))},
		{"delta copy cut", "truncated delta copy", refTo(baseID, rawDelta(16, 5, 0x91, 1))},
		{"delta header cut", "truncated delta header", refTo(baseID, []byte{0x90})},
	}
	ids := make([]plumbing.Hash, len(cases))
	for i, c := range cases {
		ids[i] = fakeID(i)
		p.raw(ids[i], c.entry)
	}
	// an OFS delta into the middle of the base entry, which parses as garbage
	midID := fakeID(100)
	midOff := int64(p.buf.Len())
	p.raw(midID, slices.Concat(entryHeader(plumbing.OFSDeltaObject, 3), ofsEncoding(midOff-baseOff-1), abc))
	// REF cycles: an entry based on itself, and two based on each other
	selfID, aID, bID := fakeID(200), fakeID(201), fakeID(202)
	p.raw(selfID, refTo(selfID, rawDelta(1, 1, 1, 'x')))
	p.raw(aID, refTo(bID, rawDelta(1, 1, 1, 'x')))
	p.raw(bID, refTo(aID, rawDelta(1, 1, 1, 'x')))
	// an index entry pointing past the end of the pack, and one whose header is cut by the end
	pastID, cutID := fakeID(300), fakeID(301)
	p.entries = append(p.entries, testEntry{id: pastID, off: 1 << 30})
	p.raw(cutID, []byte{0xb5})
	p.write(filepath.Join(dir, ".git", "objects", "pack"))

	s := openStore(t, dir)
	requireObject(t, s, baseID, plumbing.BlobObject, base)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.readObject(ids[i])
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), ids[i].String(), "the error names the object")
			_, err = s.EncodedObject(plumbing.AnyObject, ids[i])
			assert.Error(t, err)
		})
	}
	for _, c := range []struct {
		name, want string
		id         plumbing.Hash
	}{
		{"OFS base mid-entry", "entry at offset", midID},
		{"REF delta on itself", "delta cycle", selfID},
		{"REF deltas on each other", "delta cycle", aID},
		{"offset past the end", "outside the pack's entries", pastID},
		{"header cut by the end of the pack", "truncated header", cutID},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.readObject(c.id)
			assert.ErrorContains(t, err, c.want)
		})
	}
	// the damaged reads left nothing behind: the good object still reads
	requireObject(t, s, baseID, plumbing.BlobObject, base)
}

// TestReadObjectDeltaChainDepth allows a chain of 10,000 deltas and refuses one of 10,001
// before inflating any of it.
func TestReadObjectDeltaChainDepth(t *testing.T) {
	t.Parallel()
	dir := newGitDir(t)
	p := newTestPack(t)
	content := []byte("x")
	_, off := p.object(plumbing.BlobObject, content)
	var ids []plumbing.Hash
	for range maxDeltaDepth + 1 {
		// copy the whole base (offset 0, size up to 16 bits), then insert one byte
		delta := rawDelta(len(content), len(content)+1, 0x90|0x20, byte(len(content)), byte(len(content)>>8), 1, 'y')
		content = append(content, 'y')
		id := plumbing.ComputeHash(plumbing.BlobObject, content)
		entryOff := int64(p.buf.Len())
		p.raw(id, slices.Concat(entryHeader(plumbing.OFSDeltaObject, int64(len(delta))), ofsEncoding(entryOff-off), deflate(t, delta)))
		off = entryOff
		ids = append(ids, id)
	}
	p.write(filepath.Join(dir, ".git", "objects", "pack"))
	s := openStore(t, dir)
	_, _, err := s.readObject(ids[maxDeltaDepth])
	require.ErrorContains(t, err, "delta chain deeper than 10000")
	assert.Zero(t, s.objects.used, "nothing was inflated")
	requireObject(t, s, ids[maxDeltaDepth-1], plumbing.BlobObject, content[:len(content)-1])
}

// TestReadObjectRefusesDamagedLooseObjects reads loose objects damaged in one way each.
func TestReadObjectRefusesDamagedLooseObjects(t *testing.T) {
	t.Parallel()
	dir := newGitDir(t)
	cases := []struct {
		name, want string
		file       []byte
	}{
		{"not zlib", "zlib: invalid header", []byte("plain text")},
		{"no NUL in the header", "header longer than 32 bytes", deflate(t, bytes.Repeat([]byte("a"), 64))},
		{"unknown type", "malformed header", deflate(t, []byte("ofs-delta 3\x00abc"))},
		{"no size", "malformed header", deflate(t, []byte("blob\x00abc"))},
		{"negative size", "malformed size", deflate(t, []byte("blob -3\x00abc"))},
		{"size with a leading zero", "malformed size", deflate(t, []byte("blob 03\x00abc"))},
		{"size larger than the content", "3 bytes, the header says 4", deflate(t, []byte("blob 4\x00abc"))},
		{"size smaller than the content", "more than the 2 bytes", deflate(t, []byte("blob 2\x00abc"))},
		{"size over the limit", "is more than", deflate(t, []byte("blob 1073741825\x00abc"))},
		{"header cut", "header", deflate(t, []byte("blob 3"))},
	}
	for i, c := range cases {
		writeLooseRaw(t, dir, fakeID(i), c.file)
	}
	good := writeLoose(t, dir, plumbing.BlobObject, []byte("abc"))
	s := openStore(t, dir)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.readObject(fakeID(i))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), fakeID(i).String())
		})
	}
	requireObject(t, s, good, plumbing.BlobObject, []byte("abc"))
}
