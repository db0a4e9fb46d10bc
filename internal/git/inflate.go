//go:build !lib_inflate

package git

import (
	"encoding/binary"
	"errors"
	"hash/adler32"
	"math/bits"
	"slices"
)

// A zlib inflater for the pack's objects, whose compressed bytes are all in memory (the mapped
// pack) and whose inflated size the entry header gives. The general decoders (compress/zlib, and
// github.com/klauspost/compress, which streams for the loose objects and large blobs) read through
// an io.Reader into a 32 KB window and rebuild full-size Huffman tables for every stream; a commit
// walk inflates thousands of 200-byte streams, and the table build was 40 % of it. This one reads
// the input slice directly, writes straight into the result (back references copy within it),
// and sizes each table to the longest code in use (a commit's dynamic codes are rarely over 9
// bits). It refuses exactly what zlib refuses (RFC 1950/1951: a bad header, a preset dictionary,
// over-subscribed or incomplete codes but a single one-bit code, a distance before the start, a
// bad stored length, a bad checksum); TestInflateMatchesCompressZlib, FuzzInflate and
// FuzzInflateDeflated check it against compress/zlib.
//
// It mirrors compress/zlib, and pays for itself on the walks: against the build with -tags
// lib_inflate (inflate_lib.go: klauspost/compress's zlib reader, reset for each stream;
// bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2 shared cores), median CPU time of a whole
// gate run library/twin 1.20 on the unmerged task and 1.10 on far (quartiles 1.10-1.26, 1.07-1.15;
// 1.16 and 1.10 in a second series), 1.01 on near, all without a commit-graph; with one, whose walk
// reads few commits, 1.07 on far and 1.00 on unmerged.

var (
	errZlibHeader   = errors.New("zlib: invalid header")
	errZlibChecksum = errors.New("zlib: invalid checksum")
	errFlateCorrupt = errors.New("flate: corrupt input")
	errInputEnd     = errors.New("unexpected end of the compressed stream")
	errOutputFull   = errors.New("more output than the declared size")
)

// huffTableMaxBits is the largest first-level table: codes longer than that are decoded through a
// second-level table of 1<<(longest-huffTableMaxBits) entries.
const huffTableMaxBits = 10

// huffTable decodes one Huffman code. An entry is the symbol<<4 | code length, 0 for a bit
// pattern no code has, or linkFlag | the offset of a second-level table in links.
type huffTable struct {
	bits     uint // bits the first level is indexed by
	root     [1 << huffTableMaxBits]uint32
	links    []uint32
	linkBits uint // bits the second level is indexed by
}

const linkFlag = 1 << 31

// build makes the canonical code of RFC 1951 §3.2.2 for the code lengths given by symbol. It
// refuses an over-subscribed code and an incomplete one, but for the degenerate code of a single
// one-bit code that zlib and compress/flate accept; a code of no lengths at all builds a table
// every read of which fails, as in compress/flate.
func (t *huffTable) build(lengths []uint8) error {
	var count [16]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	longest := uint(0)
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return errFlateCorrupt // over-subscribed
		}
		if count[l] > 0 {
			longest = uint(l)
		}
	}
	if left > 0 && longest != 1 && longest != 0 {
		return errFlateCorrupt // incomplete
	}
	t.bits = min(max(longest, 1), huffTableMaxBits)
	clear(t.root[:1<<t.bits])
	t.links = t.links[:0]
	t.linkBits = 0
	if longest > huffTableMaxBits {
		t.linkBits = longest - huffTableMaxBits
	}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		rev := uint32(bits.Reverse16(uint16(next[l]))) >> (16 - uint(l))
		next[l]++
		entry := uint32(sym)<<4 | uint32(l)
		if uint(l) <= t.bits {
			for k := rev; k < 1<<t.bits; k += 1 << l {
				t.root[k] = entry
			}
			continue
		}
		slot := rev & (1<<t.bits - 1)
		if t.root[slot]&linkFlag == 0 {
			n := len(t.links)
			t.root[slot] = linkFlag | uint32(n)
			t.links = slices.Grow(t.links, 1<<t.linkBits)[:n+1<<t.linkBits]
			clear(t.links[n:])
		}
		sub := t.links[t.root[slot]&^linkFlag:]
		for k := rev >> t.bits; k < 1<<t.linkBits; k += 1 << (uint(l) - t.bits) {
			sub[k] = entry
		}
	}
	return nil
}

