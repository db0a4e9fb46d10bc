package testresults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The bounds of what FailureLines quotes: a few lines, each cut, and a byte cap on all of them.
const (
	// MaxFailureLines is how many lines a quote holds.
	MaxFailureLines = 8
	// MaxFailureLineBytes is the longest line quoted; a longer one is cut, with "…" at its end.
	MaxFailureLineBytes = 200
	// MaxFailureBytes bounds the quote as Failures.String writes it.
	MaxFailureBytes = 1000
	// maxFailGroups is how many failures (a headline and its detail lines, or assertion lines on
	// their own) the reader keeps to choose from; past it they are only counted.
	maxFailGroups = 32
	// maxKeyBytes is how much of a headline tells one failure from another.
	maxKeyBytes = 1 << 10
	// maxDetails is how many detail lines one failure keeps.
	maxDetails = 3
	// detailWindow is how many lines after a headline its detail lines are looked for.
	detailWindow = 40
)

// Failures is what FailureLines found: the lines that say what failed, in output order, and how
// many failures it found past those it quotes.
type Failures struct {
	Lines []string
	More  int
}

// String is the quote on one line: the lines joined by " | ", cut to MaxFailureBytes, with how
// many more failures the output holds. "" when nothing was found.
func (f Failures) String() string {
	if len(f.Lines) == 0 {
		return ""
	}
	s := strings.Join(f.Lines, " | ")
	more := ""
	if f.More > 0 {
		more = fmt.Sprintf(" (and %d more)", f.More)
	}
	return clip(s, MaxFailureBytes-len(more)) + more
}

// FailuresIn reads output whole (an output tail, a log) with FailureLines.
func FailuresIn(output string) Failures {
	r := NewFailureLines()
	_, _ = r.Write([]byte(output))
	return r.Failures()
}

// groupKind says which detail lines follow a headline, and for how long.
type groupKind int

const (
	kindNone    groupKind = iota // a headline that stands alone (a pytest FAILED line, a cargo test line)
	kindGo                       // go test's --- FAIL: its t.Log/t.Error lines, indented below it
	kindGeneric                  // assertion and expected/actual lines in the window after it
	kindRust                     // a Rust panic: the message lines below it up to a blank line
	kindRustErr                  // a rustc error: its --> location
	kindOrphan                   // assertion lines with no headline (pytest's E lines)
)

// failGroup is one failure: its headline ("" for lines without one) and detail lines.
type failGroup struct {
	head    string
	key     string // the headline as written, up to maxKeyBytes: the same failure is kept once
	details []string
	kind    groupKind
	order   int // where in the output it began
	window  int // lines left in which details are looked for
	// title is how many lines may still continue a numbered headline (mocha's "1) suite" then
	// "test title:"); cont a YAML key whose value is a block that the next line holds.
	title int
	cont  string
}

// FailureLines reads a command's output as it is written and keeps, bounded, the lines that say
// what failed for the common test runners: go test's "--- FAIL: TestX" with the file:line lines
// under it (or, with -v, above it), panics and build errors, also inside go test -json output
// events; pytest's short summary "FAILED tests/x.py::test_y" and its "E   assert ..." lines;
// unittest's "FAIL: test_x (...)" blocks; TAP's "not ok 3 - ..." with its YAML diagnostics (TODO
// and SKIP directives are not failures); node --test's "✖ name (1.2ms)"; jest's "✕" and "●"
// blocks; mocha's and rspec's numbered failures and "rspec ./spec/x_spec.rb:12" lines; cargo
// test's "test x ... FAILED" and panic messages; minitest's "1) Failure:".
//
// It reads lines in the form each runner writes them, in the context the runner writes them in,
// so that what a test prints is not read as a runner's line where the form tells them apart: a
// go log line that contains "--- FAIL" is a log line; pytest's FAILED lines count only after its
// "short test summary info" header, unittest's FAIL: only under its "=====" separator, mocha's
// numbered lines only after "N failing", rspec's only after "Failures:" or "Failed examples:";
// node's ✖ only with the duration node appends; jest's ● only at the indentation jest gives it (a
// console.log block is indented deeper). Where the forms are the same (a test that prints a
// line exactly as go test would), the line is quoted: a quote is what the output says, never a
// verdict, which only the exit code and declared results decide.
//
// Memory is bounded whatever the output's size: one line buffer, at most maxFailGroups failures
// of a few short lines each, and the last few short log lines of at most maxPending go tests.
type FailureLines struct {
	lines   lineSplitter
	groups  []failGroup
	open    int   // index of the group details go to, or -1
	more    int   // failures found past maxFailGroups
	n       int   // lines read
	written int64 // bytes written

	// pending holds, by test name, the last log lines of the go tests running (go test -v prints
	// a test's log before its --- FAIL line, and a parent's after its subtests ran); running is
	// the test the last "=== RUN" (NAME, CONT) line named.
	pending map[string][]string
	running string
	orphans int  // failures without a headline kept
	noSkip  bool // read every line in full (a test compares the two)
	// Contexts set by the runners' section headers.
	pytestSummary, rspecFailed, numbered, afterSeparator bool
}

