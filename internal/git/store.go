package git

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mathbits "math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectCacheBytes bounds the decoded objects (delta bases above all) a Repo keeps: enough for
// the trees of a diff, small enough for a gate run to stay well under 64 MB.
const objectCacheBytes = 16 * cache.MiByte

// lazyStore is the storage a Repo reads through: references, config and shallow commits come from
// go-git's filesystem storage; objects come from memory-mapped pack indexes looked up on demand,
// then loose objects. go-git's own object storage decodes every .idx in full and builds an
// offset→hash map on the first read (60 MB and 150 ms on an 850k-object pack); here a lookup is a
// binary search in the mapped SHA table and the reverse index is the pack's .rev file, or offsets
// sorted once when there is none. Objects are decoded by go-git's packfile code.
type lazyStore struct {
	*filesystem.Storage
	objectsDir string // absolute or relative to the working directory
	packs      []*packIndex
	cache      noCommitCache
	alternates bool // objects/info/alternates exists: a miss falls back to go-git's storage
}

// openLazyStore maps the pack indexes under objectsDir. st serves everything but objects.
func openLazyStore(st *filesystem.Storage, objectsDir string) (*lazyStore, error) {
	s := &lazyStore{Storage: st, objectsDir: objectsDir, cache: noCommitCache{cache.NewObjectLRU(objectCacheBytes)}}
	if _, err := os.Stat(filepath.Join(objectsDir, "info", "alternates")); err == nil {
		s.alternates = true
	}
	packDir := filepath.Join(objectsDir, "pack")
	entries, err := os.ReadDir(packDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	packFS := osfs.New(packDir, osfs.WithBoundOS())
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		if _, err := os.Stat(filepath.Join(packDir, name+".pack")); err != nil {
			continue // an index without its pack (being written or removed): git skips it too
		}
		p, err := openPackIndex(packFS, packDir, name)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.packs = append(s.packs, p)
	}
	return s, nil
}

// Close unmaps the indexes and packs and closes go-git's storage.
func (s *lazyStore) Close() error {
	var errs []error
	for _, p := range s.packs {
		errs = append(errs, p.close())
	}
	s.packs = nil
	errs = append(errs, s.Storage.Close())
	return errors.Join(errs...)
}

// EncodedObject returns object h, from a pack or loose; t other than AnyObject must match.
func (s *lazyStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.object(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && obj.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return obj, nil
}

func (s *lazyStore) object(h plumbing.Hash) (plumbing.EncodedObject, error) {
	if obj, ok := s.cache.Get(h); ok {
		return obj, nil
	}
	for _, p := range s.packs {
		if _, ok := p.find(h); !ok {
			continue
		}
		pf, err := p.packfile(s.cache)
		if err != nil {
			return nil, err
		}
		obj, err := pf.Get(h)
		if err != nil {
			return nil, fmt.Errorf("read %s from %s: %w", h, p.name, err)
		}
		return obj, nil
	}
	obj, err := s.loose(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) && s.alternates {
		return s.Storage.EncodedObject(plumbing.AnyObject, h)
	}
	return obj, err
}

// loose reads a loose object.
func (s *lazyStore) loose(h plumbing.Hash) (obj plumbing.EncodedObject, err error) {
	hx := h.String()
	f, err := os.Open(filepath.Join(s.objectsDir, hx[:2], hx[2:]))
	if errors.Is(err, os.ErrNotExist) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	defer func() {
		if cerr := r.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read loose object %s: %w", h, cerr)
		}
	}()
	typ, size, err := r.Header()
	if err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(typ)
	mo.SetSize(size)
	if _, err := io.Copy(mo, r); err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	s.cache.Object.Put(mo) // commits too: a loose read costs a file open and an inflate
	return mo, nil
}

