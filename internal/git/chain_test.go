package git

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// deltaChainStore writes a pack holding one OFS_DELTA chain of depth versions over a text and
// returns its store and the versions, the undeltified base first.
func deltaChainStore(t *testing.T, depth int) (*lazyStore, [][]byte) {
	dir := newGitDir(t)
	p := newTestPack(t)
	prev := sampleText(8<<10, "chain")
	_, prevOff := p.object(plumbing.BlobObject, prev)
	versions := [][]byte{prev}
	for i := range depth {
		next := slices.Concat(prev[:len(prev)/3], fmt.Appendf(nil, "version %d\n", i), prev[len(prev)/3:])
		_, off := p.ofsDelta(plumbing.BlobObject, prevOff, prev, next)
		versions = append(versions, next)
		prev, prevOff = next, off
	}
	p.write(filepath.Join(dir, ".git", "objects", "pack"))
	return openStore(t, dir), versions
}

// TestDeltaChainResultsAreNeverOverwritten reads every object of a 60-deep delta chain, the
// deepest first, keeps every slice the reads returned and checks them all at the end: the
// intermediate results built in reused buffers are never what a read hands out.
func TestDeltaChainResultsAreNeverOverwritten(t *testing.T) {
	t.Parallel()
	s, versions := deltaChainStore(t, 60)
	got := make([][]byte, len(versions))
	for i, v := range slices.Backward(versions) {
		_, data, err := s.readObject(plumbing.ComputeHash(plumbing.BlobObject, v))
		require.NoError(t, err)
		got[i] = data
	}
	s.objects = newObjectCache(0) // nothing cached: every read rebuilds its chain over the others
	for i, v := range versions {
		_, data, err := s.readObject(plumbing.ComputeHash(plumbing.BlobObject, v))
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, data), "version %d read again", i)
	}
	for i, v := range versions {
		require.True(t, bytes.Equal(v, got[i]), "version %d changed after later reads", i)
	}
}

// TestDeltaChainKeepsCheckpoints reads the deepest object of a 60-deep chain, which applies 60
// deltas and caches every checkpointEvery-th result, then each other object: none of those reads
// applies more than checkpointEvery deltas, so reading a whole chain in the worst order is linear
// in its depth, not quadratic.
func TestDeltaChainKeepsCheckpoints(t *testing.T) {
	t.Parallel()
	s, versions := deltaChainStore(t, 60)
	read := func(v []byte) int {
		t.Helper()
		before := s.scratch.applied
		_, data, err := s.readObject(plumbing.ComputeHash(plumbing.BlobObject, v))
		require.NoError(t, err)
		require.True(t, bytes.Equal(v, data))
		return s.scratch.applied - before
	}
	require.Equal(t, 60, read(versions[60]))
	require.Equal(t, 1+60/checkpointEvery+1, len(s.objects.entries), "the base, the checkpoints and the result")
	total := 0
	for i := 59; i >= 0; i-- {
		n := read(versions[i])
		require.LessOrEqual(t, n, checkpointEvery, "version %d", i)
		total += n
	}
	require.Less(t, total, 60*checkpointEvery/2, "the whole chain again costs about one delta a version")
}

// TestApplyDeltaRefusesAHostileSizeBeforeAllocating gives a delta that declares a 512 MiB result
// from a 16-byte base and one inserted byte: it is refused, and less than a megabyte is
// allocated on the way.
func TestApplyDeltaRefusesAHostileSizeBeforeAllocating(t *testing.T) {
	base := []byte("the base object\n")
	delta := rawDelta(len(base), 512<<20, 1, 'x')
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := applyDeltaInto(nil, base, delta)
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "536870912")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}