// maxPending bounds the go tests whose log lines are held.
const maxPending = 64

// NewFailureLines returns a reader with nothing read.
func NewFailureLines() *FailureLines {
	r := &FailureLines{open: -1, pending: map[string][]string{}}
	r.lines.line = r.line
	return r
}

// Write takes the next bytes of output; it never fails.
func (r *FailureLines) Write(p []byte) (int, error) {
	r.written += int64(len(p))
	return r.lines.Write(p)
}

// Written is how many bytes of output were written to r.
func (r *FailureLines) Written() int64 { return r.written }

// goJSONOutput marks the test2json events whose Output is a line of go test's own output.
var goJSONOutput = [][]byte{[]byte(`"Action":"output"`), []byte(`"Action":"build-output"`)}

func (r *FailureLines) line(b []byte) {
	if r.open < 0 && r.running == "" && !r.noSkip && skippable(b) {
		r.n++
		r.afterSeparator = false
		return
	}
	if len(b) > 0 && b[0] == '{' && (bytes.Contains(b, goJSONOutput[0]) || bytes.Contains(b, goJSONOutput[1])) {
		if out, ok := jsonOutput(b); ok {
			for l := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
				r.text(cleanLine([]byte(l)))
			}
			return
		}
	}
	r.text(cleanLine(b))
}

// mayMatter holds the first bytes of every line the reader looks at when no failure is open and no
// go test is running: the first byte of each headline, section header, rule and go test line.
var mayMatter = func() (m [256]bool) {
	for _, c := range []byte("-=_pfFnBtreEoP#.{0123456789") {
		m[c] = true
	}
	for c := range 256 {
		if c < 0x20 || c >= 0x7f { // control characters and UTF-8 (✖ ✕ ● ×, and what cleanLine maps)
			m[c] = true
		}
	}
	return m
}()

// skippable reports whether line b can neither name a failure nor change what the reader
// expects, when no failure is open and no go test is running: most lines of most outputs, passed
// over without a copy.
func skippable(b []byte) bool {
	t := bytes.TrimLeft(b, " \t")
	if len(t) == 0 {
		return true
	}
	if mayMatter[t[0]] || bytes.IndexByte(t, '\r') >= 0 || bytes.IndexByte(t, 0x1b) >= 0 || bytes.Contains(t, []byte(".go:")) {
		return false
	}
	return true
}

// outputKey is where test2json writes an event's Output.
var outputKey = []byte(`"Output":"`)

// jsonOutput is the Output of a test2json event, read without decoding the event (the reader
// sees every event of go test -json): the string that follows "Output":, up to its closing quote.
func jsonOutput(b []byte) (string, bool) {
	i := bytes.Index(b, outputKey)
	if i < 0 {
		return "", false
	}
	lit := b[i+len(outputKey)-1:]
	escaped := false
	for j := 1; j < len(lit); j++ {
		switch lit[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			if !escaped {
				return string(lit[1:j]), true
			}
			var out string
			if json.Unmarshal(lit[:j+1], &out) != nil {
				return "", false
			}
			return out, true
		}
	}
	return "", false
}

