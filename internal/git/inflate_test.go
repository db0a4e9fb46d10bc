//go:build !lib_inflate

package git

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	kzlib "github.com/klauspost/compress/zlib"
	"github.com/stretchr/testify/require"
)

// zlibAt compresses data at a compress/zlib level (flate.HuffmanOnly included).
func zlibAt(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := zlib.NewWriterLevel(&b, level)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// stdInflate is the oracle: compress/zlib's output, error and the bytes of src it read.
func stdInflate(src []byte) ([]byte, int, error) {
	r := bytes.NewReader(src)
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, len(src) - r.Len(), err
	}
	out, err := io.ReadAll(zr)
	return out, len(src) - r.Len(), err
}

// inflateSeeds are streams of every block kind: stored (level 0), fixed and dynamic codes,
// Huffman only, long matches and overlapping copies, empty, large, and the commits and trees a
// pack holds; then damaged and cut copies of some.
func inflateSeeds(t testing.TB) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	commit := []byte("tree 1234567890123456789012345678901234567890\nparent 1234567890123456789012345678901234567890\n" +
		"author A U Thor <a@example.com> 1700000000 +0100\ncommitter C O Mitter <c@example.com> 1700000001 +0100\n\nmessage\n")
	inputs := [][]byte{nil, []byte("a"), []byte("hello, hello, hello, hello"), bytes.Repeat([]byte("ab"), 40000),
		commit, sampleText(20<<10, "text"), random, bytes.Repeat([]byte{0}, 300000)}
	var seeds [][]byte
	for _, in := range inputs {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression, flate.HuffmanOnly} {
			seeds = append(seeds, zlibAt(t, in, level))
		}
	}
	c := zlibAt(t, commit, flate.BestCompression)
	for _, i := range []int{0, 1, 2, 5, len(c) / 2, len(c) - 5, len(c) - 1} {
		bad := bytes.Clone(c)
		bad[i] ^= 0x5a
		seeds = append(seeds, bad, c[:i])
	}
	return seeds
}

// requireInflateMatches checks the inflater against compress/zlib on src: the same bytes or an
// error in exact mode, and in prefix mode a prefix of the same bytes for several output sizes.
func requireInflateMatches(t testing.TB, f *inflater, src []byte) {
	want, wantUsed, werr := stdInflate(src)
	if werr == nil {
		got, how, used, err := f.inflate(src, make([]byte, 0, len(want)), true)
		if err != nil || how != zlibEnded || !bytes.Equal(got, want) || used != wantUsed {
			t.Fatalf("exact: %d bytes, %v, used %d (%v); compress/zlib %d bytes, used %d", len(got), how, used, err, len(want), wantUsed)
		}
		for _, n := range []int{len(want) - 1, len(want) + 1} {
			if n < 0 {
				continue
			}
			if _, _, _, err := f.inflate(src, make([]byte, 0, n), true); err == nil {
				t.Fatalf("exact with room for %d bytes of %d: no error", n, len(want))
			}
		}
	} else {
		for _, n := range []int{len(want), len(want) + 100} {
			if got, _, _, err := f.inflate(src, make([]byte, 0, n), true); err == nil {
				t.Fatalf("exact into %d: %d bytes and no error; compress/zlib: %v", n, len(got), werr)
			}
		}
	}
	for _, n := range []int{0, 1, len(want) / 2, len(want), len(want) + 7} {
		got, how, _, err := f.inflate(src, make([]byte, 0, n), false)
		switch {
		case !bytes.HasPrefix(want, got) && !bytes.HasPrefix(got, want):
			t.Fatalf("prefix of %d: %q is not a prefix of compress/zlib's %q", n, got, want)
		case werr == nil && n < len(want) && (err != nil || how != zlibOutputFull || len(got) != n):
			t.Fatalf("prefix of %d of %d bytes: %d bytes, %v (%v)", n, len(want), len(got), how, err)
		case werr == nil && n >= len(want) && (err != nil || how != zlibEnded || len(got) != len(want)):
			t.Fatalf("prefix of %d of %d bytes: %d bytes, %v (%v)", n, len(want), len(got), how, err)
		case werr != nil && err == nil && how == zlibEnded:
			t.Fatalf("prefix of %d: a whole stream, compress/zlib: %v", n, werr)
		}
	}
}

