package git

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
)

// readObject returns the type and the whole content of object h, for the tree diff and the
// added-line scan: the store's readObject. Callers never modify the bytes: they may be shared with
// the store's cache.
func (r *Repo) readObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return r.store.readObject(h)
}

// readObject returns the type and content of object h: from a mapped pack (the entry parsed in
// place, its delta chain applied by pack offset), else from a loose file, else from an alternate
// object store through go-git. The bytes may be shared with the store's cache: never modify them.
// Whatever the source, the content is verified against h (verify.go): an object that does not
// hash to its id is a *CorruptError.
func (s *lazyStore) readObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	pi, off, ok, err := s.locate(h)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if ok {
		return s.readPackedAs(h, pi, off)
	}
	return s.readUnpacked(h)
}

// readPackedAs reads the entry at off in pack pi as object h, which the pack's index places
// there, and verifies it: the resolved object, for a delta. A cached entry already verified as h
// is not hashed again; one cached as a delta base, or as another id, is.
func (s *lazyStore) readPackedAs(h plumbing.Hash, pi int, off int64) (plumbing.ObjectType, []byte, error) {
	key := objectKey{pack: pi, off: off}
	if o, ok := s.objects.get(key); ok && o.id == h {
		return o.typ, o.data, nil
	}
	typ, data, err := s.readPacked(pi, off)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read %s from %s: %w", h, s.packs[pi].name, err)
	}
	if err := s.verify(h, typ, data); err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read %s from %s: %w", h, s.packs[pi].name, err)
	}
	s.objects.setID(key, h)
	return typ, data, nil
}

// locate returns the pack (an index into s.packs) and offset of object h; ok is false when no
// pack has it.
func (s *lazyStore) locate(h plumbing.Hash) (pi int, off int64, ok bool, err error) {
	for i, p := range s.packs {
		pos, found := p.find(h)
		if !found {
			continue
		}
		off, err := p.offset(pos)
		if err != nil {
			return 0, 0, false, err
		}
		return i, off, true, nil
	}
	return 0, 0, false, nil
}