// cleanLine drops terminal escape sequences, keeps what follows the last carriage return (what a
// terminal shows), makes invalid UTF-8 U+FFFD and other control characters spaces, and trims the
// end.
func cleanLine(b []byte) string {
	if i := bytes.LastIndexByte(bytes.TrimRight(b, "\r"), '\r'); i >= 0 {
		b = b[i+1:]
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = stripEscapes(b)
	}
	s := string(b)
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return strings.TrimRight(s, " \t")
}

// stripEscapes removes ANSI escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \)
// and two-byte ones.
func stripEscapes(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
		case ']':
			j := i + 2
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func (r *FailureLines) text(s string) {
	r.n++
	t := strings.TrimLeft(s, " \t")
	indent := len(s) - len(t)
	sepBefore := r.afterSeparator
	r.afterSeparator = isRule(t, '=')
	if t == "" {
		if g := r.current(); g != nil {
			if g.kind == kindRust {
				r.open = -1
			}
			g.title = 0
		}
		return
	}
	r.context(t, indent)
	if head, kind, ok := r.headline(t, indent, sepBefore); ok {
		r.startGroup(head, kind)
		return
	}
	if g := r.current(); g != nil {
		if r.closes(g, t, indent) {
			r.open = -1
		} else {
			r.detail(g, t, indent)
			return
		}
	}
	r.loose(t, indent)
}

// current is the group details go to, or nil.
func (r *FailureLines) current() *failGroup {
	if r.open < 0 {
		return nil
	}
	return &r.groups[r.open]
}

// context follows the section headers that make a runner's lines what they are.
func (r *FailureLines) context(t string, indent int) {
	switch {
	case strings.Contains(t, " short test summary info ") && strings.HasPrefix(t, "==="):
		r.pytestSummary = true
	case indent == 0 && t == "Failures:":
		r.numbered = true
	case indent == 0 && t == "Failed examples:":
		r.rspecFailed = true
	case isCount(t, " failing"):
		r.numbered = true
	}
}

// isRule reports whether t is a line of at least 20 c's (a section rule).
func isRule(t string, c byte) bool {
	if len(t) < 20 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != c {
			return false
		}
	}
	return true
}

// isCount reports whether t is a number followed by suffix and, optionally, " (…)".
func isCount(t, suffix string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || !strings.HasPrefix(t[i:], suffix) {
		return false
	}
	rest := t[i+len(suffix):]
	return rest == "" || strings.HasPrefix(rest, " (")
}

// headline reports whether t is a line that names a failure, what it quotes and what follows it.
func (r *FailureLines) headline(t string, indent int, afterSeparator bool) (string, groupKind, bool) {
	switch {
	case strings.HasPrefix(t, "--- FAIL: "):
		return t, kindGo, true
	case indent == 0 && (strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "fatal error: ")):
		return t, kindNone, true
	case indent == 0 && strings.HasPrefix(t, "FAIL\t") && (strings.HasSuffix(t, " [build failed]") || strings.HasSuffix(t, " [setup failed]")):
		return t, kindNone, true
	case indent == 0 && isGoCompileError(t):
		return t, kindNone, true
	case strings.HasPrefix(t, "not ok") && (len(t) == 6 || t[6] == ' '):
		if tapDirective(t) {
			return "", 0, false
		}
		return t, kindGeneric, true
	case strings.HasPrefix(t, "Bail out!"):
		return t, kindNone, true
	case strings.HasPrefix(t, "✖ ") && hasDuration(t):
		return t, kindGeneric, true
	case strings.HasPrefix(t, "✕ ") || strings.HasPrefix(t, "× "):
		return t, kindGeneric, true
	case indent == 2 && strings.HasPrefix(t, "● ") && t != "● Console":
		return t, kindGeneric, true
	case indent <= 1 && strings.HasPrefix(t, "FAIL ") && strings.TrimSpace(t[5:]) != "":
		return t, kindGeneric, true
	case indent == 0 && strings.HasPrefix(t, "test ") && strings.HasSuffix(t, " ... FAILED"):
		return t, kindNone, true
	case strings.HasPrefix(t, "thread '") && strings.Contains(t, " panicked at"):
		return t, kindRust, true
	case indent == 0 && strings.HasPrefix(t, "error[E"):
		return t, kindRustErr, true
	case r.pytestSummary && indent == 0 && (strings.HasPrefix(t, "FAILED ") || strings.HasPrefix(t, "ERROR ")):
		return t, kindNone, true
	case afterSeparator && indent == 0 && (strings.HasPrefix(t, "FAIL: ") || strings.HasPrefix(t, "ERROR: ")):
		return t, kindGeneric, true
	case r.rspecFailed && indent == 0 && strings.HasPrefix(t, "rspec "):
		return t, kindNone, true
	case isNumbered(t) && (r.numbered || t[strings.IndexByte(t, ')')+2:] == "Failure:" || t[strings.IndexByte(t, ')')+2:] == "Error:"):
		return t, kindGeneric, true
	}
	return "", 0, false
}

