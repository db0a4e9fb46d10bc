package git

// The packs are mapped whole and read in place, so every page a run reads stays in its resident
// set until the pack is unmapped: a walk over 75,000 commits of git/git left 40 MB of pack pages
// resident. git bounds its mapped windows instead (core.packedGitLimit). Here the store estimates
// the pack pages it has touched since the last release and, past packPageBudget, tells the
// kernel it no longer needs any of the packs' pages (madvise MADV_DONTNEED where there is one,
// pagerelease_*.go): the mappings are file-backed and read-only, so nothing is lost, and a page
// read again comes back from the page cache. A walk reads the commits in pack order, nearly
// sequentially, so few come back.

// packPageBudget is how many bytes of pack pages a store lets become resident between releases.
const packPageBudget = 8 << 20

// pageWindowShift sizes the unit of the estimate, 64 KB: the kernel maps the pages around a
// faulting one (Linux's fault-around is 64 KB), so one read far from the last costs that much.
const pageWindowShift = 16

// pageBudget estimates the pack pages touched since the last release.
type pageBudget struct {
	limit    int64 // bytes; packPageBudget unless a test lowers it; 0: never released
	touched  int64 // estimated bytes of pack pages made resident since the last release
	last     int64 // the last window touched, +1 (0: none), in the pack lastPack
	lastPack int
	releases int // how many times the packs' pages were released (read by tests)
}

// touch records that n bytes from offset off of pack pi were read, and releases the packs' pages
// when the estimate passes the budget. The windows of the read count once each, but the one the
// previous read ended in.
func (s *lazyStore) touch(pi int, off, n int64) {
	b := &s.pages
	first, last := off>>pageWindowShift, (off+max(n, 1)-1)>>pageWindowShift
	windows := last - first + 1
	if b.last == first+1 && b.lastPack == pi {
		windows--
	}
	b.last, b.lastPack = last+1, pi
	b.touched += windows << pageWindowShift
	if b.limit <= 0 || b.touched <= b.limit {
		return // a store without a budget (a zero pageBudget) never releases
	}
	for _, p := range s.packs {
		if p.packMapped {
			releasePages(p.pack)
		}
	}
	b.touched, b.last = 0, 0
	b.releases++
}
