package git

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectCacheBytes bounds the decoded objects (delta bases above all) a Repo keeps: enough for
// the trees of a diff, small enough for a gate run to stay well under 64 MB.
const objectCacheBytes = 16 << 20

// lazyStore is the storage a Repo reads through: references, config and shallow commits come from
// go-git's filesystem storage; objects come from memory-mapped packs, looked up in their
// memory-mapped indexes on demand, then from loose objects. go-git's own object storage decodes
// every .idx in full and builds an offset→hash map on the first read (60 MB and 150 ms on an
// 850k-object pack), and its packfile decoder checksums and hashes every byte it reads; here a
// lookup is a binary search in the mapped SHA table and an object is inflated straight from the
// mapped pack, its delta chain followed by offset (pack.go, object.go). A lazyStore is not safe
// for concurrent use.
type lazyStore struct {
	*filesystem.Storage
	objectsDir string // absolute or relative to the working directory
	packs      []*packIndex
	alternates bool // objects/info/alternates exists: a miss falls back to go-git's storage

	objects *objectCache  // objects read, by pack offset (or id, when loose)
	inf     inflater      // inflates the objects read from a mapped pack
	zr      io.ReadCloser // a zlib reader for loose objects, reset for each stream (a zlib.Resetter)
	zsrc    bytes.Reader  // what zr reads
	chain   []deltaLink   // readPacked's delta chain, kept for its capacity
	scratch chainScratch  // applyChain's reused buffers
	hbuf    []byte        // readCommitHeader's buffer
	pages   pageBudget    // pack pages touched, released past a budget (pagebudget.go)

	hasher  hash.Hash       // verify's SHA-1 (sha1cd), reset for each object
	corrupt []*CorruptError // the objects found corrupt, for Repo.Corrupt
	purpose string          // what the reads under way are for (Repo.readingFor)
}

// openLazyStore maps the pack indexes under objectsDir. st serves everything but objects.
func openLazyStore(st *filesystem.Storage, objectsDir string) (*lazyStore, error) {
	s := &lazyStore{Storage: st, objectsDir: objectsDir, objects: newObjectCache(objectCacheBytes),
		pages: pageBudget{limit: packPageBudget}}
	if _, err := os.Stat(filepath.Join(objectsDir, "info", "alternates")); err == nil {
		s.alternates = true
	}
	packDir := filepath.Join(objectsDir, "pack")
	entries, err := readDirectory(packDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		if _, err := os.Stat(filepath.Join(packDir, name+".pack")); err != nil {
			continue // an index without its pack (being written or removed): git skips it too
		}
		p, err := openPackIndex(packDir, name)
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
	typ, data, err := s.readObject(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return &rawObject{h: h, typ: typ, data: data}, nil
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
	_, data, err := s.readObject(h)
	if err != nil {
		return 0, err
	}
	return int64(len(data)), nil
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
		entries, err := readDirectory(filepath.Join(s.objectsDir, d))
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

// packIndex is a pack's .idx (version 2), memory-mapped and read in place, and its pack, mapped
// on first use.
type packIndex struct {
	name    string // pack-<sha>, in packDir
	packDir string
	idx     []byte // the mapped .idx
	fanout  []byte // 256 big-endian counts
	names   []byte // count sorted 20-byte ids
	off32   []byte // count 31-bit offsets or indexes into off64
	off64   []byte // 64-bit offsets
	count   int
	pack    []byte // the mapped .pack, once opened
	// packMapped: pack is a file mapping made by mapPack, whose pages may be released. A pack
	// given as bytes (tests) is Go memory: releasing its pages would zero them.
	packMapped bool
	last       plumbing.Hash
	lastPos    int
	lastOK     bool
}

const (
	idxHeaderLen = 8
	idxFanoutLen = 256 * 4
)

// openPackIndex maps packDir/name.idx and checks its shape.
func openPackIndex(packDir, name string) (*packIndex, error) {
	p := &packIndex{name: name, packDir: packDir}
	var err error
	if p.idx, err = mmapFile(filepath.Join(packDir, name+".idx")); err != nil {
		return nil, fmt.Errorf("map pack index %s: %w", name, err)
	}
	if err := p.parse(); err != nil {
		_ = p.close()
		return nil, fmt.Errorf("pack index %s: %w", name, err)
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
	rest = rest[p.count*4:] // the CRC32s: not checked, the zlib checksum is
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
	for _, m := range []*[]byte{&p.idx, &p.pack} {
		if *m != nil {
			errs = append(errs, unmap(*m))
			*m = nil
		}
	}
	p.packMapped = false
	return errors.Join(errs...)
}

// find returns the position of h in the index. The last hit is remembered: go-git often asks
// whether an object exists, then reads it.
func (p *packIndex) find(h plumbing.Hash) (int, bool) {
	if p.lastOK && p.last == h {
		return p.lastPos, true
	}
	lo, hi := p.fanoutRange(h[0])
	lo, hi = p.narrow(h, lo, hi)
	key := binary.BigEndian.Uint64(h[:8])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		name := p.names[20*mid : 20*mid+20]
		c := cmp.Compare(key, binary.BigEndian.Uint64(name))
		if c == 0 {
			c = bytes.Compare(h[8:], name[8:])
		}
		switch {
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

// narrow returns a part of [lo, hi) that holds h if [lo, hi) does, guessed from where h's first
// eight bytes fall between those of the range's ends: object ids are spread uniformly, so the
// guess is within a few dozen positions on a real pack, and two comparisons there spare the
// binary search most of its steps. A guess that misses (a crafted index) only narrows less: the
// answer never depends on it.
func (p *packIndex) narrow(h plumbing.Hash, lo, hi int) (int, int) {
	const slack = 16
	n := hi - lo
	if n <= 8*slack {
		return lo, hi
	}
	key := binary.BigEndian.Uint64(h[:8])
	a := binary.BigEndian.Uint64(p.names[20*lo:])
	b := binary.BigEndian.Uint64(p.names[20*(hi-1):])
	if key <= a || key >= b {
		return lo, hi
	}
	g := lo + int(float64(key-a)/float64(b-a)*float64(n-1))
	w := slack + 2*int(math.Sqrt(float64(n)))
	if l := g - w; l > lo && bytes.Compare(h[:], p.names[20*l:20*l+20]) > 0 {
		lo = l + 1
	}
	if u := g + w; u < hi-1 && bytes.Compare(h[:], p.names[20*u:20*u+20]) < 0 {
		hi = u
	}
	return lo, hi
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

// mmapFile maps a whole file read-only; an empty file maps to an empty, non-nil slice.
func mmapFile(path string) ([]byte, error) {
	f, st, err := openRegular(path) // a named pipe is refused, not waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
