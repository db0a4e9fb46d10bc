package git

import (
	"bytes"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// fuzzBase is the object at offset 12 of the packs FuzzPackEntry makes, indexed so that a
// REF_DELTA can name it.
var fuzzBase = []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1700000000 +0000\n\nthe base\n")

// FuzzPackEntry parses and reads an entry placed after one good object in a pack: never a panic
// or an allocation beyond the bounds; an entry that reads, reads the same twice; the header-only
// commit reader agrees with the whole read whenever it answers.
func FuzzPackEntry(f *testing.F) {
	seed := newTestPack(f)
	_, baseOff := seed.object(plumbing.CommitObject, fuzzBase)
	baseID := plumbing.ComputeHash(plumbing.CommitObject, fuzzBase)
	prefix := slices.Clone(seed.buf.Bytes())
	idx := seed.index(make([]byte, 20))
	entryOff := int64(len(prefix))
	noObjects := f.TempDir() // no loose objects: a REF_DELTA on anything but the base finds none

	f.Add(slices.Concat(entryHeader(plumbing.BlobObject, 5), deflate(f, []byte("hello"))))
	f.Add(slices.Concat(entryHeader(plumbing.BlobObject, 0), deflate(f, nil)))
	f.Add(slices.Concat(entryHeader(plumbing.CommitObject, int64(len(fuzzBase))), deflate(f, fuzzBase)))
	long := slices.Concat(fuzzBase[:46], bytes.Repeat([]byte("parent 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"), 20), fuzzBase[46:])
	f.Add(slices.Concat(entryHeader(plumbing.CommitObject, int64(len(long))), deflate(f, long)))
	delta := packfile.DiffDelta(fuzzBase, append(slices.Clone(fuzzBase), "more\n"...))
	f.Add(slices.Concat(entryHeader(plumbing.OFSDeltaObject, int64(len(delta))), ofsEncoding(entryOff-baseOff), deflate(f, delta)))
	f.Add(slices.Concat(entryHeader(plumbing.REFDeltaObject, int64(len(delta))), baseID[:], deflate(f, delta)))
	f.Add(slices.Concat(entryHeader(plumbing.BlobObject, 1<<28), deflate(f, []byte("x"))))
	f.Add([]byte{0xb5})
	f.Add([]byte{0xb0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x78, 0x9c})
	f.Add(slices.Concat(entryHeader(plumbing.OFSDeltaObject, 3), []byte{0xff, 0xff, 0xff, 0x7f}))

	f.Fuzz(func(t *testing.T, entry []byte) {
		pack := slices.Concat(prefix, entry, make([]byte, packTrailerLen))
		p := &packIndex{name: "pack-" + string(bytes.Repeat([]byte("00"), 20)), idx: idx, pack: pack}
		if err := p.parse(); err != nil {
			t.Fatal(err)
		}
		s := &lazyStore{packs: []*packIndex{p}, objects: newObjectCache(1 << 20), objectsDir: noObjects}
		e, err := parsePackEntry(pack, entryOff)
		if err == nil {
			if e.dataOff <= entryOff || e.dataOff >= int64(len(pack)-packTrailerLen) || e.size > maxObjectSize {
				t.Fatalf("entry out of bounds: %+v in %d bytes", e, len(pack))
			}
			if e.typ == plumbing.OFSDeltaObject && (e.baseOff < packHeaderLen || e.baseOff >= entryOff) {
				t.Fatalf("base offset %d out of range", e.baseOff)
			}
		}
		typ, data, err := s.readPacked(0, entryOff)
		if err != nil {
			return
		}
		typ2, data2, err := s.readPacked(0, entryOff)
		if err != nil || typ2 != typ || !bytes.Equal(data, data2) {
			t.Fatalf("second read differs: %v", err)
		}
		if typ != plumbing.CommitObject || e.typ != plumbing.CommitObject {
			return
		}
		want, werr := parseCommitHeader(data)
		got, _, ok := s.commitHeaderPrefix(pack[e.dataOff:len(pack)-packTrailerLen], e.size)
		if ok && (werr != nil || got.when != want.when || !slices.Equal(got.parents, want.parents)) {
			t.Fatalf("header-only read %+v, whole read %+v (%v)", got, want, werr)
		}
	})
}

// FuzzApplyDelta applies any delta to any base: never a panic; a result is exactly the declared
// size, and equals go-git's whenever go-git also applies it.
func FuzzApplyDelta(f *testing.F) {
	base := []byte("the quick brown fox jumps over the lazy dog\n")
	f.Add(base, packfile.DiffDelta(base, []byte("the quick red fox jumps over the lazy dogs\n")))
	f.Add(base, packfile.DiffDelta(base, nil))
	f.Add([]byte{}, packfile.DiffDelta(nil, []byte("new")))
	f.Add(base, rawDelta(len(base), 0x10000, 0x80))
	f.Add(base, rawDelta(len(base), 3, 0x91, 40, 3))
	f.Add(base, rawDelta(len(base), 2, 0))
	f.Add(base, []byte{0x80})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		got, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, dst, _, herr := deltaSizes(delta)
		if herr != nil || int64(len(got)) != dst {
			t.Fatalf("result of %d bytes, the delta declares %d (%v)", len(got), dst, herr)
		}
		want, werr := packfile.PatchDelta(base, delta)
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("result %q, go-git's %q", got, want)
		}
		for _, n := range []int{0, len(got) / 2, len(got), len(got) + 7} { // into reused memory
			buf := bytes.Repeat([]byte{0xa5}, n)
			into, err := applyDeltaInto(buf, base, delta)
			if err != nil || !bytes.Equal(into, got) {
				t.Fatalf("into a %d-byte buffer: %q (%v), alone %q", n, into, err, got)
			}
		}
	})
}
