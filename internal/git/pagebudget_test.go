package git

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPageBudgetEstimate checks the estimate of the pack pages a store has touched: a 64 KB
// window counts once however many reads fall in it in a row, a read across windows counts each,
// another pack's window is another window, and past the budget the estimate starts again.
func TestPageBudgetEstimate(t *testing.T) {
	const w = 1 << pageWindowShift
	s := &lazyStore{pages: pageBudget{limit: 1 << 30}}
	steps := []struct {
		name     string
		pi       int
		off, n   int64
		addsWins int64
	}{
		{"first read", 0, 100, 10, 1},
		{"same window", 0, 200, 10, 0},
		{"an empty read in the same window", 0, 300, 0, 0},
		{"a window far on", 0, 7 * w, 1, 1},
		{"across three windows from the last", 0, 7*w + 5, 2 * w, 2},
		{"another pack, same offset", 1, 9 * w, 1, 1},
		{"back to the first pack", 0, 9 * w, 1, 1},
		{"the window before", 0, 8*w + w - 1, 1, 1},
	}
	want := int64(0)
	for _, st := range steps {
		s.touch(st.pi, st.off, st.n)
		want += st.addsWins * w
		require.Equal(t, want, s.pages.touched, st.name)
	}
	assert.Zero(t, s.pages.releases)

	s.pages = pageBudget{limit: 2 * w}
	s.touch(0, 0, 1)
	s.touch(0, 2*w, 1)
	assert.Zero(t, s.pages.releases, "at the budget, not past it")
	s.touch(0, 4*w, 1)
	assert.Equal(t, 1, s.pages.releases, "past the budget")
	assert.Zero(t, s.pages.touched)
	s.touch(0, 4*w+1, 1)
	assert.Equal(t, int64(w), s.pages.touched, "after a release the window counts again")
}

// TestReadObjectWithPagesReleased reads every object of a repository (deep delta chains) once
// with the packs' pages released before nearly every read and once without: the same bytes, and
// the releases happened.
func TestReadObjectWithPagesReleased(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	fastImport(t, r, 0, 60)
	r.git("repack", "-a", "-d", "-f", "-q", "--depth=1000", "--window=50")
	plain, released := r.open().store, r.open().store
	released.pages.limit = 1
	require.Len(t, plain.packs, 1)
	var ids []plumbing.Hash
	ids = plain.packs[0].appendPrefix(ids, nil)
	require.Greater(t, len(ids), 100)
	for pass := range 2 { // the second pass reads delta bases from the cache
		for _, h := range ids {
			wantTyp, want, err := plain.readObject(h)
			require.NoError(t, err)
			typ, got, err := released.readObject(h)
			require.NoError(t, err, "pass %d, %s", pass, h)
			require.Equal(t, wantTyp, typ, "%s", h)
			require.True(t, bytes.Equal(want, got), "content of %s", h)
			if typ == plumbing.CommitObject {
				wantC, err := plain.readCommitHeader(h)
				require.NoError(t, err)
				gotC, err := released.readCommitHeader(h)
				require.NoError(t, err)
				require.Equal(t, wantC, gotC, "header of %s", h)
			}
		}
	}
	assert.Greater(t, released.pages.releases, len(ids)/2, "released before nearly every read")
	assert.Zero(t, plain.pages.releases, "a small repository stays under the budget")
}

// TestPagesOfAPackGivenAsBytesAreNeverReleased: only a pack mapped from its file has its pages
// released; a pack that is Go memory (as tests and fuzzers give it) is left alone, since
// MADV_DONTNEED would zero it. A store without a budget never releases.
func TestPagesOfAPackGivenAsBytesAreNeverReleased(t *testing.T) {
	data := bytes.Repeat([]byte("pack bytes "), 1<<17) // 1.4 MB: many whole pages
	want := bytes.Clone(data)
	s := &lazyStore{packs: []*packIndex{{pack: data}}, pages: pageBudget{limit: 1}}
	s.touch(0, 0, int64(len(data)))
	assert.Equal(t, 1, s.pages.releases, "past the budget")
	assert.True(t, bytes.Equal(want, data), "the bytes are intact")

	unbudgeted := &lazyStore{packs: []*packIndex{{pack: data}}}
	unbudgeted.touch(0, 0, int64(len(data)))
	assert.Zero(t, unbudgeted.pages.releases)
}
