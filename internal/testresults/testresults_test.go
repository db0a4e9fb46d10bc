package testresults

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream feeds data to f's stream reader in chunks of n bytes, as a pipe would.
func stream(t *testing.T, f Format, data string, n int) *Summary {
	t.Helper()
	st := NewStream(f)
	require.NotNil(t, st)
	for len(data) > 0 {
		k := min(n, len(data))
		_, err := st.Write([]byte(data[:k]))
		require.NoError(t, err)
		data = data[k:]
	}
	return st.Finish()
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func TestGoTestJSONCountsTestsAndFailedPackages(t *testing.T) {
	t.Parallel()
	data := readTestdata(t, "gotest.json")
	for _, chunk := range []int{1, 7, 4096, len(data)} {
		s := stream(t, GoTestJSON, data, chunk)
		assert.Equal(t, 2, s.Passed, "TestPass, TestSub/ok")
		assert.Equal(t, 4, s.Failed, "TestFail, TestSub/bad, TestSub and the package that does not build")
		assert.Equal(t, 1, s.Skipped)
		assert.Equal(t, []string{
			"example.com/m/broken [build failed]", "example.com/m.TestFail",
			"example.com/m.TestSub/bad", "example.com/m.TestSub",
		}, s.Failing)
		assert.Equal(t, Pass, s.Names["example.com/m.TestPass"])
		assert.Equal(t, Skip, s.Names["example.com/m.TestSkip"])
		assert.False(t, s.Truncated)
	}
}

func TestGoTestJSONPackageFailureWithoutFailingTestIsAFailure(t *testing.T) {
	t.Parallel()
	// A test binary that exits early (os.Exit, a panic in TestMain) fails its package with no
	// failing test; the package failure must not vanish, and must not count twice when a test
	// of the package failed.
	s := stream(t, GoTestJSON, `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"p"}
{"Action":"fail","Package":"q","Test":"TestB"}
{"Action":"fail","Package":"q"}
`, 64)
	assert.Equal(t, 1, s.Passed)
	assert.Equal(t, 2, s.Failed)
	assert.Equal(t, []string{"p [package failed]", "q.TestB"}, s.Failing)
}

func TestGoTestJSONIgnoresWhatIsNotAnEvent(t *testing.T) {
	t.Parallel()
	s := stream(t, GoTestJSON, "# example.com/m\nok  \texample.com/m\t0.1s\n--- FAIL: TestX\n{not json}\n"+
		`{"Action":"output","Package":"p","Test":"TestA","Output":"{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"Forged\"}\n"}`+"\n"+
		`{"Action":"pass","Test":"NoPackage"}`+"\n"+strings.Repeat("x", maxLine+10)+"\n"+
		`{"Action":"pass","Package":"p","Test":"TestA"}`, 3)
	assert.Equal(t, 1, s.Passed)
	assert.Equal(t, 0, s.Failed)
	assert.Equal(t, map[string]Outcome{"p.TestA": Pass}, s.Names)
}

func TestTAPFromNodeCountsEveryTestPoint(t *testing.T) {
	t.Parallel()
	data := readTestdata(t, "node.tap")
	for _, chunk := range []int{1, 13, len(data)} {
		s := stream(t, TAP, data, chunk)
		// node itself says: tests 7, pass 2, fail 3, skipped 1, todo 1 (a failing todo is not a failure).
		assert.Equal(t, 2, s.Passed)
		assert.Equal(t, 3, s.Failed)
		assert.Equal(t, 2, s.Skipped, "the skip and the failing todo")
		assert.Equal(t, []string{"fails", "suite > inner bad", "suite"}, s.Failing)
		assert.Equal(t, Pass, s.Names["suite > inner ok"])
		assert.NotContains(t, s.Names, "forged", "a comment line is not a test point")
	}
}

func TestTAPPlanMustMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tap            string
		passed, failed, skip int
		failing              []string
	}{
		{"plan kept", "1..2\nok 1 - a\nok 2 - b\n", 2, 0, 0, nil},
		{"plan at the end", "TAP version 14\nok 1 - a\nnot ok 2 - b # TODO soon\n1..2\n", 1, 0, 1, nil},
		{"fewer than planned", "1..5\nok 1 - a\nok 2 - b\nok 3 - c\n", 3, 1, 0, []string{"plan 1..5 but 3 test points"}},
		{"no plan", "ok 1 - a\n", 1, 1, 0, []string{"no plan: 1 test points and no 1..N line (the run may have stopped early)"}},
		{"zero planned", "1..0 # SKIP no tests here\n", 0, 0, 0, nil},
		{"nothing", "some output\n", 0, 0, 0, nil},
		{"bail out", "1..3\nok 1 - a\nBail out! database down\n", 1, 2, 0, []string{"Bail out! database down", "plan 1..3 but 1 test points"}},
		{"skip directive any case", "1..2\nok 1 - a # skipped: no network\nok 2 # Skip\n", 0, 0, 2, nil},
		{"not ok with skip still fails", "1..1\nnot ok 1 - a # SKIP\n", 0, 1, 0, []string{"a"}},
		{"escaped hash", "1..1\nnot ok 1 - counts \\# 12 # TODO\n", 0, 0, 1, nil},
		{"no description", "1..1\nnot ok 1\n", 0, 1, 0, []string{"test 1"}},
		{"not a test point", "1..1\nokay then\nok 1 - a\n", 1, 0, 0, nil},
		{"CRLF", "1..1\r\nnot ok 1 - a\r\n", 0, 1, 0, []string{"a"}},
		{"nested plan short", "1..1\n# Subtest: s\n    1..2\n    ok 1 - x\nok 1 - s\n", 2, 1, 0, []string{"s: plan 1..2 but 1 test points"}},
		{"yaml block hides nothing", "1..1\nnot ok 1 - a\n  ---\n  ok 2 - hidden\n  ...\n", 0, 1, 0, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stream(t, TAP, tc.tap, 5)
			assert.Equal(t, tc.passed, s.Passed, "passed")
			assert.Equal(t, tc.failed, s.Failed, "failed")
			assert.Equal(t, tc.skip, s.Skipped, "skipped")
			assert.Equal(t, tc.failing, s.Failing)
		})
	}
}