// HasEncodedObject returns nil when object h exists.
func (s *lazyStore) HasEncodedObject(h plumbing.Hash) error {
	for _, p := range s.packs {
		if _, ok := p.find(h); ok {
			return nil
		}
	}
	hx := h.String()
	if _, err := os.Stat(filepath.Join(s.objectsDir, hx[:2], hx[2:])); err == nil {
		return nil
	}
	if s.alternates {
		return s.Storage.HasEncodedObject(h)
	}
	return plumbing.ErrObjectNotFound
}

// EncodedObjectSize returns the size of object h.
func (s *lazyStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	obj, err := s.object(h)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

// HashesWithPrefix returns every object id, packed or loose, that starts with prefix.
func (s *lazyStore) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	var found []plumbing.Hash
	for _, p := range s.packs {
		found = p.appendPrefix(found, prefix)
	}
	dirs := []string{}
	if len(prefix) > 0 {
		dirs = append(dirs, hex.EncodeToString(prefix[:1]))
	} else {
		for b := range 256 {
			dirs = append(dirs, fmt.Sprintf("%02x", b))
		}
	}
	hexPrefix := hex.EncodeToString(prefix)
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(s.objectsDir, d))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list loose objects: %w", err)
		}
		for _, e := range entries {
			name := d + e.Name()
			if len(name) == 2*len(plumbing.ZeroHash) && isHex(name) && strings.HasPrefix(name, hexPrefix) {
				found = append(found, plumbing.NewHash(name))
			}
		}
	}
	if s.alternates {
		more, err := s.Storage.HashesWithPrefix(prefix)
		if err != nil {
			return nil, err
		}
		found = append(found, more...)
	}
	slices.SortFunc(found, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(found), nil
}

// noCommitCache keeps trees, blobs and tags, not commits. Commits are seldom delta bases, a walk
// reads each once, and go-git's cache keys an object by its hash, which costs a SHA-1 of the
// commit (go-git's collision-detecting one) for every commit walked.
type noCommitCache struct{ cache.Object }

func (c noCommitCache) Put(obj plumbing.EncodedObject) {
	if obj.Type() != plumbing.CommitObject {
		c.Object.Put(obj)
	}
}

// packIndex is a pack's .idx (version 2), memory-mapped and read in place: it implements
// idxfile.Index for go-git's packfile decoder.
type packIndex struct {
	name     string // pack-<sha>, in packDir
	packDir  string
	packFS   billy.Filesystem // packDir, for the large objects go-git reopens by name
	idx      []byte           // the mapped .idx
	rev      []byte           // the mapped .rev, or nil
	fanout   []byte           // 256 big-endian counts
	names    []byte           // count sorted 20-byte ids
	crcs     []byte           // count CRC32s
	off32    []byte           // count 31-bit offsets or indexes into off64
	off64    []byte           // 64-bit offsets
	count    int
	byOffset []uint64 // without .rev: offset<<24 | position, sorted; built on the first FindHash
	pack     []byte   // the mapped .pack, once opened
	last     plumbing.Hash
	lastPos  int
	lastOK   bool
	pf       *packfile.Packfile
}

var _ idxfile.Index = (*packIndex)(nil)

const (
	idxHeaderLen = 8
	idxFanoutLen = 256 * 4
	revHeaderLen = 12
)

