package testresults

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readSample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "failines", name))
	require.NoError(t, err)
	return string(b)
}

// TestFailureLinesQuoteWhatFailedForEachRunner reads the real output of each common runner and
// quotes the lines that say which test failed and why, not the runner's last lines.
func TestFailureLinesQuoteWhatFailedForEachRunner(t *testing.T) {
	for _, tc := range []struct {
		sample string
		want   []string
	}{
		{"go.txt", []string{"--- FAIL: TestDepth (0.00s)", "depth_test.go:4: computing depth", "depth_test.go:6: Depth(1) = 1, want 2",
			"--- FAIL: TestSub (0.00s)", "--- FAIL: TestSub/zero (0.00s)", "depth_test.go:11: Depth(0) = 0, want 1"}},
		// -v prints a test's log lines before its --- FAIL line, a subtest's before its siblings
		// run; a passing test's log line that holds "--- FAIL: TestFake" is not a failure.
		{"go-v.txt", []string{"--- FAIL: TestDepth (0.00s)", "depth_test.go:4: computing depth", "depth_test.go:6: Depth(1) = 1, want 2",
			"--- FAIL: TestSub (0.00s)", "--- FAIL: TestSub/zero (0.00s)", "depth_test.go:11: Depth(0) = 0, want 1"}},
		{"go-json.txt", []string{"--- FAIL: TestDepth (0.00s)", "depth_test.go:4: computing depth", "depth_test.go:6: Depth(1) = 1, want 2",
			"--- FAIL: TestSub/zero (0.00s)", "depth_test.go:11: Depth(0) = 0, want 1", "--- FAIL: TestSub (0.00s)"}},
		{"go-panic.txt", []string{"--- FAIL: TestPanics (0.00s)", "panic: runtime error: index out of range [3] with length 0 [recovered, repanicked]"}},
		{"go-build.txt", []string{"./b.go:2:23: undefined: undefinedThing", "FAIL example.com/depth [build failed]"}},
		{"pytest.txt", []string{"E assert 3 == 4", "E + where 3 = add(1, 2)", "tests/test_calc.py:5: AssertionError",
			"E ValueError: bad input", "tests/test_calc.py:12: ValueError",
			"FAILED tests/test_calc.py::test_adds - assert 3 == 4", "FAILED tests/test_calc.py::test_raises - ValueError: bad input"}},
		{"unittest.txt", []string{"FAIL: test_add (test_u.TestCalc.test_add)", "AssertionError: 3 != 4"}},
		{"node-tap.txt", []string{"not ok 2 - adds", "error: Expected values to be strictly equal:", "expected: 4", "actual: 3",
			"not ok 1 - inner", "error: 'inner broke'", "not ok 3 - suite", "error: '1 subtest failed'"}},
		// The spec reporter repeats its failures at the end: quoted once. A passing test's
		// console.log of "✖ not a failure" has no duration: not a failure.
		{"node-spec.txt", []string{"✖ adds (0.887313ms)", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"actual: 3,", "expected: 4,", "✖ inner (0.116604ms)", "Error: inner broke", "✖ suite (0.360607ms)"}},
		{"mocha.txt", []string{"1) calc adds:", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"2) calc throws:", "TypeError: x is not a function"}},
		{"jest.txt", []string{"FAIL ./jest.calc.test.js", "✕ adds (6 ms)", "● calc › adds",
			"expect(received).toBe(expected) // Object.is equality", "Expected: 4", "Received: 3"}},
		{"cargo.txt", []string{"test tests::boom ... FAILED", "test tests::adds ... FAILED",
			"thread 'tests::boom' (12514) panicked at src/lib.rs:10:17:", "add(0, 0) must be positive",
			"thread 'tests::adds' (12513) panicked at src/lib.rs:6:17:", "assertion `left == right` failed", "left: 3", "right: 4"}},
		{"rspec.txt", []string{"1) Calc adds", "Failure/Error: expect(add(1, 2)).to eq(4)", "expected: 4", "got: 3",
			"rspec ./spec/calc_spec.rb:3 # Calc adds"}},
	} {
		t.Run(tc.sample, func(t *testing.T) {
			got := FailuresIn(readSample(t, tc.sample))
			assert.Equal(t, tc.want, got.Lines)
			assert.Zero(t, got.More)
		})
	}
}