// bitReader reads deflate's bits, least significant first, from an in-memory stream.
type bitReader struct {
	src   []byte
	pos   int // next byte of src to load
	bits  uint64
	nbits uint
}

// refill loads whole bytes until at least 56 bits are held or the input is used up.
func (b *bitReader) refill() {
	if b.pos+8 <= len(b.src) {
		b.bits |= binary.LittleEndian.Uint64(b.src[b.pos:]) << b.nbits
		b.pos += int(63-b.nbits) >> 3
		b.nbits |= 56
		return
	}
	for b.nbits <= 56 && b.pos < len(b.src) {
		b.bits |= uint64(b.src[b.pos]) << b.nbits
		b.pos++
		b.nbits += 8
	}
}

// take returns the next n bits (n <= 32), refilling as needed.
func (b *bitReader) take(n uint) (uint32, error) {
	if b.nbits < n {
		b.refill()
		if b.nbits < n {
			return 0, errInputEnd
		}
	}
	v := uint32(b.bits & (1<<n - 1))
	b.bits >>= n
	b.nbits -= n
	return v, nil
}

// decode reads one symbol of t. The caller has refilled: at least 56 bits are held unless the
// input ends first.
func (b *bitReader) decode(t *huffTable) (uint32, error) {
	e := t.root[b.bits&(1<<t.bits-1)]
	if e&linkFlag != 0 {
		e = t.links[e&^linkFlag+uint32(b.bits>>t.bits)&(1<<t.linkBits-1)]
	}
	n := uint(e & 15)
	if n == 0 {
		if b.nbits < 15 && b.pos == len(b.src) {
			return 0, errInputEnd // the pattern may be a code cut short
		}
		return 0, errFlateCorrupt
	}
	if n > b.nbits {
		return 0, errInputEnd
	}
	b.bits >>= n
	b.nbits -= n
	return e >> 4, nil
}

// used returns how many bytes of src have been consumed: those loaded minus whole bytes still
// held.
func (b *bitReader) used() int { return b.pos - int(b.nbits/8) }

// alignToByte drops the bits left of the current byte.
func (b *bitReader) alignToByte() {
	b.bits >>= b.nbits % 8
	b.nbits -= b.nbits % 8
}

// inflater holds the tables of one inflate at a time; reuse it. Not safe for concurrent use.
type inflater struct {
	lit, dist huffTable
	codes     huffTable
	lengths   [286 + 32]uint8
	fixed     *[2]huffTable // the fixed code's tables, built on first use
}

// zlibResult says how an inflate ended.
type zlibResult int

const (
	zlibEnded      zlibResult = iota // the stream ended and its checksum matched
	zlibOutputFull                   // out is full and the stream goes on (a prefix read)
)