// isNumbered reports whether t is "N) text" (mocha, rspec and minitest number their failures).
func isNumbered(t string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+2 < len(t) && t[i] == ')' && t[i+1] == ' ' && t[i+2] != ' '
}

// tapDirective reports whether a TAP "not ok" line carries a TODO or SKIP directive: not a failure.
func tapDirective(t string) bool {
	_, d, ok := strings.Cut(t, "#")
	if !ok {
		return false
	}
	d = strings.ToUpper(strings.TrimLeft(d, " \t"))
	return strings.HasPrefix(d, "TODO") || strings.HasPrefix(d, "SKIP")
}

// hasDuration reports whether t ends with the duration node --test appends: "(1.2ms)", "(3s)".
func hasDuration(t string) bool {
	if !strings.HasSuffix(t, "s)") {
		return false
	}
	i := strings.LastIndexByte(t, '(')
	if i < 0 {
		return false
	}
	d := strings.TrimSuffix(strings.TrimSuffix(t[i+1:len(t)-1], "s"), "m")
	if d == "" {
		return false
	}
	for _, c := range d {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// isGoCompileError reports whether t is a compiler or vet error: "./a.go:3:2: undefined: x".
func isGoCompileError(t string) bool {
	file, rest, ok := strings.Cut(t, ".go:")
	if !ok || file == "" || strings.ContainsAny(file, " \t") {
		return false
	}
	line, rest, ok := cutNumber(rest, ':')
	if !ok || !line {
		return false
	}
	col, rest, ok := cutNumber(rest, ':')
	return ok && col && strings.HasPrefix(rest, " ")
}

// cutNumber cuts the digits before sep from s: whether there were any, what follows sep, and
// whether sep followed them.
func cutNumber(s string, sep byte) (digits bool, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i >= len(s) || s[i] != sep {
		return i > 0, "", false
	}
	return i > 0, s[i+1:], true
}

// isGoLogLine reports whether t is a line t.Log or t.Error writes: "depth_test.go:12: message".
func isGoLogLine(t string) bool {
	file, rest, ok := strings.Cut(t, ".go:")
	if !ok || file == "" || strings.ContainsAny(file, " \t") {
		return false
	}
	digits, rest, ok := cutNumber(rest, ':')
	return ok && digits && (rest == "" || rest[0] == ' ')
}

// startGroup opens the failure a headline names; a headline already quoted (node repeats its
// failures at the end, jest names a test twice) opens nothing.
func (r *FailureLines) startGroup(head string, kind groupKind) {
	r.open = -1
	var logged []string
	if kind == kindGo {
		name, _, _ := strings.Cut(strings.TrimPrefix(head, "--- FAIL: "), " (")
		logged = r.pending[name]
		delete(r.pending, name)
	}
	key := head[:min(len(head), maxKeyBytes)]
	for i := range r.groups {
		if r.groups[i].key == key {
			return
		}
	}
	if len(r.groups) >= maxFailGroups {
		r.more++
		return
	}
	g := failGroup{head: quoteLine(head), key: key, kind: kind, order: r.n, window: detailWindow, details: logged}
	if isNumbered(head) && !strings.HasSuffix(head, ":") || strings.HasSuffix(head, ") Failure:") || strings.HasSuffix(head, ") Error:") {
		g.title = 3
	}
	r.groups = append(r.groups, g)
	r.open = len(r.groups) - 1
}

// closes reports whether t ends the details of g: the next test's line, the end of its window.
func (r *FailureLines) closes(g *failGroup, t string, indent int) bool {
	g.window--
	if g.window < 0 {
		return true
	}
	switch g.kind {
	case kindGo:
		return indent == 0 || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "=== ")
	case kindRust:
		return t == "stack backtrace:" || strings.HasPrefix(t, "note: ")
	case kindNone:
		return true
	}
	return strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "# Subtest") || strings.HasPrefix(t, "1..") ||
		strings.HasPrefix(t, "✔ ") || strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "ℹ ") || strings.HasPrefix(t, "▶ ") ||
		strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- PASS") ||
		isRule(t, '=') || isRule(t, '_')
}

