package tiers

import (
	"fmt"
	"slices"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// scanAddedLines confirms the stubs on the lines the diff base..head adds (SPEC §5.3 D): every
// added line of every text file, whatever its size, streamed; bookkeeping files are not the work.
// A file git would call binary is not scanned and is counted (stubScanNote); a scan that cannot
// run is an error of the stubs check (sf.err), never a silent zero. The lines are read once a run
// (scanAdded): tier 1's marker scan already read them when test integrity ran.
func scanAddedLines(pass *Pass, add func(stub), sf *stubFacts) {
	res := scanAdded(pass, nil)
	if res.err != nil {
		sf.err = fmt.Sprintf("cannot scan the lines added in %s..%s for stubs: %v", short(pass.base), short(pass.head), res.err)
		sf.errCause = vocab.CauseDetectorError
		if isCorrupt(res.err) {
			sf.errCause = vocab.CauseRepositoryCorrupt
		}
		return
	}
	for _, s := range res.stubs {
		add(s)
	}
	sf.scan = res.scan
}

// addedScan is the one pass over the lines base..head adds: the stubs it confirmed and what it
// read besides.
type addedScan struct {
	stubs []stub
	scan  *git.AddedScan
	err   error
}

// scanAdded reads the lines base..head adds, confirming stubs, and hands each line to also (nil:
// none) on the way: the marker scan of test integrity (SPEC §5.2a.3) and the stub scan (§5.3 D)
// read the same lines, and the diff is most of their cost, so the run keeps the first pass
// (pass.added) and a caller without also reuses it. A later caller with also gets its own pass.
func scanAdded(pass *Pass, also func(git.AddedLine)) *addedScan {
	// Another task's verified work (SPEC §5.3 B) is not scanned for this task's stubs, nor, when
	// an authority approved the rules it passed under, for its markers.
	attributed := pass.attribution()
	if also != nil && len(attributed.files) > 0 {
		all := also
		also = func(l git.AddedLine) {
			if !attributed.attributedCheck(l.Path) {
				all(l)
			}
		}
	}
	if pass.added != nil {
		if also != nil {
			scan, err := pass.repo.ScanAdded(pass.base, pass.head, func(l git.AddedLine) error { also(l); return nil })
			return &addedScan{scan: scan, err: err}
		}
		return pass.added
	}
	lines, files, last, rel, skip := 0, 0, "", "", false
	stubs := policy.NewStubMatcher(pass.in.Policy.StubPatterns) // compiled once for the whole scan
	res := &addedScan{}
	scan, err := pass.repo.ScanAdded(pass.base, pass.head, func(l git.AddedLine) error {
		if also != nil {
			also(l)
		}
		if l.Path != last { // lines come file by file: a file is looked up once
			last = l.Path
			at := pass.placed.paths[l.Path] // placed by tier 0: every added line is in a changed file
			rel = at.rel
			if skip = at.in && at.bookkeeping || attributed.attributed(l.Path); !skip { // the project's own bookkeeping only
				files++
			}
		}
		if skip {
			return nil
		}
		lines++
		if p, ok := stubs.Match(l.Text); ok {
			res.stubs = append(res.stubs, stub{Location: Location{Path: rel, Line: l.Line}, Pattern: p, Text: l.Text})
		}
		return nil
	})
	if err != nil {
		res.err = err
	} else {
		scan.Lines, scan.Files = lines, files // what was scanned for stubs: the work, not the bookkeeping
		if len(attributed.files) > 0 {
			scan.Binary = slices.DeleteFunc(scan.Binary, attributed.attributed)
		}
		res.scan = scan
	}
	return res
}

// stubScanNote is what the stubs check text says about files the scan skipped.
func stubScanNote(scan *git.AddedScan) string {
	if scan == nil || len(scan.Binary) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d binary files not scanned: %s", len(scan.Binary), text.JoinLimited(scan.Binary, 10))
}