// openPackIndex maps packDir/name.idx and checks its shape, and maps name.rev when it exists.
func openPackIndex(packFS billy.Filesystem, packDir, name string) (*packIndex, error) {
	p := &packIndex{name: name, packDir: packDir, packFS: packFS}
	var err error
	if p.idx, err = mmapFile(filepath.Join(packDir, name+".idx")); err != nil {
		return nil, fmt.Errorf("map pack index %s: %w", name, err)
	}
	if err := p.parse(); err != nil {
		_ = p.close()
		return nil, fmt.Errorf("pack index %s: %w", name, err)
	}
	rev, err := mmapFile(filepath.Join(packDir, name+".rev"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		_ = p.close()
		return nil, fmt.Errorf("map reverse index %s: %w", name, err)
	case len(rev) != revHeaderLen+4*p.count+40 || string(rev[:4]) != "RIDX" ||
		binary.BigEndian.Uint32(rev[4:]) != 1:
		_ = unmap(rev) // not a reverse index this code knows: sort offsets instead
	default:
		p.rev = rev
	}
	return p, nil
}

func (p *packIndex) parse() error {
	idx := p.idx
	if len(idx) < idxHeaderLen+idxFanoutLen+40 || !bytes.Equal(idx[:4], []byte{0xff, 't', 'O', 'c'}) {
		return errors.New("not a version 2 pack index")
	}
	if v := binary.BigEndian.Uint32(idx[4:]); v != 2 {
		return fmt.Errorf("pack index version %d, want 2", v)
	}
	p.fanout = idx[idxHeaderLen : idxHeaderLen+idxFanoutLen]
	prev := uint32(0)
	for i := range 256 {
		n := binary.BigEndian.Uint32(p.fanout[4*i:])
		if n < prev {
			return errors.New("fanout table is not sorted")
		}
		prev = n
	}
	p.count = int(prev)
	rest := idx[idxHeaderLen+idxFanoutLen : len(idx)-40]
	if len(rest) < p.count*28 {
		return fmt.Errorf("%d bytes for %d objects", len(idx), p.count)
	}
	p.names, rest = rest[:p.count*20], rest[p.count*20:]
	p.crcs, rest = rest[:p.count*4], rest[p.count*4:]
	p.off32, p.off64 = rest[:p.count*4], rest[p.count*4:]
	if len(p.off64)%8 != 0 {
		return errors.New("truncated 64-bit offset table")
	}
	if want := strings.TrimPrefix(p.name, "pack-"); hex.EncodeToString(idx[len(idx)-40:len(idx)-20]) != want {
		return fmt.Errorf("pack checksum %x does not match the pack's name", idx[len(idx)-40:len(idx)-20])
	}
	return nil
}

func (p *packIndex) close() error {
	var errs []error
	if p.pf != nil {
		errs = append(errs, p.pf.Close())
		p.pf = nil
	}
	for _, m := range []*[]byte{&p.idx, &p.rev, &p.pack} {
		if *m != nil {
			errs = append(errs, unmap(*m))
			*m = nil
		}
	}
	return errors.Join(errs...)
}

// packfile returns go-git's decoder over the mapped pack, opened on first use.
func (p *packIndex) packfile(c cache.Object) (*packfile.Packfile, error) {
	if p.pf != nil {
		return p.pf, nil
	}
	data, err := mmapFile(filepath.Join(p.packDir, p.name+".pack"))
	if err != nil {
		return nil, fmt.Errorf("map pack %s: %w", p.name, err)
	}
	if len(data) < 32 || string(data[:4]) != "PACK" ||
		hex.EncodeToString(data[len(data)-20:]) != strings.TrimPrefix(p.name, "pack-") {
		_ = unmap(data)
		return nil, fmt.Errorf("pack %s: bad header or checksum", p.name)
	}
	p.pack = data
	p.pf = packfile.NewPackfileWithCache(p, p.packFS, &mappedFile{name: p.name + ".pack", data: data}, c, 0)
	return p.pf, nil
}

// find returns the position of h in the index. The last hit is remembered: the store looks an
// object up, then go-git's decoder looks it up again.
func (p *packIndex) find(h plumbing.Hash) (int, bool) {
	if p.lastOK && p.last == h {
		return p.lastPos, true
	}
	lo, hi := p.fanoutRange(h[0])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(h[:], p.names[20*mid:20*mid+20]); {
		case c == 0:
			p.last, p.lastPos, p.lastOK = h, mid, true
			return mid, true
		case c < 0:
			hi = mid
		default:
			lo = mid + 1
		}
	}
	return 0, false
}

