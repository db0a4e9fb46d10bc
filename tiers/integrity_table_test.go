package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSkipMarkersOfEachLanguage: the default skip, focus and early-exit markers of each language
// are found, with white space and at word boundaries, and look-alike words are not.
func TestSkipMarkersOfEachLanguage(t *testing.T) {
	t.Parallel()
	tables := defaultMarkerTables()
	found := map[string][]string{
		langGo:           {`	t.Skip("flaky")`, `t.Skipf("x %d", 1)`, `	b.SkipNow()`, `t .Skip()`, `//go:build ignore`, `// +build ignore`, `os.Exit( 0 )`, `	flag.Set("test.run", "TestNew")`, `flag.Set( "test.skip", "TestFarewell")`, `func init() { syscall.Exit(0) }`, `unix.Exit(code)`},
		langPython:       {`@unittest.skip("x")`, `@pytest.mark.skip`, `@pytest.mark.skipif(True, reason="x")`, `self.skipTest("x")`, `@pytest.mark.xfail`, `raise unittest.SkipTest("x")`, `sys.exit(0)`, `os._exit(0)`, `def load_tests(loader, tests, pattern):`},
		langJS:           {`it.skip("x", () => {})`, `describe.only("x", () => {})`, `test.only(`, `xit("x")`, `xdescribe(`, `fit("x")`, `test("x", { skip: true }, () => {})`, `t.skip()`, `process.exit(0)`, `it.todo("x")`},
		langRust:         {`#[ignore]`, `#[ignore = "slow"]`, `#[cfg(any())]`, `#[cfg(not(test))]`},
		langJava:         {`@Disabled`, `@Ignore("x")`, `assumeTrue(false);`, `System.exit(0);`},
		langRuby:         {`skip "later"`, `pending "x"`, `xit "x" do`, `fit "x" do`, `focus`},
		langShell:        {`  skip "later"`},
		langPytestConfig: {`addopts = -k "not farewell"`, `addopts = ["-k", "x"]`, `-k x`, `addopts = --deselect tests/test_a.py::test_x`, `addopts = --ignore=tests/test_a.py`},
	}
	for lang, lines := range found {
		for _, l := range lines {
			_, ok := tables.skip[lang].find(l)
			assert.True(t, ok, "%s: %q has a skip marker", lang, l)
		}
	}
	notFound := map[string][]string{
		// A look-alike (Cyrillic Ѕ) is another identifier: not a marker, and it skips nothing.
		langGo:           {`if err != nil { os.Exit(1) }`, `skipped := 3`, `os.Exit(m.Run())`, `SkipList{}`, `t.Log("ok")`, `t.Ѕkip()`, `filepath.SkipDir`},
		langPython:       {`skipped = 0`, `self.assertEqual(a, b)`, `sys.exits`, `reload_tests()`},
		langJS:           {`exit()`, `const only = 1`, `it("x", () => {})`, `profit("x")`, `skipped.push(1)`},
		langRust:         {`#[test]`, `#[cfg(test)]`},
		langJava:         {`@Test`, `@Ignored2`},
		langRuby:         {`skipped = 1`, `it "x" do`, `exit`},
		langPytestConfig: {`addopts = -v`, `--keep`, `name = "pre-k"`},
	}
	for lang, lines := range notFound {
		for _, l := range lines {
			m, ok := tables.skip[lang].find(l)
			assert.False(t, ok, "%s: %q has no skip marker (found %s)", lang, l, m)
		}
	}
}

// TestMarkersMatchAtWordBoundaries: `xit` is not found in `exit`, a longer alternative is
// preferred when the shorter one would end inside a word, and a later bounded occurrence is found
// after an unbounded one.
func TestMarkersMatchAtWordBoundaries(t *testing.T) {
	t.Parallel()
	m, err := compileMarkers([]string{`xit`, `skip`, `Fatal|Fatalf`})
	assert.NoError(t, err)
	for _, l := range []string{"exit 1", "exits", "skipped", "unskip", "Fatalfoo"} {
		_, ok := m.find(l)
		assert.False(t, ok, "%q", l)
	}
	for _, l := range []string{"xit(", "skipped; skip", "t.Fatalf(", "t.Fatal(", "é skip"} {
		_, ok := m.find(l)
		assert.True(t, ok, "%q", l)
	}
	_, err = compileMarkers([]string{`a*`})
	assert.Error(t, err, "a marker that matches the empty string matches every line")
}