// readUnpacked reads object h from a loose file, or else from an alternate object store.
func (s *lazyStore) readUnpacked(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	key := objectKey{pack: -1, id: h}
	if o, ok := s.objects.get(key); ok {
		return o.typ, o.data, nil
	}
	typ, data, err := s.loose(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && s.alternates {
		return s.alternate(h)
	}
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if err := s.verify(h, typ, data); err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	s.objects.put(key, typ, data) // commits too: a loose read costs a file open and an inflate
	s.objects.setID(key, h)
	return typ, data, nil
}

// alternate reads object h through go-git's storage, which follows objects/info/alternates.
func (s *lazyStore) alternate(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	obj, err := s.Storage.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if obj.Size() > maxObjectSize {
		return plumbing.InvalidObject, nil, fmt.Errorf("object %s: %d bytes, over %d", h, obj.Size(), maxObjectSize)
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	data := make([]byte, obj.Size())
	if _, err := io.ReadFull(rd, data); err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read %s from an alternate: %w", h, err)
	}
	if err := s.verify(h, obj.Type(), data); err != nil { // go-git does not hash what it reads
		return plumbing.InvalidObject, nil, fmt.Errorf("read %s from an alternate: %w", h, err)
	}
	return obj.Type(), data, nil
}

// deltaLink is one delta of a chain being resolved: the entry at off in pack pi.
type deltaLink struct {
	pi    int
	off   int64
	entry packEntry
}

// readPacked reads the object at off in pack pi: it follows the delta chain down to a base (an
// undeltified entry, an object in the cache, or a REF_DELTA base that is loose), then inflates
// and applies each delta on the way back up. Every base on the way is cached by (pack, offset).
func (s *lazyStore) readPacked(pi int, off int64) (plumbing.ObjectType, []byte, error) {
	chain := s.chain[:0]
	defer func() { s.chain = chain[:0] }()
	var refSeen map[objectKey]bool // REF_DELTA entries met: only they can form a cycle
	var typ plumbing.ObjectType
	var data []byte
	for {
		if o, ok := s.objects.get(objectKey{pack: pi, off: off}); ok {
			typ, data = o.typ, o.data
			break
		}
		pack, err := s.packs[pi].mapPack()
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		e, err := parsePackEntry(pack, off)
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if e.typ != plumbing.OFSDeltaObject && e.typ != plumbing.REFDeltaObject {
			if data, err = s.inflatePacked(pi, off, e); err != nil {
				return plumbing.InvalidObject, nil, fmt.Errorf("entry at offset %d: %w", off, err)
			}
			typ = e.typ
			s.cacheEntry(pi, off, typ, data, len(chain) > 0)
			break
		}
		if len(chain) == maxDeltaDepth {
			return plumbing.InvalidObject, nil, fmt.Errorf("delta chain deeper than %d at offset %d", maxDeltaDepth, off)
		}
		chain = append(chain, deltaLink{pi: pi, off: off, entry: e})
		if e.typ == plumbing.OFSDeltaObject {
			off = e.baseOff
			continue
		}
		if refSeen == nil {
			refSeen = map[objectKey]bool{}
		}
		if k := (objectKey{pack: pi, off: off}); refSeen[k] {
			return plumbing.InvalidObject, nil, fmt.Errorf("delta cycle through the entry at offset %d", off)
		} else {
			refSeen[k] = true
		}
		bpi, boff, ok, err := s.locate(e.baseRef)
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if !ok { // a thin pack's base, stored loose
			if typ, data, err = s.readUnpacked(e.baseRef); err != nil {
				return plumbing.InvalidObject, nil, fmt.Errorf("delta base %s of the entry at offset %d: %w", e.baseRef, off, err)
			}
			break
		}
		pi, off = bpi, boff
	}
	return s.applyChain(chain, typ, data)
}

// checkpointEvery is how often applyChain keeps an intermediate result of a delta chain: every
// checkpointEvery-th step from the base is cached, the others are built in reused buffers. Caching
// every step (as git's delta base cache does) made a gate run allocate a fresh copy of each tree
// for each delta of its chain, and fresh memory is page faults; with checkpoints a later read of
// any object of the chain applies at most checkpointEvery deltas.
const checkpointEvery = 8

// keepScratchMax is the largest buffer chainScratch keeps from one chain to the next.
const keepScratchMax = 4 << 20

// chainScratch holds applyChain's buffers: the inflated delta, and two buffers the
// intermediate results alternate between (a result is never written over its own base).
type chainScratch struct {
	delta   []byte
	step    [2][]byte
	applied int // deltas applied over the store's life, for tests
}

// release drops the buffers over keepScratchMax, so that one large object's chain does not
// keep its size for the life of the store.
func (c *chainScratch) release() {
	if cap(c.delta) > keepScratchMax {
		c.delta = nil
	}
	for i := range c.step {
		if cap(c.step[i]) > keepScratchMax {
			c.step[i] = nil
		}
	}
}

// applyChain applies the deltas of chain, last (nearest the base) first, to base data of type
// typ. The result is new memory, cached; so is every checkpointEvery-th intermediate result.
func (s *lazyStore) applyChain(chain []deltaLink, typ plumbing.ObjectType, data []byte) (plumbing.ObjectType, []byte, error) {
	defer s.scratch.release()
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		delta, err := s.inflateDelta(l)
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("delta at offset %d: %w", l.off, err)
		}
		keep := i == 0 || (len(chain)-i)%checkpointEvery == 0
		var buf []byte
		if !keep {
			buf = s.scratch.step[i&1]
		}
		if data, err = applyDeltaInto(buf, data, delta); err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("delta at offset %d: %w", l.off, err)
		}
		s.scratch.applied++
		if !keep {
			s.scratch.step[i&1] = data
			continue
		}
		s.cacheEntry(l.pi, l.off, typ, data, i > 0)
	}
	return typ, data, nil
}