// TestFailureLinesQuoteNothingInPassingOutput holds the honest control: what the runners print
// when every test passes, including lines a passing test prints in the form of a failure
// ("--- FAIL" inside a go log line, "✖" without node's duration, "●" inside jest's console
// block, "1) …" before mocha's "N failing", "FAILED …" before pytest's summary header,
// "rspec ./…" before rspec's "Failed examples:"), quotes nothing.
func TestFailureLinesQuoteNothingInPassingOutput(t *testing.T) {
	for _, sample := range []string{"pass-go.txt", "pass-go-v.txt", "pass-go-json.txt", "pass-cargo.txt", "pass-jest.txt",
		"pass-mocha.txt", "pass-node-spec.txt", "pass-node-tap.txt", "pass-pytest-s.txt", "pass-rspec.txt"} {
		t.Run(sample, func(t *testing.T) {
			got := FailuresIn(readSample(t, sample))
			assert.Empty(t, got.Lines)
			assert.Empty(t, got.String())
		})
	}
}

// TestFailureLinesQuoteAPrintedLineInTheRunnersOwnForm documents the limit: a line a test prints
// exactly as the runner writes a failure (cargo test --nocapture, "test fake ... FAILED") cannot
// be told apart, and is quoted; a quote is what the output says, never what decides a verdict.
func TestFailureLinesQuoteAPrintedLineInTheRunnersOwnForm(t *testing.T) {
	got := FailuresIn(readSample(t, "pass-cargo-nocapture.txt"))
	assert.Equal(t, []string{"test fake ... FAILED"}, got.Lines)
}

