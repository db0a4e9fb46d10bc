package tiers

import (
	"fmt"
	"strings"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/vocab"
)

// scanAddedLines confirms the stubs on the lines the diff base..head adds (SPEC §5.3 D): every
// added line of every text file, whatever its size, streamed; bookkeeping files are not the work.
// A file git would call binary is not scanned and is counted (stubScanNote); a scan that cannot
// run is an error of the stubs check, never a silent zero.
func (r *run) scanAddedLines(add func(stub)) {
	prefix := r.projectPrefix()
	lines, files, last := 0, 0, ""
	stubs := newStubMatcher(r.in.Policy.StubPatterns) // compiled once for the whole scan
	scan, err := r.repo.ScanAdded(r.base, r.head, func(l git.AddedLine) error {
		if strings.HasPrefix(l.Path, prefix) && isBookkeeping(strings.TrimPrefix(l.Path, prefix)) {
			return nil
		}
		if l.Path != last {
			files, last = files+1, l.Path
		}
		lines++
		if p, ok := stubs.match(l.Text); ok {
			add(stub{Location: Location{Path: strings.TrimPrefix(l.Path, prefix), Line: l.Line}, Pattern: p, Text: l.Text})
		}
		return nil
	})
	if err != nil {
		r.stubErr = fmt.Sprintf("cannot scan the lines added in %s..%s for stubs: %v", short(r.base), short(r.head), err)
		r.stubErrCause = vocab.CauseDetectorError
		if isCorrupt(err) {
			r.stubErrCause = vocab.CauseRepositoryCorrupt
		}
		return
	}
	scan.Lines, scan.Files = lines, files // what was scanned for stubs: the work, not the bookkeeping
	r.stubScan = scan
}

// stubScanNote is what the stubs check text says about files the scan skipped.
func (r *run) stubScanNote() string {
	if r.stubScan == nil || len(r.stubScan.Binary) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d binary files not scanned: %s", len(r.stubScan.Binary), joinLimited(r.stubScan.Binary, 10))
}