// inflateDelta inflates the delta of link l into the store's scratch buffer, valid until the
// next call.
func (s *lazyStore) inflateDelta(l deltaLink) ([]byte, error) {
	out, err := s.inflatePackedInto(s.scratch.delta, l.pi, l.off, l.entry)
	if out != nil {
		s.scratch.delta = out
	}
	return out, err
}

// cacheEntry caches an object read from a pack: every delta base, and every object but a commit
// (a walk reads each commit once, and commits are seldom delta bases).
func (s *lazyStore) cacheEntry(pi int, off int64, typ plumbing.ObjectType, data []byte, isBase bool) {
	if isBase || typ != plumbing.CommitObject {
		s.objects.put(objectKey{pack: pi, off: off}, typ, data)
	}
}

// inflatePacked inflates the data of entry e, at offset off of pack pi (mapped), into new
// memory, and counts the pages read against the store's page budget.
func (s *lazyStore) inflatePacked(pi int, off int64, e packEntry) ([]byte, error) {
	return s.inflatePackedInto(nil, pi, off, e)
}

// inflatePackedInto is inflatePacked into buf's memory when it holds the entry.
func (s *lazyStore) inflatePackedInto(buf []byte, pi int, off int64, e packEntry) ([]byte, error) {
	pack := s.packs[pi].pack
	src := pack[e.dataOff : len(pack)-packTrailerLen]
	data, used, err := s.inflateMem(buf, src, e.size)
	s.touch(pi, off, e.dataOff-off+int64(used))
	return data, err
}

// inflateMem inflates the zlib stream at the start of src, which must hold exactly size bytes
// and end there, its checksum verified, with the store's inflater (inflate.go), into buf's memory
// when it holds size bytes, else new memory. used is how many bytes of src it read. A size src
// cannot inflate to is refused before anything is allocated.
func (s *lazyStore) inflateMem(buf, src []byte, size int64) (out []byte, used int, err error) {
	if err := checkDeclaredSize(size, len(src)); err != nil {
		return nil, 0, err
	}
	out = buf[:0]
	if int64(cap(out)) < size {
		out = make([]byte, 0, size)
	}
	res, _, used, err := s.inf.inflate(src, out[:0:size], true)
	switch {
	case err == nil:
		return res, used, nil
	case errors.Is(err, errOutputFull):
		return nil, used, fmt.Errorf("inflate: more than the %d bytes the header says", size)
	case errors.Is(err, errInputEnd) && int64(len(res)) < size:
		return nil, used, fmt.Errorf("inflate: %d bytes, the header says %d", len(res), size)
	}
	return nil, used, fmt.Errorf("inflate: %w", err)
}

// resetZlib points the store's zlib reader at src, reusing its state from one object to the
// next.
func (s *lazyStore) resetZlib(src []byte) error {
	s.zsrc.Reset(src)
	if s.zr == nil {
		zr, err := zlib.NewReader(&s.zsrc)
		if err != nil {
			return fmt.Errorf("inflate: %w", err)
		}
		s.zr = zr
		return nil
	}
	if err := s.zr.(zlib.Resetter).Reset(&s.zsrc, nil); err != nil {
		return fmt.Errorf("inflate: %w", err)
	}
	return nil
}

// loose reads a loose object: a zlib stream of "type size\0" and the content.
func (s *lazyStore) loose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	hx := h.String()
	file, err := readRegular(filepath.Join(s.objectsDir, hx[:2], hx[2:]), math.MaxInt64/2) // a named pipe is refused
	if errors.Is(err, os.ErrNotExist) {
		return plumbing.InvalidObject, nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	typ, data, err := s.inflateLoose(file)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	return typ, data, nil
}