// TestFailureLinesReadEachForm checks the forms one by one, each with a line of the same words
// in another form that is not a failure.
func TestFailureLinesReadEachForm(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
	}{
		{"tap todo and skip are not failures", "not ok 1 - later # TODO not yet\nnot ok 2 - x # skip no db\nok 3 - fine\n", nil},
		{"tap not ok", "ok 1 - a\nnot ok 2 - b\n  ---\n  message: 'want 2'\n  ...\n", []string{"not ok 2 - b", "message: 'want 2'"}},
		{"tap bail out", "1..3\nBail out! no database\n", []string{"Bail out! no database"}},
		{"unittest FAIL: without its separator is printed text", "FAIL: printed\nok\n", nil},
		{"pytest FAILED before its summary header is printed text", "FAILED tests/x.py::t - printed\n", nil},
		{"mocha numbered line before N failing is printed text", "  1) printed\n  1 passing (2ms)\n", nil},
		{"jest ● deeper than jest puts it is console output", "  console.log\n    ● printed\n", nil},
		{"node ✖ without a duration is printed text", "✖ printed\n", nil},
		{"go --- FAIL inside a log line is a log line", "    x_test.go:3: --- FAIL: TestFake (0.00s)\nok  \tpkg\t0.1s\n", nil},
		{"go log line of a passing test is dropped", "=== RUN   TestA\n    a_test.go:1: noise\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n",
			[]string{"--- FAIL: TestB (0.00s)"}},
		{"go testify block", "--- FAIL: TestA (0.00s)\n    a_test.go:9: \n        \tError Trace:\ta_test.go:9\n        \tError:      \tNot equal: \n        \t            \texpected: 2\n        \t            \tactual  : 1\n        \tTest:       \tTestA\nFAIL\n",
			[]string{"--- FAIL: TestA (0.00s)", "Error: Not equal:", "expected: 2", "actual : 1"}},
		{"minitest", "  1) Failure:\nTestCalc#test_add [test/calc_test.rb:5]:\nExpected: 4\n  Actual: 3\n\n1 runs, 1 assertions, 1 failures\n",
			[]string{"1) Failure: TestCalc#test_add [test/calc_test.rb:5]:", "Expected: 4", "Actual: 3"}},
		{"vitest", " FAIL  src/sum.test.ts > sum > adds\nAssertionError: expected 3 to be 4 // Object.is equality\n",
			[]string{"FAIL src/sum.test.ts > sum > adds", "AssertionError: expected 3 to be 4 // Object.is equality"}},
		{"rustc error", "error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n  |\nerror: could not compile `rs`\n",
			[]string{"error[E0425]: cannot find value `x` in this scope", "--> src/lib.rs:3:5"}},
		{"colours and carriage returns", "\x1b[31m--- FAIL: TestA (0.00s)\x1b[0m\r\n    progress\r    a_test.go:2: \x1b]8;;x\x07bad\n",
			[]string{"--- FAIL: TestA (0.00s)", "a_test.go:2: bad"}},
		{"control characters and invalid UTF-8", "not ok 1 - a\x00b\xffc\n", []string{"not ok 1 - a b\uFFFDc"}},
		{"no newline at the end", "--- FAIL: TestA (0.00s)", []string{"--- FAIL: TestA (0.00s)"}},
		{"go json build output", `{"ImportPath":"x","Action":"build-output","Output":"./b.go:2:23: undefined: y\n"}` + "\n",
			[]string{"./b.go:2:23: undefined: y"}},
		{"go json output with escapes", `{"Time":"x","Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}` + "\n" +
			`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: got \"hi\tthere\", want \"\u00e9\"\n"}` + "\n",
			[]string{"--- FAIL: TestA (0.00s)", `a_test.go:3: got "hi there", want "é"`}},
		{"go json: a passing test's log line is a log line", `{"Action":"output","Test":"TestOK","Output":"    a_test.go:9: --- FAIL: TestFake (0.00s)\n"}` + "\n", nil},
		{"plain failing output names nothing", "boom\nexit status 1\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, FailuresIn(tc.out).Lines)
		})
	}
}

// TestFailureLinesAreBounded: however many failures and however long their lines, the quote
// holds MaxFailureLines lines of at most MaxFailureLineBytes, MaxFailureBytes in all, headlines
// before lines without one, and counts the failures it leaves out.
func TestFailureLinesAreBounded(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString("E   assert " + strings.Repeat("x", 50) + "\n\n")
		b.WriteString("--- FAIL: Test" + strings.Repeat("é", 300) + string(rune('A'+i%26)) + " (0.00s)\n")
		b.WriteString("    a_test.go:1: " + strings.Repeat("y", 5000) + "\n")
	}
	r := NewFailureLines()
	for _, chunk := range strings.SplitAfter(b.String(), "\n") { // written in pieces, as a process does
		_, _ = r.Write([]byte(chunk))
	}
	f := r.Failures()
	require.Len(t, f.Lines, MaxFailureLines)
	for _, l := range f.Lines {
		assert.LessOrEqual(t, len(l), MaxFailureLineBytes)
		assert.True(t, utf8.ValidString(l))
		assert.True(t, strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "a_test.go"), l)
	}
	assert.Positive(t, f.More)
	s := f.String()
	assert.LessOrEqual(t, len(s), MaxFailureBytes)
	assert.True(t, utf8.ValidString(s))
	assert.Contains(t, s, " more)")
}

// TestFailuresStringJoinsAndCounts pins the one-line form.
func TestFailuresStringJoinsAndCounts(t *testing.T) {
	assert.Equal(t, "", Failures{}.String())
	assert.Equal(t, "a | b", Failures{Lines: []string{"a", "b"}}.String())
	assert.Equal(t, "a (and 2 more)", Failures{Lines: []string{"a"}, More: 2}.String())
}

