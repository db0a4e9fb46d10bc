package git

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// indexOf builds the fanout and sorted name table of ids, as a .idx holds them.
func indexOf(ids []plumbing.Hash) *packIndex {
	slices.SortFunc(ids, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	ids = slices.Compact(ids)
	p := &packIndex{fanout: make([]byte, 256*4), count: len(ids)}
	for _, id := range ids {
		p.names = append(p.names, id[:]...)
	}
	for b := range 256 {
		n, _ := slices.BinarySearchFunc(ids, byte(b), func(id plumbing.Hash, b byte) int {
			if id[0] <= b {
				return -1
			}
			return 1
		})
		binary.BigEndian.PutUint32(p.fanout[4*b:], uint32(n))
	}
	return p
}

// TestPackIndexFindsEveryIDHoweverSpread looks up every id, and ids next to each that are not
// there, in indexes whose ids are spread as a real pack's (uniformly), bunched in one first byte,
// sharing their first eight bytes (where the guess cannot narrow at all), spread exponentially
// (where it guesses far off), and at the ends of the key space: find answers as a plain binary
// search does in every case.
func TestPackIndexFindsEveryIDHoweverSpread(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	random := func() (h plumbing.Hash) {
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		return h
	}
	spreads := map[string]func(i int) plumbing.Hash{
		"uniform": func(int) plumbing.Hash { return random() },
		"one first byte": func(int) plumbing.Hash {
			h := random()
			h[0] = 0x42
			return h
		},
		"one 8-byte prefix": func(int) plumbing.Hash {
			h := random()
			copy(h[:8], "\x42\x42\x42\x42\x42\x42\x42\x42")
			return h
		},
		"exponential": func(i int) plumbing.Hash {
			h := random()
			h[0] = 0x42
			binary.BigEndian.PutUint64(h[1:], uint64(1)<<(i%56)|uint64(i))
			return h
		},
		"ends": func(i int) plumbing.Hash {
			h := random()
			h[0] = 0x42
			if i%2 == 0 {
				copy(h[1:8], "\x00\x00\x00\x00\x00\x00\x00")
			} else {
				copy(h[1:8], "\xff\xff\xff\xff\xff\xff\xff")
			}
			return h
		},
	}
	for name, spread := range spreads {
		t.Run(name, func(t *testing.T) {
			var ids []plumbing.Hash
			for i := range 5000 {
				ids = append(ids, spread(i))
			}
			p := indexOf(ids)
			for i := range p.count {
				id := plumbing.Hash(p.names[20*i : 20*i+20])
				pos, ok := p.find(id)
				require.True(t, ok, "id %d", i)
				require.Equal(t, i, pos)
				for _, d := range []int{-1, 1} { // the id with its last byte one off, when absent
					near := id
					near[19] += byte(d)
					_, want := slices.BinarySearchFunc(ids, near, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
					_, got := p.find(near)
					require.Equal(t, want, got, "near id %d", i)
				}
			}
		})
	}
}