// detail adds t to g when it is one of the lines g keeps.
func (r *FailureLines) detail(g *failGroup, t string, indent int) {
	if g.cont != "" {
		key := g.cont
		g.cont = ""
		r.addDetail(g, key+" "+t)
		return
	}
	if g.title > 0 {
		if isDetailLine(t) {
			g.title = 0
		} else {
			g.head = quoteLine(g.head + " " + t)
			g.title--
			if strings.HasSuffix(t, ":") {
				g.title = 0
			}
			return
		}
	}
	switch g.kind {
	case kindGo:
		if isGoLogLine(t) || isDetailLine(t) {
			g.details = lastLines(g.details, t)
		}
	case kindRust:
		r.addDetail(g, t)
	case kindRustErr:
		if strings.HasPrefix(t, "--> ") {
			r.addDetail(g, t)
			r.open = -1
		}
	case kindOrphan:
		if indent == 0 && isPytestLocation(t) {
			r.addDetail(g, t)
			r.open = -1
		} else if indent == 0 && isPytestE(t) {
			r.addDetail(g, t)
		} else {
			r.open = -1
			r.loose(t, indent)
		}
	default:
		if key, ok := yamlBlockKey(t); ok {
			g.cont = key
			return
		}
		if isDetailLine(t) {
			r.addDetail(g, t)
		}
	}
}

func (r *FailureLines) addDetail(g *failGroup, t string) {
	if len(g.details) < maxDetails {
		g.details = append(g.details, quoteLine(t))
	}
}

// lastLines appends t to lines, keeping the last maxDetails (a go test's t.Error and t.Fatal
// lines come after its t.Log lines).
func lastLines(lines []string, t string) []string {
	if len(lines) == maxDetails {
		copy(lines, lines[1:])
		lines = lines[:maxDetails-1]
	}
	return append(lines, quoteLine(t))
}

// loose handles a line outside any failure: a go test's log lines wait for its --- FAIL line (go
// test -v), and pytest's E lines start a failure of their own.
func (r *FailureLines) loose(t string, indent int) {
	switch {
	case strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== NAME") || strings.HasPrefix(t, "=== CONT"):
		r.running = ""
		if f := strings.Fields(t); len(f) == 3 {
			r.running = f[2]
		}
	case strings.HasPrefix(t, "--- PASS: ") || strings.HasPrefix(t, "--- SKIP: "):
		name, _, _ := strings.Cut(t[len("--- PASS: "):], " (")
		delete(r.pending, name)
	case indent == 0 && (strings.HasPrefix(t, "ok  ") || strings.HasPrefix(t, "FAIL\t") || t == "PASS" || t == "FAIL"):
		clear(r.pending) // a package ended
		r.running = ""
	case isGoLogLine(t) || (r.running != "" && isDetailLine(t)):
		if _, ok := r.pending[r.running]; !ok && len(r.pending) >= maxPending {
			return
		}
		r.pending[r.running] = lastLines(r.pending[r.running], t)
	case indent == 0 && isPytestE(t):
		if len(r.groups) >= maxFailGroups || r.orphans >= MaxFailureLines {
			return // what fits in a quote; the failures are counted by their FAILED lines
		}
		r.orphans++
		r.groups = append(r.groups, failGroup{kind: kindOrphan, order: r.n, window: detailWindow, details: []string{quoteLine(t)}})
		r.open = len(r.groups) - 1
	}
}

// isPytestE reports whether t is one of pytest's "E   assert 3 == 4" lines.
func isPytestE(t string) bool {
	return len(t) > 2 && t[0] == 'E' && (t[1] == ' ' || t[1] == '\t') && strings.TrimSpace(t[1:]) != ""
}