// FuzzFailureLines: any output, written in any pieces, never panics and yields a bounded,
// printable quote, the same as when every line is read in full.
func FuzzFailureLines(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "failines", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(7))
	}
	f.Add([]byte("not ok 1 - x\n  error: |-\n"), uint8(3))
	f.Add([]byte("  1) Failure:\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		r := NewFailureLines()
		full := NewFailureLines()
		full.noSkip = true
		_, _ = full.Write(data)
		n := int(step%64) + 1
		for len(data) > 0 {
			k := min(n, len(data))
			_, _ = r.Write(data[:k])
			data = data[k:]
		}
		fl := r.Failures()
		if want := full.Failures(); !reflect.DeepEqual(fl, want) {
			t.Fatalf("the lines passed over changed the quote:\n%#v\nread in full:\n%#v", fl, want)
		}
		if len(fl.Lines) > MaxFailureLines || fl.More < 0 {
			t.Fatalf("%d lines, %d more", len(fl.Lines), fl.More)
		}
		for _, l := range fl.Lines {
			if len(l) > MaxFailureLineBytes || !utf8.ValidString(l) || strings.ContainsAny(l, "\n\r\x1b") || l == "" {
				t.Fatalf("line not bounded or not clean: %q", l)
			}
		}
		if s := fl.String(); len(s) > MaxFailureBytes || !utf8.ValidString(s) {
			t.Fatalf("quote not bounded: %d bytes", len(s))
		}
	})
}

// BenchmarkFailureLines measures the reader on the output of a large passing go test -v run, the
// common case: every line is looked at, nothing is kept.
func BenchmarkFailureLines(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		sb.WriteString("=== RUN   TestCase" + strings.Repeat("x", i%7) + "\n    case_test.go:12: computing the value of the thing\n--- PASS: TestCase (0.00s)\n")
	}
	benchFailureLines(b, []byte(sb.String()))
}

// TestFailureLinesHoldLittleWhateverTheLines: the lines kept are cut as they are kept, so long
// lines in many failing and running tests do not make the reader hold much.
func TestFailureLinesHoldLittleWhateverTheLines(t *testing.T) {
	r := NewFailureLines()
	long := strings.Repeat("z", 60<<10)
	for i := range 200 {
		name := "Test" + strings.Repeat("N", i%50) + string(rune('a'+i%26))
		_, _ = r.Write([]byte("=== RUN   " + name + "\n    a_test.go:1: " + long + "\n    a_test.go:2: " + long + "\n"))
		_, _ = r.Write([]byte("--- FAIL: " + name + " " + long + "\n"))
	}
	held := 0
	for _, g := range r.groups {
		held += len(g.head)
		for _, d := range g.details {
			held += len(d)
		}
	}
	for _, lines := range r.pending {
		for _, l := range lines {
			held += len(l)
		}
	}
	assert.LessOrEqual(t, held, (maxFailGroups+maxPending)*(maxDetails+1)*MaxFailureLineBytes)
	assert.Len(t, r.Failures().Lines, MaxFailureLines)
}

// BenchmarkFailureLinesLog measures the reader on what most output is: lines no runner writes.
func BenchmarkFailureLinesLog(b *testing.B) {
	var sb strings.Builder
	for i := range 50000 {
		sb.WriteString("INFO  2026-12-04T22:40:00Z handled request " + strings.Repeat("a", i%13) + " in 3ms status=200 path=/api/v1/items\n")
	}
	benchFailureLines(b, []byte(sb.String()))
}

// benchFailureLines feeds out to a fresh reader in 32 KiB writes, as a process's output arrives,
// and takes its failures, b.N times.
func benchFailureLines(b *testing.B, out []byte) {
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		r := NewFailureLines()
		for p := out; len(p) > 0; {
			k := min(32<<10, len(p))
			_, _ = r.Write(p[:k])
			p = p[k:]
		}
		r.Failures()
	}
}