// inflateLoose decodes the content of a loose object file.
func (s *lazyStore) inflateLoose(file []byte) (plumbing.ObjectType, []byte, error) {
	if err := s.resetZlib(file); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	var hdr [32]byte // "blob 1073741824\0" and the like
	n := 0
	for ; n == 0 || hdr[n-1] != 0; n++ {
		if n == len(hdr) {
			return plumbing.InvalidObject, nil, errors.New("header longer than 32 bytes")
		}
		if _, err := io.ReadFull(s.zr, hdr[n:n+1]); err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("header: %w", err)
		}
	}
	name, sizeText, ok := bytes.Cut(hdr[:n-1], []byte(" "))
	typ, err := plumbing.ParseObjectType(string(name))
	if !ok || err != nil || typ < plumbing.CommitObject || typ > plumbing.TagObject {
		return plumbing.InvalidObject, nil, fmt.Errorf("malformed header %q", hdr[:n-1])
	}
	size, err := strconv.ParseInt(string(sizeText), 10, 64)
	if err != nil || size < 0 || (len(sizeText) > 1 && sizeText[0] == '0') {
		return plumbing.InvalidObject, nil, fmt.Errorf("malformed size in header %q", hdr[:n-1])
	}
	data, err := s.inflateRest(size, len(file))
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	return typ, data, nil
}

// checkDeclaredSize refuses a size that srcLen compressed bytes cannot inflate to (or over
// maxObjectSize), so that nothing is allocated for it.
func checkDeclaredSize(size int64, srcLen int) error {
	if size < 0 || size > maxObjectSize || size > maxDeflateRatio*int64(srcLen)+maxDeflateRatio {
		return fmt.Errorf("declared size %d is more than %d compressed bytes can hold", size, srcLen)
	}
	return nil
}

// inflateRest reads exactly size more bytes from the stream resetZlib started on srcLen
// compressed bytes, into new memory, and checks that the stream ends there. A size srcLen bytes
// cannot inflate to is refused before anything is allocated.
func (s *lazyStore) inflateRest(size int64, srcLen int) ([]byte, error) {
	if err := checkDeclaredSize(size, srcLen); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if n, err := io.ReadFull(s.zr, out); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("inflate: %d bytes, the header says %d", n, size)
		}
		return nil, fmt.Errorf("inflate: %w", err)
	}
	var one [1]byte
	switch n, err := s.zr.Read(one[:]); {
	case n > 0 || err == nil:
		return nil, fmt.Errorf("inflate: more than the %d bytes the header says", size)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("inflate: %w", err)
	}
	return out, nil
}

// rawObject is a plumbing.EncodedObject over bytes already read: what EncodedObject returns, so
// that go-git's object decoders read the fast path's bytes.
type rawObject struct {
	h    plumbing.Hash
	typ  plumbing.ObjectType
	data []byte // shared with the cache: read only
}

var _ plumbing.EncodedObject = (*rawObject)(nil)

func (o *rawObject) Hash() plumbing.Hash             { return o.h }
func (o *rawObject) Type() plumbing.ObjectType       { return o.typ }
func (o *rawObject) SetType(t plumbing.ObjectType)   { o.typ = t }
func (o *rawObject) Size() int64                     { return int64(len(o.data)) }
func (o *rawObject) SetSize(int64)                   {}
func (o *rawObject) Writer() (io.WriteCloser, error) { return nil, errors.New("read-only object") }
func (o *rawObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// objectKey names a cached object: a pack (an index into lazyStore.packs) and an offset in it,
// or, for a loose object, pack -1 and its id.
type objectKey struct {
	pack int
	off  int64
	id   plumbing.Hash
}

// cachedObject is one entry of an objectCache.
type cachedObject struct {
	key  objectKey
	typ  plumbing.ObjectType
	data []byte
	id   plumbing.Hash // the id data was verified against; zero for a delta base not read by id
}

// objectCache keeps recently read objects, delta bases above all, up to a number of bytes of
// content, least recently used out first. An object over a quarter of the bound is not kept.
type objectCache struct {
	max, used int
	entries   map[objectKey]*list.Element
	lru       list.List // of *cachedObject, most recent at the front
}

func newObjectCache(maxBytes int) *objectCache {
	return &objectCache{max: maxBytes, entries: map[objectKey]*list.Element{}}
}

func (c *objectCache) get(k objectKey) (*cachedObject, bool) {
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedObject), true
}

