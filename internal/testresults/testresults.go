// Package testresults reads the test results an eval command declares (SPEC §5.2a): the events
// of `go test -json`, a TAP stream, or the JUnit XML files the command writes. Each reader
// streams its input and keeps memory bounded whatever the input's size: counts, the first
// MaxFailing failing names for display, and every test's outcome by name up to MaxNames (for a
// comparison with another run by name), with Truncated saying when names were left out.
//
// The readers judge nothing: a Summary says what the results say. Problems in the results (a TAP
// plan that promised more tests than ran, a go package that failed without a failing test, a
// JUnit suite whose counts exceed its test cases) are counted as failed tests under a name that
// says so, so a reader of the counts cannot miss them.
package testresults

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/internal/text"
)

// Format is how a command's results are written.
type Format string

// The formats an eval command may declare.
const (
	GoTestJSON Format = "go-test-json" // the command's output is `go test -json` (test2json events)
	TAP        Format = "tap"          // the command's output is TAP 12, 13 or 14
	JUnit      Format = "junit"        // the command writes JUnit XML files
)

// Outcome is what became of one test.
type Outcome string

// The outcomes a Summary records by name.
const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
)

// rank orders outcomes of a name reported more than once: the worst one stands.
func (o Outcome) rank() int {
	switch o {
	case Fail:
		return 3
	case Skip:
		return 2
	}
	return 1
}

const (
	// MaxFailing is how many failing names a Summary keeps for display.
	MaxFailing = 20
	// MaxNames is how many distinct test names a Summary keeps with their outcomes.
	MaxNames = 50_000
	// MaxNameBytes is the longest test name kept; a longer one is cut, with "…" at its end.
	MaxNameBytes = 512
	// maxLine is the longest output line the stream readers look at; a longer line is skipped
	// (test2json splits its own output events far below this).
	maxLine = 64 << 10
)

// Summary is what one command's results say.
type Summary struct {
	Format                  Format
	Passed, Failed, Skipped int
	// Failing holds the first MaxFailing failing names, in the order the results report them.
	Failing []string
	// Names is every test's outcome by name (the worst outcome when a name repeats), at most
	// MaxNames of them; Truncated says that some were left out.
	Names     map[string]Outcome
	Truncated bool
	// Sources names what was read: the JUnit files, relative to the project root.
	Sources []string
}

func newSummary(f Format) *Summary { return &Summary{Format: f, Names: map[string]Outcome{}} }

// Ran is the number of tests that ran: passed and failed; a skipped test did not run.
func (s *Summary) Ran() int { return s.Passed + s.Failed }

// add records one test result.
func (s *Summary) add(name string, o Outcome) {
	name = cleanName(name)
	switch o {
	case Pass:
		s.Passed++
	case Fail:
		s.Failed++
		if len(s.Failing) < MaxFailing {
			s.Failing = append(s.Failing, name)
		}
	default:
		s.Skipped++
	}
	if prev, ok := s.Names[name]; ok {
		if o.rank() > prev.rank() {
			s.Names[name] = o
		}
		return
	}
	if len(s.Names) >= MaxNames {
		s.Truncated = true
		return
	}
	s.Names[name] = o
}

// Counts is the summary's counts in words: "12 passed, 1 failed, 2 skipped".
func (s *Summary) Counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// FailingText lists the failing names kept, quoted, with how many more failed.
func (s *Summary) FailingText() string {
	if s.Failed == 0 {
		return ""
	}
	q := make([]string, len(s.Failing))
	for i, n := range s.Failing {
		q[i] = fmt.Sprintf("%q", n)
	}
	out := strings.Join(q, ", ")
	if more := s.Failed - len(s.Failing); more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// cleanName makes a name printable on one line and at most MaxNameBytes long: invalid UTF-8
// becomes U+FFFD and control characters a space.
func cleanName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, name)
	return clip(strings.TrimSpace(name), MaxNameBytes)
}

// clip returns s when it is at most n bytes, else s cut between characters (text.Cut) and marked
// with "…", at most n bytes in all.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return text.Cut(s, n-len("…")) + "…"
}

// lineSplitter calls line for every line written to it, without its "\n" or "\r\n"; a line
// longer than maxLine is skipped whole. Memory is one line buffer of at most maxLine bytes.
type lineSplitter struct {
	buf  []byte
	long bool
	line func([]byte)
}

func (l *lineSplitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		seg, rest, complete := bytes.Cut(p, []byte{'\n'})
		if len(l.buf)+len(seg) <= maxLine && !l.long {
			l.buf = append(l.buf, seg...)
		} else {
			l.long, l.buf = true, l.buf[:0]
		}
		if !complete {
			break
		}
		l.emit()
		p = rest
	}
	return n, nil
}

// flush passes on a last line that had no newline.
func (l *lineSplitter) flush() {
	if len(l.buf) > 0 || l.long {
		l.emit()
	}
}

func (l *lineSplitter) emit() {
	if !l.long {
		l.line(bytes.TrimSuffix(l.buf, []byte{'\r'}))
	}
	l.buf, l.long = l.buf[:0], false
}

// Stream reads a command's output as the command writes it (go-test-json, tap).
type Stream interface {
	// Write takes the next bytes of output; it never fails, so a command is never blocked by it.
	Write(p []byte) (int, error)
	// Finish ends the output and says what it held.
	Finish() *Summary
}

// NewStream returns the stream reader of f, or nil when f is not read from the output (JUnit).
func NewStream(f Format) Stream {
	switch f {
	case GoTestJSON:
		return newGoTestJSON()
	case TAP:
		return newTAP()
	}
	return nil
}
