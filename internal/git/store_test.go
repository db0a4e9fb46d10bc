package git

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLazyStoreReadsEveryObject builds a repository whose objects are spread over three packs
// (one with a .rev file, one without) and loose files, and reads every object git lists through
// the lazy store: same type, same size, same id recomputed from the content.
func TestLazyStoreReadsEveryObject(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	// round imports six commits in one fast-import; unpackLimit decides between loose objects
	// (more objects than that) and a new pack (0).
	round := func(n, unpackLimit int) {
		var stream strings.Builder
		for i := range 6 {
			fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter F <f@example.com> %d +0000\ndata <<EOT\nround %d commit %d\nEOT\n",
				fixtureEpoch+100*n+i, n, i)
			if n > 1 && i == 0 {
				stream.WriteString("from refs/heads/main^0\n")
			}
			fmt.Fprintf(&stream, "M 100644 inline d%d/f%d.txt\ndata <<EOT\n%sEOT\n\n", i%3, i,
				strings.Repeat(fmt.Sprintf("round %d file %d\n", n, i), 50+n))
		}
		if n == 4 {
			stream.WriteString("tag v1\nfrom refs/heads/main\ntagger F <f@example.com> 1700000000 +0000\ndata <<EOT\nv1\nEOT\n\n")
		}
		out, err := r.cmd("", []byte(stream.String()), "-c", "fastimport.unpackLimit="+strconv.Itoa(unpackLimit),
			"fast-import", "--quiet").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	round(1, 1000)
	r.git("-c", "pack.writeReverseIndex=true", "repack", "-d", "-q") // pack 1, with a .rev
	round(2, 0)                                                      // pack 2
	round(3, 0)                                                      // pack 3
	round(4, 1000)                                                   // loose

	packs, err := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.idx"))
	require.NoError(t, err)
	require.Len(t, packs, 3)
	revs, err := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.rev"))
	require.NoError(t, err)
	require.Len(t, revs, 1, "one pack has a reverse index")

	repo := r.open()
	store := repo.store
	require.Len(t, store.packs, 3)
	loose := 0
	for line := range strings.Lines(r.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(objectsize) %(deltabase)")) {
		f := strings.Fields(line)
		h := plumbing.NewHash(f[0])
		obj, err := store.EncodedObject(plumbing.AnyObject, h)
		require.NoError(t, err, f[0])
		assert.Equal(t, f[1], obj.Type().String(), f[0])
		size, _ := strconv.ParseInt(f[2], 10, 64)
		assert.Equal(t, size, obj.Size(), f[0])
		rd, err := obj.Reader()
		require.NoError(t, err)
		content := make([]byte, 0, size)
		buf := make([]byte, 4096)
		for {
			n, err := rd.Read(buf)
			content = append(content, buf[:n]...)
			if err != nil {
				break
			}
		}
		require.NoError(t, rd.Close())
		assert.Equal(t, h, plumbing.ComputeHash(obj.Type(), content), "content of %s", f[0])
		require.NoError(t, store.HasEncodedObject(h))
		hx := f[0]
		if _, err := os.Stat(filepath.Join(r.dir, ".git", "objects", hx[:2], hx[2:])); err == nil {
			loose++
		}
	}
	assert.Positive(t, loose, "some objects are loose")

	t.Run("missing object", func(t *testing.T) {
		missing := plumbing.NewHash(strings.Repeat("ab", 20))
		_, err := store.EncodedObject(plumbing.AnyObject, missing)
		assert.ErrorIs(t, err, plumbing.ErrObjectNotFound)
		assert.ErrorIs(t, store.HasEncodedObject(missing), plumbing.ErrObjectNotFound)
		_, err = repo.Resolve(missing.String())
		assert.ErrorContains(t, err, "unknown revision")
	})

	t.Run("wrong type", func(t *testing.T) {
		head := plumbing.NewHash(r.git("rev-parse", "HEAD"))
		_, err := store.EncodedObject(plumbing.TreeObject, head)
		assert.ErrorIs(t, err, plumbing.ErrObjectNotFound)
	})

	t.Run("prefixes across packs and loose objects", func(t *testing.T) {
		all := strings.Fields(r.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
		for _, sha := range all[:min(len(all), 40)] {
			for _, n := range []int{1, 2} {
				prefix := sha[:2*n]
				var want []plumbing.Hash
				for _, other := range all {
					if strings.HasPrefix(other, prefix) {
						want = append(want, plumbing.NewHash(other))
					}
				}
				full := plumbing.NewHash(sha)
				got, err := store.HashesWithPrefix(full[:n])
				require.NoError(t, err)
				assert.ElementsMatch(t, want, got, prefix)
			}
		}
	})
}

// TestLazyStoreRefusesACorruptIndex checks that a damaged pack index is an error at open, not a
// wrong answer later.
func TestLazyStoreRefusesACorruptIndex(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("a.txt", "a\n")
	r.commit("a")
	r.git("repack", "-a", "-d", "-q")
	idx, err := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.idx"))
	require.NoError(t, err)
	require.Len(t, idx, 1)
	data, err := os.ReadFile(idx[0])
	require.NoError(t, err)
	require.NoError(t, os.Chmod(idx[0], 0o644))
	require.NoError(t, os.WriteFile(idx[0], data[:len(data)/2], 0o644))
	_, err = Open(r.dir)
	assert.ErrorContains(t, err, "pack index")
}

// TestPackIndexFind looks up, in an index of ids that share first bytes and whole 8-byte
// prefixes, every id and every neighbour of one that is not there.
func TestPackIndexFind(t *testing.T) {
	id := func(first8 uint64, rest byte) plumbing.Hash {
		var h plumbing.Hash
		binary.BigEndian.PutUint64(h[:], first8)
		h[12], h[19] = rest, rest
		return h
	}
	var ids []plumbing.Hash
	for _, p := range []uint64{0, 1, 1 << 56, 1<<56 | 1, 1<<56 | 1<<8, 0xff << 56, ^uint64(0)} {
		for _, rest := range []byte{2, 4, 0xfe} {
			ids = append(ids, id(p, rest))
		}
	}
	slices.SortFunc(ids, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	p := &packIndex{fanout: make([]byte, idxFanoutLen), count: len(ids)}
	for _, h := range ids {
		p.names = append(p.names, h[:]...)
		for b := int(h[0]); b < 256; b++ {
			binary.BigEndian.PutUint32(p.fanout[4*b:], binary.BigEndian.Uint32(p.fanout[4*b:])+1)
		}
	}
	for i, h := range ids {
		pos, ok := p.find(h)
		require.True(t, ok, "%s", h)
		require.Equal(t, i, pos, "%s", h)
		for _, miss := range []byte{1, 3, 5, 0xff} {
			m := h
			m[12], m[19] = miss, miss
			_, ok := p.find(m)
			require.False(t, ok, "%s is not in the index", m)
		}
	}
	_, ok := p.find(id(2, 2))
	assert.False(t, ok)
}
