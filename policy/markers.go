package policy

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/geas-dev/geas/internal/text"
)

// The test-integrity tables of SPEC §5.2a: which files are protected checks, and the markers the
// added lines are scanned for. They are data: the policy's tests.protected replaces
// defaultProtected, and tests.markers replaces a language's list; docs/contract.md documents the
// defaults.

// defaultProtected are the test files by convention (Go, Python, JavaScript/TypeScript, Rust,
// Java/Kotlin, Ruby, shell) and the test-runner configuration files. Globs match the path relative
// to the project root, case-insensitively (a case-insensitive file system finds Test/x_test.go for
// test/x_test.go).
var defaultProtected = []string{
	"**/*_test.go", "**/test_*.py", "**/*_test.py", "**/conftest.py",
	"**/tests/**", "**/test/**", "**/__tests__/**", "**/*.test.*", "**/*.spec.*",
	"**/src/test/**", "**/spec/**", "**/testdata/**", "**/*_spec.rb", "**/*.bats",
	"**/pytest.ini", "**/tox.ini", "**/jest.config.*", "**/vitest.config.*", "**/.mocharc*",
	"**/karma.conf.*", "**/phpunit.xml*", "**/.nycrc*", "**/codecov.yml",
	"**/.pytest.ini", "**/.npmrc", "**/.yarnrc", "**/.yarnrc.yml", "**/go.work",
}

// Languages of the marker tables, by file name.
const (
	LangGo           = "go"
	LangPython       = "python"
	LangJS           = "javascript"
	LangRust         = "rust"
	LangJava         = "java"
	LangRuby         = "ruby"
	LangShell        = "shell"
	LangPytestConfig = "pytest-config"
)

// markerLanguages are the languages a policy's tests.markers may name.
var markerLanguages = []string{LangGo, LangPython, LangJS, LangRust, LangJava, LangRuby, LangShell, LangPytestConfig}

// LanguageOf names the marker language of a file by its name ("" for none).
func LanguageOf(p string) string {
	base := strings.ToLower(path.Base(p))
	switch base {
	case "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml":
		return LangPytestConfig
	}
	switch path.Ext(base) {
	case ".go":
		return LangGo
	case ".py":
		return LangPython
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return LangJS
	case ".rs":
		return LangRust
	case ".java", ".kt", ".kts":
		return LangJava
	case ".rb":
		return LangRuby
	case ".sh", ".bash", ".bats", ".zsh":
		return LangShell
	}
	return ""
}

// defaultSkipMarkers are, per language, the markers that skip, focus or end tests early: one added
// in a test file is a fail (tests_weakened). They are case-sensitive regular expressions (Go
// syntax) matched at word boundaries (see MarkerSet.Find). A build constraint added to a Go test
// file is a marker: `//go:build ignore` takes the file out of `go test`.
var defaultSkipMarkers = map[string][]string{
	LangGo: {`Skip(f|Now)?`, `//\s*go:build`, `//\s*\+build`, `os\.Exit\(\s*0\s*\)`, `(syscall|unix)\.Exit\(`, `flag\.Set\(\s*"test\.`},
	LangPython: {`skip(If|Unless|Test|if)?`, `SkipTest`, `xfail`, `__unittest_skip__`,
		`sys\.exit`, `os\._exit`, `load_tests`},
	LangJS: {`\.(skip|only|todo|skipIf|runIf)`, `xit`, `xdescribe`, `xtest`, `fit`, `fdescribe`,
		`(skip|only|todo)\s*:`, `process\.exit`},
	LangRust:         {`#\[\s*ignore`, `#\[\s*cfg\(\s*(any\(\s*\)|not\(\s*test\s*\))`},
	LangJava:         {`@Disabled`, `@Ignore`, `assume(True|False|That)`, `System\.exit\(\s*0\s*\)`},
	LangRuby:         {`skip`, `pending`, `xit`, `xdescribe`, `xcontext`, `xspecify`, `fit`, `fdescribe`, `fcontext`, `focus`},
	LangShell:        {`skip`},
	LangPytestConfig: {`(^|[\s"'=\[,])-k`, `--deselect`, `--ignore(-glob)?`},
}

