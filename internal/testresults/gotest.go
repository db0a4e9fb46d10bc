package testresults

import (
	"bytes"
	"encoding/json"
)

// outputAction marks an output event as test2json writes it; in any other event the same bytes
// could only appear escaped, inside a string.
var outputAction = []byte(`"Action":"output"`)

// maxPackages bounds the packages whose failing tests are remembered; past it a failing package
// counts as a failure of its own even when one of its tests already did (never fewer failures).
const maxPackages = 10_000

// goTestEvent is the part of a test2json event (`go doc test2json`) the reader uses.
type goTestEvent struct {
	Action      string
	Package     string
	Test        string
	FailedBuild string
}

// goTestJSON reads `go test -json`: every test's pass, fail or skip event counts, subtests
// included (as go test counts them); a package that fails with no failing test of its own (a
// build failure, a panic in TestMain, os.Exit, a timeout outside a test) is one failure named
// after the package. Lines that are not events (the go command's own stderr) are skipped.
type goTestJSON struct {
	lines lineSplitter
	sum   *Summary
	// failedIn holds the packages one of whose tests failed.
	failedIn map[string]bool
}

func newGoTestJSON() *goTestJSON {
	g := &goTestJSON{sum: newSummary(GoTestJSON), failedIn: map[string]bool{}}
	g.lines.line = g.line
	return g
}

func (g *goTestJSON) Write(p []byte) (int, error) { return g.lines.Write(p) }

func (g *goTestJSON) Finish() *Summary {
	g.lines.flush()
	return g.sum
}

func (g *goTestJSON) line(b []byte) {
	if len(b) == 0 || b[0] != '{' || bytes.Contains(b, outputAction) {
		return // output events, most of the stream, carry nothing counted
	}
	var ev goTestEvent
	if json.Unmarshal(b, &ev) != nil || ev.Package == "" {
		return
	}
	if ev.Test == "" {
		if ev.Action == "fail" && !g.failedIn[cut(ev.Package)] {
			why := " [package failed]"
			if ev.FailedBuild != "" {
				why = " [build failed]"
			}
			g.sum.add(ev.Package+why, Fail)
		}
		return
	}
	name := ev.Package + "." + ev.Test
	switch ev.Action {
	case "pass":
		g.sum.add(name, Pass)
	case "skip":
		g.sum.add(name, Skip)
	case "fail":
		g.sum.add(name, Fail)
		if len(g.failedIn) < maxPackages {
			g.failedIn[cut(ev.Package)] = true
		}
	}
}