// fanoutRange returns the positions of the ids whose first byte is b.
func (p *packIndex) fanoutRange(b byte) (lo, hi int) {
	if b > 0 {
		lo = int(binary.BigEndian.Uint32(p.fanout[4*(int(b)-1):]))
	}
	return lo, int(binary.BigEndian.Uint32(p.fanout[4*int(b):]))
}

// appendPrefix appends the ids that start with prefix.
func (p *packIndex) appendPrefix(dst []plumbing.Hash, prefix []byte) []plumbing.Hash {
	lo, hi := 0, p.count
	if len(prefix) > 0 {
		lo, hi = p.fanoutRange(prefix[0])
	}
	i := lo + sort.Search(hi-lo, func(k int) bool { return bytes.Compare(p.names[20*(lo+k):20*(lo+k)+20], prefix) >= 0 })
	for ; i < hi && bytes.HasPrefix(p.names[20*i:20*i+20], prefix); i++ {
		dst = append(dst, plumbing.Hash(p.names[20*i:20*i+20]))
	}
	return dst
}

// offset returns the pack offset of the object at position i.
func (p *packIndex) offset(i int) (int64, error) {
	o := binary.BigEndian.Uint32(p.off32[4*i:])
	if o&0x80000000 == 0 {
		return int64(o), nil
	}
	k := int(o & 0x7fffffff)
	if 8*k+8 > len(p.off64) {
		return 0, fmt.Errorf("pack index %s: 64-bit offset %d out of range", p.name, k)
	}
	return int64(binary.BigEndian.Uint64(p.off64[8*k:])), nil
}

func (p *packIndex) hashAt(i int) plumbing.Hash { return plumbing.Hash(p.names[20*i : 20*i+20]) }

// Contains implements idxfile.Index.
func (p *packIndex) Contains(h plumbing.Hash) (bool, error) {
	_, ok := p.find(h)
	return ok, nil
}

// FindOffset implements idxfile.Index.
func (p *packIndex) FindOffset(h plumbing.Hash) (int64, error) {
	i, ok := p.find(h)
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return p.offset(i)
}

// FindCRC32 implements idxfile.Index.
func (p *packIndex) FindCRC32(h plumbing.Hash) (uint32, error) {
	i, ok := p.find(h)
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return binary.BigEndian.Uint32(p.crcs[4*i:]), nil
}