// defaultSuppressMarkers silence a linter or a type checker; one added anywhere is a warning.
var defaultSuppressMarkers = []string{
	`//\s*nolint`, `#\s*noqa`, `#\s*type:\s*ignore`, `eslint-disable(-next-line|-line)?`,
	`@ts-ignore`, `@ts-expect-error`, `@ts-nocheck`, `#!?\[\s*allow\(`, `@SuppressWarnings`,
	`pylint:\s*disable`, `rubocop:disable`, `shellcheck\s+disable`,
}

// defaultAssertMarkers are, per language, the assertion-like lines counted at the base and the
// head of a changed protected file: a net drop in a may-change file is a fail.
var defaultAssertMarkers = map[string][]string{
	LangGo:     {`t\.(Error|Errorf|Fatal|Fatalf|Fail|FailNow)`, `(assert|require)\.\w+`, `cmp\.Diff`},
	LangPython: {`assert\w*`, `(self\.)?fail\w*\(`, `pytest\.raises`},
	LangJS:     {`assert\w*`, `expect\s*\(`, `should`},
	LangRust:   {`assert\w*!`, `#\[\s*test\s*\]`, `#\[\s*should_panic`},
	LangJava:   {`assert\w*`, `@Test`, `verify\s*\(`},
	LangRuby:   {`assert\w*`, `expect\s*[({]`, `should`, `refute\w*`},
	LangShell:  {`\[\[?\s`, `test\s+-\w`, `grep\s+-\w*q`, `assert\w*`},
}

// MarkerSet is one compiled marker list.
type MarkerSet struct {
	exprs []string
	res   []*regexp.Regexp
	any   *regexp.Regexp // all of them, for the first pass over a line
	// lits are lowercase ASCII literals of which every match on an ASCII line holds one (the stub
	// matcher's pre-filter, text.RequiredLiterals); filter is false when some marker has none.
	lits   [][]byte
	filter bool
}

func compileMarkers(exprs []string) (*MarkerSet, error) {
	m := &MarkerSet{exprs: exprs}
	for _, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("bad regex %q: %w", e, err)
		}
		// Leftmost-longest: of `Fatal|Fatalf`, the match that can end at a word boundary.
		re.Longest()
		if re.MatchString("") {
			return nil, fmt.Errorf("regex %q matches the empty string", e)
		}
		m.res = append(m.res, re)
	}
	m.filter = true
	for _, e := range exprs {
		lits, ok := text.RequiredLiterals(e)
		if !ok || strings.Contains(e, `\Q`) {
			m.filter = false
		}
		m.lits = append(m.lits, lits...)
	}
	m.lits = text.MinimalLiterals(m.lits)
	if len(exprs) > 0 {
		any, err := regexp.Compile("(?:" + strings.Join(exprs, ")|(?:") + ")")
		if err != nil { // a \Q without \E quotes the joining parentheses: try one by one
			any = nil
		}
		m.any = any
	}
	return m, nil
}

// mayMatch is the pre-filter: false only for an ASCII line that holds none of the literals,
// compared case-insensitively (which only widens it for case-sensitive markers).
func (m *MarkerSet) mayMatch(line string) bool {
	if !m.filter {
		return true
	}
	var stack [256]byte
	ok, _ := text.MayHoldLiteral(stack[:0], line, m.lits)
	return ok
}