func TestJUnitFromUnittest(t *testing.T) {
	t.Parallel()
	s := newSummary(JUnit)
	f, err := os.Open(filepath.Join("testdata", "unittest.junit.xml"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, ParseJUnit(f, s))
	assert.Equal(t, 1, s.Passed)
	assert.Equal(t, 2, s.Failed)
	assert.Equal(t, 1, s.Skipped)
	assert.Equal(t, []string{"test_calc.TestCalc.test_boom", "test_calc.TestCalc.test_sub"}, s.Failing)
}

func TestJUnitShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, xml            string
		passed, failed, skip int
		failing              []string
		err                  string
	}{
		{name: "testsuites root", xml: `<testsuites><testsuite name="a" failures="1"><testcase name="x"/><testcase classname="C" name="y"><failure/></testcase></testsuite></testsuites>`,
			passed: 1, failed: 1, failing: []string{"C.y"}},
		{name: "nested suites", xml: `<testsuites><testsuite name="o" failures="1"><testsuite name="i" failures="1"><testcase name="x"><failure/></testcase></testsuite></testsuite></testsuites>`,
			failed: 1, failing: []string{"x"}},
		{name: "suite error outside any case", xml: `<testsuite name="pkg" errors="1" tests="0"></testsuite>`,
			failed: 1, failing: []string{"pkg [suite reports 1 failures and errors, its test cases 0]"}},
		{name: "skipped and failed is failed", xml: `<testsuite><testcase name="x"><skipped/><error/></testcase></testsuite>`,
			failed: 1, failing: []string{"x"}},
		{name: "skipped", xml: `<testsuite><testcase name="x"><skipped message="m"/></testcase></testsuite>`, skip: 1},
		{name: "empty suite", xml: `<testsuite name="a" tests="0"/>`},
		{name: "wrong root", xml: `<html><testcase name="x"/></html>`, err: "root element <html>"},
		{name: "not xml", xml: `ok 1 - x`, err: "no <testsuites>"},
		{name: "truncated", xml: `<testsuite><testcase name="x">`, err: "xml:"},
		{name: "empty", xml: ``, err: "no <testsuites>"},
		{name: "too deep", xml: `<testsuite>` + strings.Repeat("<a>", maxJUnitDepth) + strings.Repeat("</a>", maxJUnitDepth) + `</testsuite>`, err: "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSummary(JUnit)
			err := ParseJUnit(strings.NewReader(tc.xml), s)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.passed, s.Passed, "passed")
			assert.Equal(t, tc.failed, s.Failed, "failed")
			assert.Equal(t, tc.skip, s.Skipped, "skipped")
			assert.Equal(t, tc.failing, s.Failing)
		})
	}
}

func TestNamesAreBoundedAndRepeatsKeepTheWorst(t *testing.T) {
	t.Parallel()
	s := newSummary(TAP)
	s.add("a", Pass)
	s.add("a", Fail)
	s.add("a", Pass)
	assert.Equal(t, Fail, s.Names["a"])
	assert.Equal(t, 2, s.Passed)
	long := strings.Repeat("é", MaxNameBytes)
	s.add(long+"\n\x1b[31m", Fail)
	for n := range s.Names {
		assert.LessOrEqual(t, len(n), MaxNameBytes)
		assert.NotContains(t, n, "\n")
	}
	for i := range MaxNames + 5 {
		s.add("n"+strconv.Itoa(i), Fail)
	}
	assert.Equal(t, MaxNames, len(s.Names))
	assert.True(t, s.Truncated)
	assert.Len(t, s.Failing, MaxFailing)
	assert.Contains(t, s.FailingText(), "more")
}

// TestALongTAPNameIsCutBetweenCharacters: a subtest header or a test point's description longer
// than MaxNameBytes is cut between characters, so no name kept shows a replacement character the
// test's name did not hold (the half of a cut character), and every name is within the bound; the
// three tests keep three names, and a name that fits is kept whole.
func TestALongTAPNameIsCutBetweenCharacters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", MaxNameBytes-1) + "é tail"
	data := "1..2\n# Subtest: " + long + "\n    1..1\n    ok 1 - inner\nok 1 - " + long + "\nok 2 - ünïcode fits\n"
	s := stream(t, TAP, data, len(data))
	require.Len(t, s.Names, 3)
	for name := range s.Names {
		assert.True(t, utf8.ValidString(name), "%q", name)
		assert.NotContains(t, name, "\uFFFD", "a cut fell inside a character")
		assert.LessOrEqual(t, len(name), MaxNameBytes, "%q", name)
	}
	assert.Contains(t, s.Names, "ünïcode fits")
}
