package testresults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkSummary holds what every Summary must satisfy, whatever its input.
func checkSummary(t *testing.T, s *Summary) {
	t.Helper()
	if s.Passed < 0 || s.Failed < 0 || s.Skipped < 0 {
		t.Fatalf("negative count: %s", s.Counts())
	}
	if len(s.Failing) > MaxFailing || len(s.Failing) > s.Failed {
		t.Fatalf("%d failing names for %d failures", len(s.Failing), s.Failed)
	}
	if len(s.Names) > MaxNames || len(s.Names) > s.Passed+s.Failed+s.Skipped {
		t.Fatalf("%d names for %s", len(s.Names), s.Counts())
	}
	for n := range s.Names {
		if len(n) > MaxNameBytes || strings.ContainsAny(n, "\n\r") {
			t.Fatalf("name not cleaned: %q", n)
		}
	}
}

func addSeeds(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func fuzzStream(f *testing.F, format Format) {
	f.Fuzz(func(t *testing.T, data []byte) {
		// Whole and in two pieces: a split anywhere reads the same.
		whole := NewStream(format)
		whole.Write(data)
		a := whole.Finish()
		checkSummary(t, a)
		split := NewStream(format)
		split.Write(data[:len(data)/2])
		split.Write(data[len(data)/2:])
		b := split.Finish()
		if a.Counts() != b.Counts() {
			t.Fatalf("split changed the counts: %s vs %s", a.Counts(), b.Counts())
		}
	})
}

func FuzzGoTestJSON(f *testing.F) {
	addSeeds(f, "gotest.json")
	f.Add([]byte(`{"Action":"fail","Package":"p"}`))
	fuzzStream(f, GoTestJSON)
}

func FuzzTAP(f *testing.F) {
	addSeeds(f, "node.tap")
	f.Add([]byte("1..2\nok 1 - a\n# Subtest: s\n    1..1\n    not ok 1 - b # TODO\n  ---\n  x\n  ...\nok 2 - s\nBail out!\n"))
	fuzzStream(f, TAP)
}

func FuzzJUnit(f *testing.F) {
	addSeeds(f, "unittest.junit.xml")
	f.Add([]byte(`<testsuites><testsuite name="o" errors="2"><testsuite><testcase classname="c" name="n"><skipped/></testcase></testsuite></testsuite></testsuites>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newSummary(JUnit)
		_ = ParseJUnit(strings.NewReader(string(data)), s)
		checkSummary(t, s)
	})
}