// inflate decodes the zlib stream at the start of src into out[:cap(out)]. With exact, the
// stream must end, checksum and all, exactly when out is full: the result is out[:cap(out)]
// and zlibEnded, or an error. Without it (a prefix read), it stops when out is full
// (zlibOutputFull) or the stream ends (zlibEnded), and errInputEnd when src ends first, with what
// was inflated until then. used is how many bytes of src were read.
func (f *inflater) inflate(src, out []byte, exact bool) (res []byte, how zlibResult, used int, err error) {
	if len(src) < 2 {
		return out[:0], 0, 0, errInputEnd
	}
	cmf, flg := src[0], src[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0 || flg&0x20 != 0 {
		return out[:0], 0, 0, errZlibHeader
	}
	b := bitReader{src: src, pos: 2}
	out, full, err := f.blocks(&b, out[:0], exact)
	if err != nil || full {
		return out, zlibOutputFull, b.used(), err
	}
	if exact && len(out) != cap(out) {
		return out, 0, b.used(), errInputEnd
	}
	b.alignToByte()
	var sum uint32
	for range 4 {
		v, err := b.take(8)
		if err != nil {
			return out, 0, b.used(), err
		}
		sum = sum<<8 | v
	}
	if adler32.Checksum(out) != sum {
		return out, 0, b.used(), errZlibChecksum
	}
	return out, zlibEnded, b.used(), nil
}

// blocks decodes deflate blocks into out until the final one ends, or, without exact, until out
// is full (full true).
func (f *inflater) blocks(b *bitReader, out []byte, exact bool) (_ []byte, full bool, err error) {
	for final := false; !final; {
		hdr, err := b.take(3)
		if err != nil {
			return out, false, err
		}
		final = hdr&1 == 1
		switch hdr >> 1 {
		case 0:
			out, full, err = f.stored(b, out, exact)
		case 1:
			t := f.fixedTables()
			out, full, err = f.huffmanBlock(b, out, &t[0], &t[1], exact)
		case 2:
			if err = f.dynamicTables(b); err == nil {
				out, full, err = f.huffmanBlock(b, out, &f.lit, &f.dist, exact)
			}
		default:
			err = errFlateCorrupt
		}
		if err != nil || full {
			return out, full, err
		}
	}
	return out, false, nil
}

// stored copies a stored block.
func (f *inflater) stored(b *bitReader, out []byte, exact bool) ([]byte, bool, error) {
	b.alignToByte()
	n, err := b.take(16)
	if err != nil {
		return out, false, err
	}
	nn, err := b.take(16)
	if err != nil {
		return out, false, err
	}
	if uint16(n) != ^uint16(nn) {
		return out, false, errFlateCorrupt
	}
	for ; n > 0 && b.nbits >= 8; n-- { // bytes already loaded
		v, _ := b.take(8)
		if len(out) == cap(out) {
			return f.overflow(out, exact)
		}
		out = append(out, byte(v))
	}
	b.pos -= int(b.nbits / 8) // nbits is 0 unless the block ended inside the loaded bytes
	b.bits, b.nbits = 0, 0
	room := cap(out) - len(out)
	k := min(int(n), len(b.src)-b.pos, room)
	out = append(out, b.src[b.pos:b.pos+k]...)
	b.pos += k
	switch {
	case k == int(n):
		return out, false, nil
	case k == room:
		return f.overflow(out, exact)
	}
	return out, false, errInputEnd
}

// overflow is what a block that has more output than out holds returns.
func (f *inflater) overflow(out []byte, exact bool) ([]byte, bool, error) {
	if exact {
		return out, false, errOutputFull
	}
	return out, true, nil
}

// fixedTables returns the tables of the fixed code (RFC 1951 §3.2.6).
func (f *inflater) fixedTables() *[2]huffTable {
	if f.fixed == nil {
		f.fixed = new([2]huffTable)
		var l [288]uint8
		for i := range l {
			switch {
			case i < 144:
				l[i] = 8
			case i < 256:
				l[i] = 9
			case i < 280:
				l[i] = 7
			default:
				l[i] = 8
			}
		}
		_ = f.fixed[0].build(l[:])
		var d [32]uint8 // 30 and 31 have codes, and are refused when read
		for i := range d {
			d[i] = 5
		}
		_ = f.fixed[1].build(d[:])
	}
	return f.fixed
}

// codeOrder is the order of the code length code's lengths (RFC 1951 §3.2.7).
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicTables reads a dynamic block's code definitions into f.lit and f.dist.
func (f *inflater) dynamicTables(b *bitReader) error {
	h, err := b.take(14)
	if err != nil {
		return err
	}
	nlit, ndist, nclen := int(h&0x1f)+257, int(h>>5&0x1f)+1, int(h>>10)+4
	if nlit > 286 || ndist > 30 {
		return errFlateCorrupt
	}
	var cl [19]uint8
	for i := range nclen {
		v, err := b.take(3)
		if err != nil {
			return err
		}
		cl[codeOrder[i]] = uint8(v)
	}
	if err := f.codes.build(cl[:]); err != nil {
		return err
	}
	lengths := f.lengths[:nlit+ndist]
	for i := 0; i < len(lengths); {
		b.refill()
		sym, err := b.decode(&f.codes)
		if err != nil {
			return err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		var rep uint32
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return errFlateCorrupt
			}
			val = lengths[i-1]
			rep, err = b.take(2)
			rep += 3
		case 17:
			rep, err = b.take(3)
			rep += 3
		default:
			rep, err = b.take(7)
			rep += 11
		}
		if err != nil {
			return err
		}
		if i+int(rep) > len(lengths) {
			return errFlateCorrupt
		}
		for range rep {
			lengths[i] = val
			i++
		}
	}
	if lengths[256] == 0 {
		return errFlateCorrupt // no end-of-block code
	}
	if err := f.lit.build(lengths[:nlit]); err != nil {
		return err
	}
	return f.dist.build(lengths[nlit:])
}

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// huffmanBlock decodes the symbols of a block with the tables lit and dist until its end.
func (f *inflater) huffmanBlock(b *bitReader, out []byte, lit, dist *huffTable, exact bool) ([]byte, bool, error) {
	for {
		out = fastSymbols(b, out, lit, dist)
		b.refill()
		sym, err := b.decode(lit)
		if err != nil {
			return out, false, err
		}
		switch {
		case sym < 256:
			if len(out) == cap(out) {
				return f.overflow(out, exact)
			}
			out = append(out, byte(sym))
			continue
		case sym == 256:
			return out, false, nil
		case sym > 285:
			return out, false, errFlateCorrupt
		}
		sym -= 257
		extra, err := b.take(uint(lengthExtra[sym]))
		if err != nil {
			return out, false, err
		}
		length := int(lengthBase[sym]) + int(extra)
		if b.nbits < 15 {
			b.refill()
		}
		dsym, err := b.decode(dist)
		if err != nil {
			return out, false, err
		}
		if dsym > 29 {
			return out, false, errFlateCorrupt
		}
		dextra, err := b.take(uint(distExtra[dsym]))
		if err != nil {
			return out, false, err
		}
		d := int(distBase[dsym] + dextra)
		if d > len(out) {
			return out, false, errFlateCorrupt
		}
		if room := cap(out) - len(out); length > room {
			out = copyBack(out, d, room)
			return f.overflow(out, exact)
		}
		out = copyBack(out, d, length)
	}
}