// setID records that the entry of k, if cached, was verified as object id.
func (c *objectCache) setID(k objectKey, id plumbing.Hash) {
	if e, ok := c.entries[k]; ok {
		e.Value.(*cachedObject).id = id
	}
}

func (c *objectCache) put(k objectKey, typ plumbing.ObjectType, data []byte) {
	if len(data) > c.max/4 {
		return
	}
	if e, ok := c.entries[k]; ok {
		c.lru.MoveToFront(e)
		return
	}
	for c.used+len(data) > c.max && c.lru.Len() > 0 {
		old := c.lru.Remove(c.lru.Back()).(*cachedObject)
		delete(c.entries, old.key)
		c.used -= len(old.data)
	}
	c.entries[k] = c.lru.PushFront(&cachedObject{key: k, typ: typ, data: data})
	c.used += len(data)
}

// readCommitHeader reads the parents and committer time of commit h, verified against h. An
// undeltified commit in a pack is inflated into the store's reused buffer (a walk reads thousands
// of commits, each once); any other is read as readObject reads it. An object of another type is
// plumbing.ErrObjectNotFound, as from EncodedObject.
func (s *lazyStore) readCommitHeader(h plumbing.Hash) (commitHeader, error) {
	pi, off, _, e, ok, err := s.packEntryOf(h)
	if err != nil {
		return commitHeader{}, err
	}
	if ok {
		switch e.typ {
		case plumbing.CommitObject:
			data, err := s.inflatePackedInto(s.hbuf, pi, off, e)
			if data != nil && cap(data) <= keepScratchMax {
				s.hbuf = data // kept for the next commit, unless one huge commit grew it
			}
			if err == nil {
				err = s.verify(h, plumbing.CommitObject, data)
			}
			if err != nil {
				return commitHeader{}, fmt.Errorf("read %s from %s: entry at offset %d: %w", h, s.packs[pi].name, off, err)
			}
			return parseCommitHeader(data)
		case plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			return commitHeader{}, plumbing.ErrObjectNotFound
		}
	}
	return s.readCommitWhole(h)
}

// packEntryOf locates h in the packs and parses its entry header: ok is false when no pack holds
// it (it is loose, in an alternate, or absent).
func (s *lazyStore) packEntryOf(h plumbing.Hash) (pi int, off int64, pack []byte, e packEntry, ok bool, err error) {
	if pi, off, ok, err = s.locate(h); err != nil || !ok {
		return pi, off, nil, packEntry{}, false, err
	}
	if pack, err = s.packs[pi].mapPack(); err != nil {
		return pi, off, nil, packEntry{}, false, err
	}
	if e, err = parsePackEntry(pack, off); err != nil {
		return pi, off, nil, packEntry{}, false, fmt.Errorf("read %s from %s: %w", h, s.packs[pi].name, err)
	}
	return pi, off, pack, e, true, nil
}

// readCommitWhole reads commit h as readObject reads it (verified) and parses its header; an
// object of another type is plumbing.ErrObjectNotFound.
func (s *lazyStore) readCommitWhole(h plumbing.Hash) (commitHeader, error) {
	typ, data, err := s.readObject(h)
	if err != nil {
		return commitHeader{}, err
	}
	if typ != plumbing.CommitObject {
		return commitHeader{}, plumbing.ErrObjectNotFound
	}
	return parseCommitHeader(data)
}

