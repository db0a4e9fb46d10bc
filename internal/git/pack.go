package git

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Bounds on what a pack may make the reader do: no declared size or delta result above
// maxObjectSize is allocated, and no delta chain is followed deeper than maxDeltaDepth (git's own
// packs stay under 50; a cycle of REF_DELTA entries is refused as soon as it closes).
const (
	maxObjectSize = 1 << 30
	maxDeltaDepth = 10000
	// maxDeflateRatio is deflate's largest expansion: 258 bytes from one code of at least two
	// bits, so no stream of n bytes inflates to more than about 1032·n.
	maxDeflateRatio = 1032
)

const (
	packHeaderLen  = 12 // "PACK", version, object count
	packTrailerLen = 20 // SHA-1 of everything before it
)

// packEntry is the header of one entry of a pack, parsed in place.
type packEntry struct {
	typ     plumbing.ObjectType // commit, tree, blob, tag, or an OFS or REF delta
	size    int64               // the inflated size of the data: the object, or the delta
	baseOff int64               // OFS_DELTA: the offset of the base in the same pack
	baseRef plumbing.Hash       // REF_DELTA: the id of the base
	dataOff int64               // where the zlib stream of the data starts
}

// parsePackEntry parses the entry header at offset off of a mapped pack (trailer included). It
// refuses an offset outside the entries, a truncated header, an unknown type, a size over
// maxObjectSize and an OFS_DELTA base that does not lie before the entry.
func parsePackEntry(pack []byte, off int64) (packEntry, error) {
	end := int64(len(pack)) - packTrailerLen
	if off < packHeaderLen || off >= end {
		return packEntry{}, fmt.Errorf("entry offset %d outside the pack's entries [%d, %d)", off, packHeaderLen, max(end, packHeaderLen))
	}
	p := off
	c := pack[p]
	p++
	e := packEntry{typ: plumbing.ObjectType((c >> 4) & 7), size: int64(c & 0x0f)}
	for shift := 4; c&0x80 != 0; shift += 7 {
		if p >= end {
			return packEntry{}, fmt.Errorf("entry at offset %d: truncated header", off)
		}
		if shift > 4+7*8 {
			return packEntry{}, fmt.Errorf("entry at offset %d: size field longer than %d bytes", off, 9)
		}
		c = pack[p]
		p++
		bits := int64(c & 0x7f)
		if bits != 0 && shift > 30 { // would pass maxObjectSize, or overflow
			return packEntry{}, fmt.Errorf("entry at offset %d: size over %d bytes", off, maxObjectSize)
		}
		e.size |= bits << shift
		if e.size > maxObjectSize {
			return packEntry{}, fmt.Errorf("entry at offset %d: size over %d bytes", off, maxObjectSize)
		}
	}
	switch e.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		var err error
		if e.baseOff, p, err = parseBaseOffset(pack[:end], off, p); err != nil {
			return packEntry{}, err
		}
	case plumbing.REFDeltaObject:
		if p+20 > end {
			return packEntry{}, fmt.Errorf("entry at offset %d: truncated base id", off)
		}
		e.baseRef = plumbing.Hash(pack[p : p+20])
		p += 20
	default:
		return packEntry{}, fmt.Errorf("entry at offset %d: unknown object type %d", off, e.typ)
	}
	if p >= end {
		return packEntry{}, fmt.Errorf("entry at offset %d: no data after the header", off)
	}
	e.dataOff = p
	return e, nil
}

// parseBaseOffset reads the base offset of the OFS_DELTA entry at off, whose encoding starts at
// p in pack (trailer excluded): big-endian 7-bit groups, each continuation adding one.
func parseBaseOffset(pack []byte, off, p int64) (base, next int64, err error) {
	if p >= int64(len(pack)) {
		return 0, 0, fmt.Errorf("entry at offset %d: truncated base offset", off)
	}
	c := pack[p]
	p++
	rel := int64(c & 0x7f)
	for c&0x80 != 0 {
		if p >= int64(len(pack)) {
			return 0, 0, fmt.Errorf("entry at offset %d: truncated base offset", off)
		}
		if rel >= 1<<48 {
			return 0, 0, fmt.Errorf("entry at offset %d: base offset too large", off)
		}
		c = pack[p]
		p++
		rel = (rel+1)<<7 | int64(c&0x7f)
	}
	if rel == 0 || rel > off-packHeaderLen {
		return 0, 0, fmt.Errorf("entry at offset %d: delta base %d bytes back is not an entry before it", off, rel)
	}
	return off - rel, p, nil
}

// deltaSizes reads the base and result sizes at the start of a delta and returns the rest, its
// instructions.
func deltaSizes(delta []byte) (src, dst int64, ops []byte, err error) {
	src, delta, err = deltaVarint(delta)
	if err != nil {
		return 0, 0, nil, err
	}
	dst, delta, err = deltaVarint(delta)
	if err != nil {
		return 0, 0, nil, err
	}
	return src, dst, delta, nil
}