// TestSuppressionAndAssertionMarkers: suppression markers of each linter are found; assertion-like
// lines are counted per language.
func TestSuppressionAndAssertionMarkers(t *testing.T) {
	t.Parallel()
	tables := defaultMarkerTables()
	for _, l := range []string{`x := f() //nolint:errcheck`, `import os  # noqa: F401`, `x = f()  # type: ignore[attr]`, `/* eslint-disable */`, `// @ts-ignore`, `// @ts-expect-error`, `#[allow(dead_code)]`, `@SuppressWarnings("unchecked")`, `# pylint: disable=W0611`, `# rubocop:disable Style/X`, `# shellcheck disable=SC2086`} {
		_, ok := tables.suppress.find(l)
		assert.True(t, ok, "%q is a suppression", l)
	}
	for _, l := range []string{`nolintx`, `x = 1 # type: int`} {
		_, ok := tables.suppress.find(l)
		assert.False(t, ok, "%q", l)
	}
	counts := map[string]struct {
		text string
		n    int
	}{
		langGo:     {"if x { t.Fatalf(\"a\") }\nt.Error(1)\nrequire.NoError(t, err)\nt.Log(1)\n", 3},
		langPython: {"self.assertEqual(a, b)\nassert x\nprint(1)\n", 2},
		langJS:     {"assert.strictEqual(a, b)\nexpect(x).toBe(1)\nconsole.log(1)\n", 2},
		langRust:   {"#[test]\nfn a() { assert_eq!(1, 1); }\n", 2},
		langJava:   {"@Test\nassertEquals(1, x);\n", 2},
		langRuby:   {"expect(x).to eq 1\nassert_equal 1, x\n", 2},
		langShell:  {"[ \"$got\" = ok ] || exit 1\necho ok\n", 1},
	}
	for lang, c := range counts {
		assert.Equal(t, c.n, tables.assert[lang].count(c.text), "%s", lang)
	}
}

// TestLanguageOfFiles: marker languages by file name.
func TestLanguageOfFiles(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"a_test.go": langGo, "t.py": langPython, "a.test.TS": langJS, "x.mjs": langJS, "lib.rs": langRust,
		"A.kt": langJava, "a_spec.rb": langRuby, "t.bats": langShell, "setup.cfg": langPytestConfig,
		"pyproject.toml": langPytestConfig, "README.md": "", "a.txtar": "",
	} {
		assert.Equal(t, want, languageOf(p), p)
	}
}

// TestThePolicysTestsAreData: tests.protected replaces the table, tests.markers replaces the
// languages it lists and keeps the others, tests.integrity off is read; a bad glob or regex makes
// the policy invalid.
func TestThePolicysTestsAreData(t *testing.T) {
	t.Parallel()
	p, err := ParsePolicy("p.json", []byte(`{"tests": {"integrity": "off", "protected": ["checks/**"], "markers": {"skip": {"shell": ["LATER"]}, "suppress": ["shh"]}}}`))
	assert.NoError(t, err)
	assert.True(t, p.Tests.Off)
	assert.Equal(t, []string{"checks/**"}, p.Tests.Protected)
	_, ok := p.Tests.Markers.skip[langShell].find("echo LATER")
	assert.True(t, ok)
	_, ok = p.Tests.Markers.skip[langShell].find("skip")
	assert.False(t, ok, "the shell list was replaced")
	_, ok = p.Tests.Markers.skip[langGo].find("t.Skip()")
	assert.True(t, ok, "the other languages keep their defaults")
	_, ok = p.Tests.Markers.suppress.find("# shh")
	assert.True(t, ok)
	d := DefaultPolicy()
	assert.False(t, d.Tests.Off)
	assert.Equal(t, defaultProtected, d.Tests.Protected)
	for _, bad := range []string{
		`{"tests": {"markers": {"skip": {"shell": ["(unclosed"]}}}}`,
		`{"tests": {"markers": {"skip": {"cobol": ["x"]}}}}`,
		`{"tests": {"markers": {"assert": {"go": ["x*"]}}}}`,
		`{"tests": {"protected": ["[unclosed"]}}`,
		`{"tests": {"integrity": "maybe"}}`,
		`{"tests": {"Integrity": "off"}}`,
	} {
		_, err := ParsePolicy("p.json", []byte(bad))
		assert.Error(t, err, bad)
	}
}