// commitHeaderInput is how many compressed bytes of an undeltified commit readCommitStart
// inflates first: enough for the tree, parent, author and committer lines of most commits.
const commitHeaderInput = 256

// readCommitStart reads the parents and committer time of commit h for a walk that reads many
// commits and confirms the few its answer rests on (reachableByWalk): for an undeltified commit in
// a pack it inflates only the start of the entry, and stops there when that holds the header
// lines the parse stops at; that answer is NOT verified against h (the content was not read
// whole), and the caller must confirm it with readCommitHeader before it decides anything.
// Otherwise (a longer header, a deltified or loose commit) it reads the commit whole, verified. An
// object of another type is plumbing.ErrObjectNotFound, as from EncodedObject.
func (s *lazyStore) readCommitStart(h plumbing.Hash) (commitHeader, error) {
	pi, off, pack, e, ok, err := s.packEntryOf(h)
	if err != nil {
		return commitHeader{}, err
	}
	if ok {
		switch e.typ {
		case plumbing.CommitObject:
			src := pack[e.dataOff : len(pack)-packTrailerLen]
			c, whole, ok := s.commitHeaderPrefix(src, e.size)
			s.touch(pi, off, e.dataOff-off+int64(min(len(src), commitHeaderInput)))
			if ok && whole != nil { // the prefix held the whole commit: verify it at once
				if err := s.verify(h, plumbing.CommitObject, whole); err != nil {
					return commitHeader{}, fmt.Errorf("read %s from %s: entry at offset %d: %w", h, s.packs[pi].name, off, err)
				}
				c.verified = true
			}
			if ok {
				return c, nil
			}
		case plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			return commitHeader{}, plumbing.ErrObjectNotFound
		}
	}
	c, err := s.readCommitWhole(h)
	c.verified = err == nil
	return c, err
}

// commitHeaderPrefix inflates the first commitHeaderInput bytes of src, the zlib stream of a
// commit of size bytes, and parses the header from what they give. ok is false when that is not
// enough to be sure of the answer: a whole read then decides (and reports any damage). whole is
// the commit's content when the prefix held all of it (the stream ended there, its checksum
// verified, at the declared size), valid until the store's next read; else nil.
func (s *lazyStore) commitHeaderPrefix(src []byte, size int64) (c commitHeader, whole []byte, ok bool) {
	if cap(s.hbuf) < 4096 { // readCommitHeader may have left a buffer of one small commit's size
		s.hbuf = make([]byte, 4096)
	}
	data, how, _, err := s.inf.inflate(src[:min(len(src), commitHeaderInput)], s.hbuf[:0], false)
	switch {
	case int64(len(data)) > size:
		return commitHeader{}, nil, false
	case err == nil && how == zlibEnded: // the whole stream, its checksum verified
		if int64(len(data)) != size {
			return commitHeader{}, nil, false
		}
		whole = data
	case err != nil && !errors.Is(err, errInputEnd): // not merely the input cut short
		return commitHeader{}, nil, false
	}
	if !headerEnds(data) {
		return commitHeader{}, nil, false
	}
	c, err = parseCommitHeader(data)
	return c, whole, err == nil
}

// headerEnds reports whether data, the start of a commit, holds a whole line at which
// parseCommitHeader stops (an empty line, or a committer line), so that the parse of data gives
// the parse of the whole commit.
func headerEnds(data []byte) bool {
	if bytes.HasPrefix(data, []byte("\n")) || bytes.Contains(data, []byte("\n\n")) {
		return true
	}
	start := -1
	if bytes.HasPrefix(data, []byte("committer ")) {
		start = 0
	} else if i := bytes.Index(data, []byte("\ncommitter ")); i >= 0 {
		start = i + 1
	}
	return start >= 0 && bytes.IndexByte(data[start:], '\n') >= 0
}
