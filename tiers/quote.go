package tiers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// Bounds of what a run's checks quote (SPEC §7.1): what agents write reaches the result through
// the checks' text and evidence, and through checks they can multiply (one per criterion result,
// known risk, risk handling, evidence file, judgment…). Nothing they write may make a result so
// large that the record refuses it (result_too_large) and a fail becomes a free error. So each
// check quotes at most maxCheckTextBytes of text and maxCheckEvidenceBytes of evidence, and at
// most maxCheckLocations locations; and the checks of one kind (their name up to the first ':')
// are reported one by one up to maxChecksPerFamily checks or maxFamilyBytes bytes, the rest
// summed in one check of that kind that holds the gate as the worst of them would.
const (
	maxCheckTextBytes     = 2 << 10
	maxCheckEvidenceBytes = 8 << 10
	maxCheckLocations     = 100
	maxChecksPerFamily    = 50
	maxFamilyBytes        = 32 << 10
	// maxSummedNamed is how many checks a summed check names.
	maxSummedNamed = 10
)

// cutText returns s cut to at most n bytes (at a UTF-8 boundary), saying how much was left out.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const tail = " … (%d more bytes not shown)"
	kept := text.Cut(s, n-len(tail)-8)
	return kept + fmt.Sprintf(tail, len(s)-len(kept))
}

// boundCheck cuts what one check quotes to the bounds.
func boundCheck(c Check) Check {
	c.Name = cutText(c.Name, maxCheckTextBytes/4)
	c.Text = cutText(c.Text, maxCheckTextBytes)
	c.Evidence = cutText(c.Evidence, maxCheckEvidenceBytes)
	if len(c.Locations) > maxCheckLocations {
		c.Locations = c.Locations[:maxCheckLocations:maxCheckLocations]
	}
	for i, l := range c.Locations {
		if len(l.Path) > maxCheckTextBytes/4 {
			if i == 0 {
				c.Locations = append([]Location(nil), c.Locations...)
			}
			c.Locations[i].Path = cutText(l.Path, maxCheckTextBytes/4)
		}
	}
	return c
}

// checkSize is how many bytes c quotes.
func checkSize(c Check) int {
	n := len(c.Name) + len(c.Text) + len(c.Evidence)
	for _, l := range c.Locations {
		n += len(l.Path) + 8
	}
	return n
}

// checkFamily is the kind of check c is: its name up to the first ':' (criterion:AC1 is a
// criterion), advisory checks apart from binding ones.
func checkFamily(c Check) string {
	kind, _, _ := strings.Cut(c.Name, ":")
	if c.Advisory {
		return "advisory " + kind
	}
	return kind
}

// boundChecks applies the bounds to a run's checks, in their order: each check cut, and the
// checks of a kind past its bound summed in one check at the place of the first of them.
func boundChecks(checks []Check) []Check {
	type family struct {
		shown, bytes int
		at           int // index in out of the summed check, -1 while none
		sum          *summed
	}
	families := map[string]*family{}
	out := make([]Check, 0, min(len(checks), 1024))
	for _, c := range checks {
		c = boundCheck(c)
		key := checkFamily(c)
		f := families[key]
		if f == nil {
			f = &family{at: -1}
			families[key] = f
		}
		size := checkSize(c)
		if f.sum == nil && f.shown < maxChecksPerFamily && f.bytes+size <= maxFamilyBytes {
			f.shown++
			f.bytes += size
			out = append(out, c)
			continue
		}
		if f.sum == nil {
			f.sum = &summed{kind: key, shown: f.shown}
			f.at = len(out)
			out = append(out, Check{})
		}
		f.sum.add(c)
	}
	for _, f := range families {
		if f.sum != nil {
			out[f.at] = f.sum.check()
		}
	}
	return out
}

// summed accumulates the checks of one kind past the bound.
type summed struct {
	kind   string
	shown  int // checks of the kind reported one by one before these
	first  Check
	n      int
	status map[Status]int
	codes  map[vocab.CauseCode]int
	named  []string // the first checks that did not pass, or the first checks
	// worst is the first check with the worst status among the blocking checks that ran (as
	// decide counts them); warn the first warning.
	worst, warn *Check
}

func (s *summed) add(c Check) {
	if s.n == 0 {
		s.first = c
		s.status, s.codes = map[Status]int{}, map[vocab.CauseCode]int{}
	}
	s.n++
	s.status[c.Status]++
	if c.Code != "" && c.Status != StatusPass {
		s.codes[c.Code]++
	}
	if c.Status != StatusPass && c.Status != StatusSkipped && len(s.named) < maxSummedNamed {
		s.named = append(s.named, cutText(c.Name, 120))
	}
	switch {
	case c.Blocking && c.Status != StatusSkipped && c.Status != StatusWarn:
		rank := c.Status.rank()
		if rank == 0 {
			rank = StatusError.rank() // decide reads an unknown status as an error
		}
		if s.worst == nil || rank > s.worst.Status.rank() {
			w := c
			if c.Status.rank() == 0 {
				w.Status = StatusError
			}
			s.worst = &w
		}
	case c.Status == StatusWarn && s.warn == nil:
		w := c
		s.warn = &w
	}
}

// check is the one check that stands for the summed checks: blocking with the worst status of
// the blocking ones that ran (so the verdict is what it would have been), else a warning when
// one warned, else what the first of them was; its evidence counts them by status and cause.
func (s *summed) check() Check {
	c := Check{
		Name: fmt.Sprintf("%s:+%d more", s.kind, s.n), Tier: s.first.Tier, Advisory: s.first.Advisory,
		Text: fmt.Sprintf("%d more %s checks, summed: the checks of one kind are reported one by one up to %d checks or %d bytes (SPEC §7.1)",
			s.n, s.kind, maxChecksPerFamily, maxFamilyBytes),
	}
	switch {
	case s.worst != nil:
		c.Status, c.Blocking, c.Code = s.worst.Status, true, s.worst.Code
	case s.warn != nil:
		c.Status, c.Code = StatusWarn, s.warn.Code
	default:
		c.Status, c.Blocking, c.Code = s.first.Status, s.first.Blocking, s.first.Code
	}
	c.Passed = c.Status == StatusPass
	statuses := make([]string, 0, len(s.status))
	for st, n := range s.status {
		statuses = append(statuses, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(statuses)
	ev := fmt.Sprintf("%d checks after the %d shown: %s", s.n, s.shown, strings.Join(statuses, ", "))
	if len(s.codes) > 0 {
		codes := make([]string, 0, len(s.codes))
		for code, n := range s.codes {
			codes = append(codes, fmt.Sprintf("%s ×%d", code, n))
		}
		sort.Strings(codes)
		ev += "; causes " + strings.Join(codes, ", ")
	}
	if len(s.named) > 0 {
		ev += "; not passing: " + text.JoinLimited(s.named, maxSummedNamed)
	}
	if s.worst != nil && s.worst.Status != StatusPass {
		ev += fmt.Sprintf("; the first %s: %s: %s", s.worst.Status, cutText(s.worst.Name, 120), cutText(s.worst.Evidence, 512))
	}
	c.Evidence = cutText(ev, maxCheckEvidenceBytes)
	return c
}