// Find returns the first marker that occurs in line at word boundaries: a match whose first
// character is a letter, digit or underscore must not follow one, and one whose last character is
// must not be followed by one, so that `xit` is not found in `exit` nor `skip` in `skipped`. A
// marker inside a string or a comment counts: the scan reads lines, not programs (SPEC §5.2a).
func (m *MarkerSet) Find(line string) (string, bool) {
	if m == nil || len(m.res) == 0 || !m.mayMatch(line) || m.any != nil && !m.any.MatchString(line) {
		return "", false
	}
	for i, re := range m.res {
		// Look again after each rejected start: "skipped; skip" finds the bounded "skip".
		for start := 0; start < len(line); {
			loc := re.FindStringIndex(line[start:])
			if loc == nil {
				break
			}
			a, b := start+loc[0], start+loc[1]
			if atWordBoundaries(line, a, b) {
				return m.exprs[i], true
			}
			_, size := utf8.DecodeRuneInString(line[a:])
			start = a + max(size, 1)
		}
	}
	return "", false
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func atWordBoundaries(line string, a, b int) bool {
	first, _ := utf8.DecodeRuneInString(line[a:])
	last, _ := utf8.DecodeLastRuneInString(line[:b])
	if isWordRune(first) && a > 0 {
		if before, _ := utf8.DecodeLastRuneInString(line[:a]); isWordRune(before) {
			return false
		}
	}
	if isWordRune(last) && b < len(line) {
		if after, _ := utf8.DecodeRuneInString(line[b:]); isWordRune(after) {
			return false
		}
	}
	return true
}

// FindAll returns every marker expression that occurs in line at word boundaries.
func (m *MarkerSet) FindAll(line string) []string {
	var out []string
	for i := range m.res {
		one := &MarkerSet{exprs: m.exprs[i : i+1], res: m.res[i : i+1]}
		if _, ok := one.Find(line); ok {
			out = append(out, m.exprs[i])
		}
	}
	return out
}

// Count returns how many lines of text have a marker.
func (m *MarkerSet) Count(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		if _, ok := m.Find(strings.TrimRight(line, "\r\n")); ok {
			n++
		}
	}
	return n
}

// Empty reports whether the set has no marker (a nil set has none).
func (m *MarkerSet) Empty() bool { return m == nil || len(m.res) == 0 }

// Markers are the compiled marker tables of a policy.
type Markers struct {
	skip     map[string]*MarkerSet
	assert   map[string]*MarkerSet
	suppress *MarkerSet
}

// Skip is the skip, focus and early-exit markers of a language (nil for a language without).
func (t *Markers) Skip(lang string) *MarkerSet { return t.skip[lang] }

// Assert is the assertion-like markers of a language (nil for a language without).
func (t *Markers) Assert(lang string) *MarkerSet { return t.assert[lang] }

// Suppress is the markers that silence a linter or a type checker, in every language.
func (t *Markers) Suppress() *MarkerSet { return t.suppress }

// DefaultMarkers returns the built-in marker tables, compiled once a process and shared: nothing
// changes them.
func DefaultMarkers() *Markers { return defaultMarkerTables() }

// defaultMarkerTables are compiled once a process.
var defaultMarkerTables = sync.OnceValue(func() *Markers {
	t, err := buildMarkerTables(nil, nil, nil)
	if err != nil {
		panic(err)
	}
	return t
})

// buildMarkerTables compiles the default tables with the lists a policy replaces (nil: not set).
func buildMarkerTables(skip, assert map[string][]string, suppress []string) (*Markers, error) {
	t := &Markers{skip: map[string]*MarkerSet{}, assert: map[string]*MarkerSet{}}
	for _, lang := range markerLanguages {
		exprs, ok := skip[lang]
		if !ok {
			exprs = defaultSkipMarkers[lang]
		}
		m, err := compileMarkers(exprs)
		if err != nil {
			return nil, fmt.Errorf("skip/%s: %w", lang, err)
		}
		t.skip[lang] = m
		exprs, ok = assert[lang]
		if !ok {
			exprs = defaultAssertMarkers[lang]
		}
		if m, err = compileMarkers(exprs); err != nil {
			return nil, fmt.Errorf("assert/%s: %w", lang, err)
		}
		t.assert[lang] = m
	}
	if suppress == nil {
		suppress = defaultSuppressMarkers
	}
	m, err := compileMarkers(suppress)
	if err != nil {
		return nil, fmt.Errorf("suppress: %w", err)
	}
	t.suppress = m
	return t, nil
}
