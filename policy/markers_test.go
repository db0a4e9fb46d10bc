package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSkipMarkersOfEachLanguage: the default skip, focus and early-exit markers of each language
// are found, with white space and at word boundaries, and look-alike words are not.
func TestSkipMarkersOfEachLanguage(t *testing.T) {
	t.Parallel()
	tables := DefaultMarkers()
	found := map[string][]string{
		LangGo:           {`	t.Skip("flaky")`, `t.Skipf("x %d", 1)`, `	b.SkipNow()`, `t .Skip()`, `//go:build ignore`, `// +build ignore`, `os.Exit( 0 )`, `	flag.Set("test.run", "TestNew")`, `flag.Set( "test.skip", "TestFarewell")`, `func init() { syscall.Exit(0) }`, `unix.Exit(code)`},
		LangPython:       {`@unittest.skip("x")`, `@pytest.mark.skip`, `@pytest.mark.skipif(True, reason="x")`, `self.skipTest("x")`, `@pytest.mark.xfail`, `raise unittest.SkipTest("x")`, `sys.exit(0)`, `os._exit(0)`, `def load_tests(loader, tests, pattern):`},
		LangJS:           {`it.skip("x", () => {})`, `describe.only("x", () => {})`, `test.only(`, `xit("x")`, `xdescribe(`, `fit("x")`, `test("x", { skip: true }, () => {})`, `t.skip()`, `process.exit(0)`, `it.todo("x")`},
		LangRust:         {`#[ignore]`, `#[ignore = "slow"]`, `#[cfg(any())]`, `#[cfg(not(test))]`},
		LangJava:         {`@Disabled`, `@Ignore("x")`, `assumeTrue(false);`, `System.exit(0);`},
		LangRuby:         {`skip "later"`, `pending "x"`, `xit "x" do`, `fit "x" do`, `focus`},
		LangShell:        {`  skip "later"`},
		LangPytestConfig: {`addopts = -k "not farewell"`, `addopts = ["-k", "x"]`, `-k x`, `addopts = --deselect tests/test_a.py::test_x`, `addopts = --ignore=tests/test_a.py`},
	}
	for lang, lines := range found {
		for _, l := range lines {
			_, ok := tables.Skip(lang).Find(l)
			assert.True(t, ok, "%s: %q has a skip marker", lang, l)
		}
	}
	notFound := map[string][]string{
		// A look-alike (Cyrillic Ѕ) is another identifier: not a marker, and it skips nothing.
		LangGo:           {`if err != nil { os.Exit(1) }`, `skipped := 3`, `os.Exit(m.Run())`, `SkipList{}`, `t.Log("ok")`, `t.Ѕkip()`, `filepath.SkipDir`},
		LangPython:       {`skipped = 0`, `self.assertEqual(a, b)`, `sys.exits`, `reload_tests()`},
		LangJS:           {`exit()`, `const only = 1`, `it("x", () => {})`, `profit("x")`, `skipped.push(1)`},
		LangRust:         {`#[test]`, `#[cfg(test)]`},
		LangJava:         {`@Test`, `@Ignored2`},
		LangRuby:         {`skipped = 1`, `it "x" do`, `exit`},
		LangPytestConfig: {`addopts = -v`, `--keep`, `name = "pre-k"`},
	}
	for lang, lines := range notFound {
		for _, l := range lines {
			m, ok := tables.Skip(lang).Find(l)
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
		_, ok := m.Find(l)
		assert.False(t, ok, "%q", l)
	}
	for _, l := range []string{"xit(", "skipped; skip", "t.Fatalf(", "t.Fatal(", "é skip"} {
		_, ok := m.Find(l)
		assert.True(t, ok, "%q", l)
	}
	_, err = compileMarkers([]string{`a*`})
	assert.Error(t, err, "a marker that matches the empty string matches every line")
}

// TestSuppressionAndAssertionMarkers: suppression markers of each linter are found; assertion-like
// lines are counted per language.
func TestSuppressionAndAssertionMarkers(t *testing.T) {
	t.Parallel()
	tables := DefaultMarkers()
	for _, l := range []string{`x := f() //nolint:errcheck`, `import os  # noqa: F401`, `x = f()  # type: ignore[attr]`, `/* eslint-disable */`, `// @ts-ignore`, `// @ts-expect-error`, `#[allow(dead_code)]`, `@SuppressWarnings("unchecked")`, `# pylint: disable=W0611`, `# rubocop:disable Style/X`, `# shellcheck disable=SC2086`} {
		_, ok := tables.Suppress().Find(l)
		assert.True(t, ok, "%q is a suppression", l)
	}
	for _, l := range []string{`nolintx`, `x = 1 # type: int`} {
		_, ok := tables.Suppress().Find(l)
		assert.False(t, ok, "%q", l)
	}
	counts := map[string]struct {
		text string
		n    int
	}{
		LangGo:     {"if x { t.Fatalf(\"a\") }\nt.Error(1)\nrequire.NoError(t, err)\nt.Log(1)\n", 3},
		LangPython: {"self.assertEqual(a, b)\nassert x\nprint(1)\n", 2},
		LangJS:     {"assert.strictEqual(a, b)\nexpect(x).toBe(1)\nconsole.log(1)\n", 2},
		LangRust:   {"#[test]\nfn a() { assert_eq!(1, 1); }\n", 2},
		LangJava:   {"@Test\nassertEquals(1, x);\n", 2},
		LangRuby:   {"expect(x).to eq 1\nassert_equal 1, x\n", 2},
		LangShell:  {"[ \"$got\" = ok ] || exit 1\necho ok\n", 1},
	}
	for lang, c := range counts {
		assert.Equal(t, c.n, tables.Assert(lang).Count(c.text), "%s", lang)
	}
}

// TestLanguageOfFiles: marker languages by file name.
func TestLanguageOfFiles(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"a_test.go": LangGo, "t.py": LangPython, "a.test.TS": LangJS, "x.mjs": LangJS, "lib.rs": LangRust,
		"A.kt": LangJava, "a_spec.rb": LangRuby, "t.bats": LangShell, "setup.cfg": LangPytestConfig,
		"pyproject.toml": LangPytestConfig, "README.md": "", "a.txtar": "",
	} {
		assert.Equal(t, want, LanguageOf(p), p)
	}
}

// TestThePolicysTestsAreData: tests.protected replaces the table, tests.markers replaces the
// languages it lists and keeps the others, tests.integrity off is read; a bad glob or regex makes
// the policy invalid.
func TestThePolicysTestsAreData(t *testing.T) {
	t.Parallel()
	p, err := Parse("p.json", []byte(`{"tests": {"integrity": "off", "protected": ["checks/**"], "markers": {"skip": {"shell": ["LATER"]}, "suppress": ["shh"]}}}`))
	assert.NoError(t, err)
	assert.True(t, p.Tests.Off)
	assert.Equal(t, []string{"checks/**"}, p.Tests.Protected)
	_, ok := p.Tests.Markers.Skip(LangShell).Find("echo LATER")
	assert.True(t, ok)
	_, ok = p.Tests.Markers.Skip(LangShell).Find("skip")
	assert.False(t, ok, "the shell list was replaced")
	_, ok = p.Tests.Markers.Skip(LangGo).Find("t.Skip()")
	assert.True(t, ok, "the other languages keep their defaults")
	_, ok = p.Tests.Markers.Suppress().Find("# shh")
	assert.True(t, ok)
	d := Default()
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
		_, err := Parse("p.json", []byte(bad))
		assert.Error(t, err, bad)
	}
}