// FindHash implements idxfile.Index: the id of the object at pack offset o, which go-git needs
// for the base of every offset delta.
func (p *packIndex) FindHash(o int64) (plumbing.Hash, error) {
	if p.rev != nil {
		pos := func(k int) int { return int(binary.BigEndian.Uint32(p.rev[revHeaderLen+4*k:])) }
		var ferr error
		k := sort.Search(p.count, func(k int) bool {
			off, err := p.offset(min(pos(k), p.count-1))
			if err != nil {
				ferr = err
			}
			return off >= o
		})
		if ferr != nil {
			return plumbing.ZeroHash, ferr
		}
		if k < p.count && pos(k) < p.count {
			if off, _ := p.offset(pos(k)); off == o {
				return p.hashAt(pos(k)), nil
			}
		}
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	}
	if p.byOffset == nil {
		if err := p.sortOffsets(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	k, found := slices.BinarySearchFunc(p.byOffset, o, func(e uint64, o int64) int {
		return cmpInt64(int64(e>>24), o)
	})
	if !found {
		return plumbing.ZeroHash, plumbing.ErrObjectNotFound
	}
	return p.hashAt(int(p.byOffset[k] & (1<<24 - 1))), nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortOffsets builds the reverse index git keeps in a .rev file: positions ordered by offset, as
// offset<<24 | position, with a radix sort (a few ms for a million objects).
func (p *packIndex) sortOffsets() error {
	if p.count >= 1<<24 {
		return fmt.Errorf("pack %s: %d objects, too many to index by offset", p.name, p.count)
	}
	keys := make([]uint64, p.count)
	var maxOff int64
	for i := range p.count {
		o, err := p.offset(i)
		if err != nil {
			return err
		}
		if o >= 1<<40 {
			return fmt.Errorf("pack %s: offset %d too large to index", p.name, o)
		}
		maxOff = max(maxOff, o)
		keys[i] = uint64(o)<<24 | uint64(i)
	}
	// LSD radix sort on the offset bits, in as few passes of at most 16 bits as they need.
	bits := uint(mathbits.Len64(uint64(maxOff)))
	passes := (bits + 15) / 16
	if passes == 0 {
		p.byOffset = keys
		return nil
	}
	width := (bits + passes - 1) / passes
	mask := uint64(1)<<width - 1
	tmp := make([]uint64, p.count)
	counts := make([]int, 1<<width)
	for pass := range passes {
		shift := 24 + pass*width
		clear(counts)
		for _, k := range keys {
			counts[(k>>shift)&mask]++
		}
		sum := 0
		for d, n := range counts {
			counts[d] = sum
			sum += n
		}
		for _, k := range keys {
			d := (k >> shift) & mask
			tmp[counts[d]] = k
			counts[d]++
		}
		keys, tmp = tmp, keys
	}
	p.byOffset = keys
	return nil
}

// Count implements idxfile.Index.
func (p *packIndex) Count() (int64, error) { return int64(p.count), nil }

// Entries implements idxfile.Index: every entry in id order.
func (p *packIndex) Entries() (idxfile.EntryIter, error) {
	order := make([]int, p.count)
	for i := range order {
		order[i] = i
	}
	return &packEntries{p: p, order: order}, nil
}

// EntriesByOffset implements idxfile.Index: every entry in pack order.
func (p *packIndex) EntriesByOffset() (idxfile.EntryIter, error) {
	order := make([]int, p.count)
	offs := make([]int64, p.count)
	for i := range order {
		order[i] = i
		var err error
		if offs[i], err = p.offset(i); err != nil {
			return nil, err
		}
	}
	sort.Slice(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	return &packEntries{p: p, order: order}, nil
}

type packEntries struct {
	p     *packIndex
	order []int
}

func (e *packEntries) Next() (*idxfile.Entry, error) {
	if len(e.order) == 0 {
		return nil, io.EOF
	}
	i := e.order[0]
	e.order = e.order[1:]
	off, err := e.p.offset(i)
	if err != nil {
		return nil, err
	}
	return &idxfile.Entry{Hash: e.p.hashAt(i), CRC32: binary.BigEndian.Uint32(e.p.crcs[4*i:]), Offset: uint64(off)}, nil
}

func (e *packEntries) Close() error { e.order = nil; return nil }

// mmapFile maps a whole file read-only; an empty file maps to an empty, non-nil slice.
func mmapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	if st.Size() != int64(int(st.Size())) {
		return nil, fmt.Errorf("%s is too large to map", path)
	}
	data, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, nil
}

// mappedFile is a read-only billy.File over mapped bytes: go-git's packfile scanner seeks before
// every object, and on a mapping that costs no system call.
type mappedFile struct {
	name string
	data []byte
	pos  int64
}

var _ billy.File = (*mappedFile)(nil)

func (f *mappedFile) Name() string { return f.name }

func (f *mappedFile) Read(b []byte) (int, error) {
	n, err := f.ReadAt(b, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *mappedFile) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, os.ErrInvalid
	}
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(b, f.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *mappedFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += f.pos
	case io.SeekEnd:
		offset += int64(len(f.data))
	}
	if offset < 0 {
		return 0, &os.PathError{Op: "seek", Path: f.name, Err: os.ErrInvalid}
	}
	f.pos = offset
	return offset, nil
}

func (f *mappedFile) Write([]byte) (int, error) { return 0, os.ErrPermission }
func (f *mappedFile) Close() error              { return nil } // the store unmaps
func (f *mappedFile) Lock() error               { return nil }
func (f *mappedFile) Unlock() error             { return nil }
func (f *mappedFile) Truncate(int64) error      { return os.ErrPermission }
