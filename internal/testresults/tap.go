package testresults

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/geas-dev/geas/internal/text"
)

// maxTAPDepth bounds how deeply subtests nest; a deeper line is ignored.
const maxTAPDepth = 32

// tapLevel is the state of one nesting level of a TAP stream.
type tapLevel struct {
	header string // its "# Subtest: NAME", cut to MaxNameBytes
	// path prefixes the names of its test points: the headers of the levels down to it, each
	// followed by " > ", cut to MaxNameBytes (so a name costs the same at any depth).
	path   string
	points int // test points seen at this level since it began
	plan   int // the plan's N, or -1 before a plan line
}

// tap reads TAP 12, 13 and 14 (testanything.org): "ok", "not ok" with an optional number,
// description and "# SKIP" or "# TODO" directive; a plan "1..N"; "Bail out!"; subtests indented
// by four spaces per level (TAP 14, node --test), named "PARENT > NAME" after their "# Subtest:"
// headers; YAML diagnostics between "---" and "..." are skipped. Every test point counts,
// parents included (as node --test counts them):
//
//   - "not ok" is failed, unless its directive is TODO (skipped: an expected failure);
//   - "ok" with SKIP is skipped, "ok" otherwise passed ("ok … # TODO" is a bonus pass);
//   - "Bail out!" is a failure named after it;
//   - a level whose plan disagrees with its test points, and a stream without a top-level
//     plan, is a failure named after the plan (the run stopped early, or lost results).
type tap struct {
	lines  lineSplitter
	sum    *Summary
	levels []tapLevel // levels[0] is the top level
	yaml   string     // the indentation of the YAML block being skipped, "" outside one
	inYAML bool
}

func newTAP() *tap {
	t := &tap{sum: newSummary(TAP), levels: []tapLevel{{plan: -1}}}
	t.lines.line = t.line
	return t
}

func (t *tap) Write(p []byte) (int, error) { return t.lines.Write(p) }

func (t *tap) Finish() *Summary {
	t.lines.flush()
	t.closeTo(0)
	top := t.levels[0]
	switch {
	case top.plan < 0 && top.points == 0:
		// Nothing at all: no tests ran (Ran is 0, which the caller reports).
	case top.plan < 0:
		t.sum.add(fmt.Sprintf("no plan: %d test points and no 1..N line (the run may have stopped early)", top.points), Fail)
	case top.plan != top.points:
		t.sum.add(fmt.Sprintf("plan 1..%d but %d test points", top.plan, top.points), Fail)
	}
	return t.sum
}

func (t *tap) line(b []byte) {
	s := string(b)
	body := strings.TrimLeft(s, " ")
	indent := len(s) - len(body)
	if t.inYAML {
		if indent == len(t.yaml) && strings.TrimRight(body, " ") == "..." {
			t.inYAML = false
		}
		return
	}
	if strings.HasPrefix(body, "Bail out!") {
		t.sum.add(body, Fail)
		return
	}
	if body == "" || indent%4 != 0 {
		if indent%4 == 2 && strings.TrimRight(body, " ") == "---" {
			t.inYAML, t.yaml = true, s[:indent]
		}
		return
	}
	depth := indent / 4
	if depth >= maxTAPDepth || depth > len(t.levels) {
		return // deeper than any level begun: not part of the stream
	}
	switch {
	case strings.HasPrefix(body, "# Subtest:"):
		t.open(depth + 1)
		l := &t.levels[depth+1]
		l.header = cut(strings.TrimSpace(strings.TrimPrefix(body, "# Subtest:")))
		l.path = t.levels[depth].path
		if l.header != "" {
			l.path = cut(l.path + l.header + " > ")
		}
	case strings.HasPrefix(body, "#"), strings.HasPrefix(body, "TAP version"), strings.HasPrefix(body, "pragma "):
	case strings.HasPrefix(body, "1.."):
		n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(body[3:], "#", 2)[0]))
		if err == nil && n >= 0 {
			t.open(depth)
			t.levels[depth].plan = n
		}
	case strings.HasPrefix(body, "ok"), strings.HasPrefix(body, "not ok"):
		t.point(depth, body)
	}
}

// open makes sure level depth exists (a subtest begins without a header in TAP 14's bare form).
func (t *tap) open(depth int) {
	for len(t.levels) <= depth {
		t.levels = append(t.levels, tapLevel{plan: -1, path: t.levels[len(t.levels)-1].path})
	}
}

// closeTo ends the levels below depth, checking each one's plan.
func (t *tap) closeTo(depth int) {
	for len(t.levels) > depth+1 {
		l := t.levels[len(t.levels)-1]
		t.levels = t.levels[:len(t.levels)-1]
		if l.plan >= 0 && l.plan != l.points {
			t.sum.add(fmt.Sprintf("%s: plan 1..%d but %d test points", t.levels[len(t.levels)-1].path+l.header, l.plan, l.points), Fail)
		}
	}
}

// cut shortens s to at most MaxNameBytes bytes, between characters.
func cut(s string) string {
	return text.Cut(s, MaxNameBytes)
}

// point reads one test point at depth.
func (t *tap) point(depth int, body string) {
	failed := strings.HasPrefix(body, "not ok")
	rest := strings.TrimPrefix(strings.TrimPrefix(body, "not ok"), "ok")
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return // "okay", "oknot": not a test point
	}
	t.open(depth)
	t.closeTo(depth)
	t.levels[depth].points++
	rest = strings.TrimSpace(rest)
	num := ""
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i != 0 {
		if i < 0 {
			i = len(rest)
		}
		num, rest = rest[:i], strings.TrimSpace(rest[i:])
	}
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "-"))
	desc, directive := splitDirective(rest)
	if desc == "" {
		desc = "test " + num
	}
	name := t.levels[depth].path + cut(desc)
	dir := strings.ToLower(directive)
	switch {
	case strings.HasPrefix(dir, "todo"):
		if failed {
			t.sum.add(name, Skip)
		} else {
			t.sum.add(name, Pass)
		}
	case failed:
		t.sum.add(name, Fail)
	case strings.HasPrefix(dir, "skip"):
		t.sum.add(name, Skip)
	default:
		t.sum.add(name, Pass)
	}
}

// splitDirective cuts a description at its first unescaped "#": the text before it and the
// directive after it.
func splitDirective(s string) (desc, directive string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '#':
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		}
	}
	return s, ""
}