// TestInflateMatchesCompressZlib runs every seed, and every cut of a few of them, through the
// inflater and compress/zlib.
func TestInflateMatchesCompressZlib(t *testing.T) {
	t.Parallel()
	var f inflater // one inflater for all: its tables are rebuilt for every stream
	for _, s := range inflateSeeds(t) {
		requireInflateMatches(t, &f, s)
	}
	c := zlibAt(t, sampleText(3000, "cut"), flate.DefaultCompression)
	for i := range len(c) {
		requireInflateMatches(t, &f, c[:i])
	}
	rng := rand.New(rand.NewPCG(3, 4)) // single bit flips, mostly in the code definitions
	for range 2000 {
		bad := bytes.Clone(c)
		i := 2 + rng.IntN(min(len(bad)-2, 64))
		if rng.IntN(4) == 0 {
			i = rng.IntN(len(bad))
		}
		bad[i] ^= 1 << rng.IntN(8)
		requireInflateMatches(t, &f, bad)
	}
}

// TestInflateRefuses names what the inflater refuses, each with the error zlib gives it.
func TestInflateRefuses(t *testing.T) {
	t.Parallel()
	good := zlibAt(t, []byte("abc"), flate.DefaultCompression)
	cases := []struct {
		name string
		src  []byte
		want error
	}{
		{"empty", nil, errInputEnd},
		{"not deflate", []byte{0x79, 0x9c}, errZlibHeader},
		{"window over 32 KB", []byte{0x88, 0x98}, errZlibHeader},
		{"header check", []byte{0x78, 0x9d}, errZlibHeader},
		{"preset dictionary", []byte{0x78, 0xbb}, errZlibHeader},
		{"block type 3", []byte{0x78, 0x9c, 0x07}, errFlateCorrupt},
		{"stored length check", []byte{0x78, 0x9c, 0x01, 0x03, 0x00, 0x00, 0x00}, errFlateCorrupt},
		{"distance before the start", []byte{0x78, 0x9c, 0x03, 0x02, 0x00}, errFlateCorrupt},
		{"checksum", append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1), errZlibChecksum},
		{"cut in the checksum", good[:len(good)-2], errInputEnd},
	}
	var f inflater
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := f.inflate(c.src, make([]byte, 0, 3), true) // "abc"
			require.True(t, errors.Is(err, c.want), "%v, want %v", err, c.want)
			_, _, stdErr := stdInflate(c.src)
			require.Error(t, stdErr, "compress/zlib refuses it too")
		})
	}
}

// FuzzInflate checks the inflater against compress/zlib on any input: never a panic, the same
// bytes and the same bytes read when compress/zlib inflates it, an error when it does not.
func FuzzInflate(f *testing.F) {
	for _, s := range inflateSeeds(f) {
		f.Add(s)
	}
	var inf inflater
	f.Fuzz(func(t *testing.T, src []byte) { requireInflateMatches(t, &inf, src) })
}

// BenchmarkInflate inflates a commit-sized, a tree-sized and a blob-sized text with the
// inflater and with github.com/klauspost/compress/zlib (what loose objects and streamed blobs
// use), for the figures in bench/README.md.
func BenchmarkInflate(b *testing.B) {
	for _, size := range []int{200, 1 << 10, 4 << 10, 16 << 10, 1 << 20} {
		data := sampleText(size, "bench")
		src := zlibAt(b, data, flate.DefaultCompression)
		b.Run(fmt.Sprintf("inflater/%d", size), func(b *testing.B) {
			var f inflater
			out := make([]byte, 0, len(data))
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, _, err := f.inflate(src, out, true); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("klauspost/%d", size), func(b *testing.B) {
			out := make([]byte, len(data))
			r := bytes.NewReader(src)
			zr, err := kzlib.NewReader(r)
			require.NoError(b, err)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r.Reset(src)
				if err := zr.(kzlib.Resetter).Reset(r, nil); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(zr, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzInflateDeflated compresses any data at any compress/zlib level, flips the bits flip of one
// byte of the stream, and checks the inflater against compress/zlib on the result: the mutations
// of FuzzInflate rarely reach past a stream's first block, these keep the stream valid until the
// flipped byte.
func FuzzInflateDeflated(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint8(8), uint16(0), uint8(0))
	f.Add(sampleText(5000, "fuzz"), uint8(1), uint16(40), uint8(4))
	f.Add(bytes.Repeat([]byte("ab"), 3000), uint8(11), uint16(7), uint8(0x80))
	f.Add([]byte{}, uint8(2), uint16(1), uint8(1))
	var inf inflater
	f.Fuzz(func(t *testing.T, data []byte, level uint8, at uint16, flip uint8) {
		src := zlibAt(t, data, int(level%12)-2) // HuffmanOnly, DefaultCompression, 0 to 9
		src[int(at)%len(src)] ^= flip
		requireInflateMatches(t, &inf, src)
	})
}
