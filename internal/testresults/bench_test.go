package testresults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGoTestJSON reads a thousand copies of a real go test -json output.
func BenchmarkGoTestJSON(b *testing.B) {
	d, err := os.ReadFile(filepath.Join("testdata", "gotest.json"))
	if err != nil {
		b.Fatal(err)
	}
	big := []byte(strings.Repeat(string(d), 1000))
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		s := NewStream(GoTestJSON)
		s.Write(big)
		s.Finish()
	}
}

// BenchmarkTAPDeepHeaders is the costliest shape for names: the deepest nesting, each level
// with a header of a whole line, then many short test points. The time must stay linear in the
// input (each name is built from a prefix cut to MaxNameBytes).
func BenchmarkTAPDeepHeaders(b *testing.B) {
	var sb strings.Builder
	for d := range maxTAPDepth - 1 {
		sb.WriteString(strings.Repeat("    ", d) + "# Subtest: " + strings.Repeat("h", maxLine-200) + "\n")
	}
	points := strings.Repeat(strings.Repeat("    ", maxTAPDepth-1)+"ok\n", 200_000)
	sb.WriteString(points)
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		s := NewStream(TAP)
		s.Write(in)
		s.Finish()
	}
}