// deltaVarint reads a little-endian 7-bit size of at most maxObjectSize.
func deltaVarint(b []byte) (int64, []byte, error) {
	var v int64
	for i, shift := 0, 0; ; i, shift = i+1, shift+7 {
		if i >= len(b) {
			return 0, nil, errors.New("truncated delta header")
		}
		if shift > 7*8 {
			return 0, nil, errors.New("delta size field too long")
		}
		v |= int64(b[i]&0x7f) << shift
		if v > maxObjectSize {
			return 0, nil, fmt.Errorf("delta size over %d bytes", maxObjectSize)
		}
		if b[i]&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
}

// applyDelta applies a git delta to base and returns the result in newly allocated memory.
func applyDelta(base, delta []byte) ([]byte, error) {
	return applyDeltaInto(nil, base, delta)
}

// applyDeltaInto applies a git delta to base, writing the result into buf's memory when it is
// large enough and allocating otherwise; buf must not overlap base. The instructions are checked
// as they run (every copy inside base, no reserved opcode, the result exactly the declared size).
// A declared size that the delta could not plausibly produce (over twice the base plus the delta,
// and over 1 MiB) is checked in a first pass that writes nothing, so that a hostile size is
// refused before it is allocated.
func applyDeltaInto(buf, base, delta []byte) ([]byte, error) {
	src, dst, ops, err := deltaSizes(delta)
	if err != nil {
		return nil, err
	}
	if src != int64(len(base)) {
		return nil, fmt.Errorf("delta is for a base of %d bytes, the base has %d", src, len(base))
	}
	if dst > 1<<20 && dst > 2*int64(len(base))+int64(len(delta)) {
		if _, err := runDelta(base, ops, nil, dst); err != nil {
			return nil, err
		}
	}
	out := buf[:0]
	if int64(cap(out)) < dst {
		out = make([]byte, dst)
	}
	out = out[:dst]
	if _, err := runDelta(base, ops, out, dst); err != nil {
		return nil, err
	}
	return out, nil
}

// runDelta runs the instructions ops over base, writing into out unless it is nil, and returns
// how many bytes they produce, which must be want.
func runDelta(base, ops, out []byte, want int64) (int64, error) {
	var n int64
	for len(ops) > 0 {
		cmd := ops[0]
		ops = ops[1:]
		switch {
		case cmd&0x80 != 0: // copy from base
			var off, size uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(ops) == 0 {
					return 0, errors.New("truncated delta copy instruction")
				}
				if i < 4 {
					off |= uint64(ops[0]) << (8 * i)
				} else {
					size |= uint64(ops[0]) << (8 * (i - 4))
				}
				ops = ops[1:]
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(base)) {
				return 0, fmt.Errorf("delta copies bytes [%d, %d) of a %d-byte base", off, off+size, len(base))
			}
			if n+int64(size) > want {
				return 0, fmt.Errorf("delta result longer than its declared %d bytes", want)
			}
			if out != nil {
				copy(out[n:], base[off:off+size])
			}
			n += int64(size)
		case cmd != 0: // insert the next cmd bytes
			if int(cmd) > len(ops) {
				return 0, errors.New("truncated delta insert instruction")
			}
			if n+int64(cmd) > want {
				return 0, fmt.Errorf("delta result longer than its declared %d bytes", want)
			}
			if out != nil {
				copy(out[n:], ops[:cmd])
			}
			n += int64(cmd)
			ops = ops[cmd:]
		default:
			return 0, errors.New("reserved delta opcode 0")
		}
	}
	if n != want {
		return 0, fmt.Errorf("delta result is %d bytes, it declares %d", n, want)
	}
	return n, nil
}

// mapPack maps the pack of p on first use and checks its header and trailer against the index:
// signature, version 2 or 3, the index's object count, and the checksum the pack is named after.
func (p *packIndex) mapPack() ([]byte, error) {
	if p.pack != nil {
		return p.pack, nil
	}
	data, err := mmapFile(filepath.Join(p.packDir, p.name+".pack"))
	if err != nil {
		return nil, fmt.Errorf("map pack %s: %w", p.name, err)
	}
	var bad string
	switch {
	case len(data) < packHeaderLen+packTrailerLen || string(data[:4]) != "PACK":
		bad = "not a pack file"
	case binary.BigEndian.Uint32(data[4:]) != 2 && binary.BigEndian.Uint32(data[4:]) != 3:
		bad = fmt.Sprintf("pack version %d, want 2 or 3", binary.BigEndian.Uint32(data[4:]))
	case int(binary.BigEndian.Uint32(data[8:])) != p.count:
		bad = fmt.Sprintf("%d objects, its index lists %d", binary.BigEndian.Uint32(data[8:]), p.count)
	case hex.EncodeToString(data[len(data)-packTrailerLen:]) != strings.TrimPrefix(p.name, "pack-"):
		bad = fmt.Sprintf("checksum %x does not match the pack's name", data[len(data)-packTrailerLen:])
	}
	if bad != "" {
		_ = unmap(data)
		return nil, fmt.Errorf("pack %s: %s", p.name, bad)
	}
	p.pack, p.packMapped = data, true
	return data, nil
}