// fastSymbols decodes the symbols of a block while at least 8 bytes of input are left to load,
// with the bit buffer in local variables, and returns at the first symbol it does not handle
// (a code through a second-level table, the end of the block, anything invalid, output that
// would not fit) without consuming it, so that huffmanBlock's general path decides. A symbol and
// its extra bits, a distance and its extra bits are at most 48 bits, and every refill here leaves
// at least 56.
func fastSymbols(b *bitReader, out []byte, lit, dist *huffTable) []byte {
	bits, nbits, pos, src := b.bits, b.nbits, b.pos, b.src
	litMask, distMask := uint64(1)<<lit.bits-1, uint64(1)<<dist.bits-1
	for pos+8 <= len(src) {
		bits |= binary.LittleEndian.Uint64(src[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56
		e := lit.root[bits&litMask]
		n := uint(e & 15)
		if e&linkFlag != 0 || n == 0 {
			break
		}
		sym := e >> 4
		if sym < 256 {
			if len(out) == cap(out) {
				break
			}
			bits >>= n
			nbits -= n
			out = append(out, byte(sym))
			continue
		}
		if sym == 256 || sym > 285 {
			break
		}
		ext := uint(lengthExtra[sym-257])
		length := int(lengthBase[sym-257]) + int(bits>>n&(1<<ext-1))
		de := dist.root[bits>>(n+ext)&distMask]
		dn := uint(de & 15)
		if de&linkFlag != 0 || dn == 0 || de>>4 > 29 {
			break
		}
		dext := uint(distExtra[de>>4])
		d := int(distBase[de>>4]) + int(bits>>(n+ext+dn)&(1<<dext-1))
		if d > len(out) || length > cap(out)-len(out) {
			break
		}
		used := n + ext + dn + dext
		bits >>= used
		nbits -= used
		out = copyBack(out, d, length)
	}
	b.bits, b.nbits, b.pos = bits, nbits, pos
	return out
}

// copyBack appends n bytes copied from d bytes back in out, overlapping as deflate means it.
func copyBack(out []byte, d, n int) []byte {
	start := len(out)
	out = out[:start+n]
	for n > 0 {
		k := copy(out[start:start+n], out[start-d:start])
		start += k
		n -= k
	}
	return out
}