// isPytestLocation reports whether t is pytest's "tests/x.py:5: AssertionError".
func isPytestLocation(t string) bool {
	file, rest, ok := strings.Cut(t, ".py:")
	if !ok || file == "" || strings.ContainsAny(file, " \t") {
		return false
	}
	digits, rest, ok := cutNumber(rest, ':')
	return ok && digits && strings.HasPrefix(rest, " ")
}

// detailKeys are the keys of the lines that say what was expected and what was found, as the
// runners write them: "expected: 4" (TAP, rspec), "Expected: 4" / "Received: 3" (jest), "left:
// 3" (Rust), "actual: 3," (node), "error: 'inner broke'" (node TAP).
var detailKeys = []string{"expected", "actual", "received", "got", "wanted", "found", "left", "right", "message", "error"}

// isDetailLine reports whether t says what went wrong in a failing test.
func isDetailLine(t string) bool {
	if strings.HasPrefix(t, "Failure/Error:") || strings.HasPrefix(t, "expect(") || strings.HasPrefix(t, "assert") {
		return true
	}
	for _, k := range detailKeys {
		if len(t) > len(k) && strings.EqualFold(t[:len(k)], k) {
			rest := strings.TrimLeft(t[len(k):], " ")
			if strings.HasPrefix(rest, ":") {
				return true
			}
		}
	}
	return isErrorLine(t)
}

// isErrorLine reports whether t is an exception's message: "AssertionError [ERR_ASSERTION]: …",
// "TypeError: x is not a function", "ValueError: bad input", "Error: inner broke".
func isErrorLine(t string) bool {
	name, _, ok := strings.Cut(t, ":")
	if !ok {
		return false
	}
	name, _, _ = strings.Cut(name, " [") // node's "AssertionError [ERR_ASSERTION]"
	if name == "" || strings.ContainsAny(name, " \t") {
		return false
	}
	return strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception") || strings.HasSuffix(name, "Failure")
}

// yamlBlockKey reports whether t is a detail key whose value is a YAML block ("error: |-"): the
// next line holds the value.
func yamlBlockKey(t string) (string, bool) {
	key, v, ok := strings.Cut(t, ":")
	if !ok {
		return "", false
	}
	switch strings.TrimSpace(v) {
	case "|", "|-", "|+", ">", ">-", ">+":
	default:
		return "", false
	}
	for _, k := range detailKeys {
		if key == k {
			return key + ":", true
		}
	}
	return "", false
}

// Failures ends the output and says what it held: the headlines first (each with its details as
// far as MaxFailureLines allows), then assertion lines without a headline, quoted in output order.
func (r *FailureLines) Failures() Failures {
	r.lines.flush()
	r.open = -1
	type pick struct {
		order int
		lines []string
	}
	var picks []pick
	budget := MaxFailureLines
	more := r.more
	for _, orphans := range []bool{false, true} {
		for _, g := range r.groups {
			if (g.kind == kindOrphan) != orphans {
				continue
			}
			var lines []string
			if g.head != "" {
				lines = append(lines, g.head)
			}
			lines = append(lines, g.details...)
			if budget == 0 || (orphans && len(lines) > budget) {
				if !orphans {
					more++
				}
				continue
			}
			if len(lines) > budget {
				lines = lines[:budget]
			}
			budget -= len(lines)
			picks = append(picks, pick{g.order, lines})
		}
	}
	// In output order; picks are few.
	for i := 1; i < len(picks); i++ {
		for j := i; j > 0 && picks[j].order < picks[j-1].order; j-- {
			picks[j], picks[j-1] = picks[j-1], picks[j]
		}
	}
	f := Failures{More: more}
	for _, p := range picks {
		for _, l := range p.lines {
			f.Lines = append(f.Lines, quoteLine(l))
		}
	}
	return f
}

// quoteLine puts a line on one line with single spaces, cut to MaxFailureLineBytes. Lines are
// cut as they are kept, so what the reader holds stays small whatever the output's lines.
func quoteLine(l string) string {
	return clip(strings.Join(strings.Fields(l), " "), MaxFailureLineBytes)
}
