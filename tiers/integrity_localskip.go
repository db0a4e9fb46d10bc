package tiers

import (
	"regexp"
	"strings"

	"github.com/geas-dev/geas/policy"
)

// A skip marker in a test file the work adds usually skips a test the work adds: `t.Skip` under
// testing.Short(), `@unittest.skip("not written yet")`, `test('x', { skip: 'later' }, …)`. That
// lowers no check of the base, and failing it would fail honest work; it is a warning
// (skip_added) instead. Only a line that is nothing but such a skip, in a file the base does not
// have, is one: the line must match one of the language's localSkip expressions whole, and every
// marker it holds must be a skip marker (skipKind) — never an early exit, a focus, a build of
// another file or a loader hook, and never a skip applied to a name by a call (in Python
// `unittest.skip("x")(FarewellTest)` marks the base's class itself).

const (
	lsStr    = `(?:"[^"\\]*"|'[^'\\]*')`
	lsValue  = `(?:"[^"\\]*"|'[^'\\]*'|[\w.]+|\(\s*\d+(?:\s*,\s*\d+)*\s*\))`
	lsPyArgs = `(?:\(\s*(?:` + lsValue + `(?:\s*(?:==|!=|<=|>=|<|>|\bin\b|\bnot\s+in\b)\s*` + lsValue + `)?\s*,?\s*)*(?:reason\s*=\s*` + lsStr + `)?\s*\))?`
	lsJSName = `\(\s*(?:"[^"\\]*"|'[^'\\]*'|` + "`[^`$\\\\]*`" + `)`
	lsJSFn   = `(?:\s*,\s*(?:async\s+)?(?:(?:\([\w\s,]*\)|\w+)\s*=>|function\s*\w*\s*\([\w\s,]*\))\s*(?:\{\s*(?:\}\s*\)\s*;?)?)?)?`
	lsJSEnd  = `\s*(?:\)\s*;?)?\s*$`
)

// localSkip are, per language, the lines that only skip the test they are in.
var localSkip = map[string][]*regexp.Regexp{
	policy.LangGo: {
		regexp.MustCompile(`^\s*(?:func\s+\w+\s*\(\s*\w+\s+\*testing\.[TB]\s*\)\s*\{\s*)?(?:if\s+testing\.Short\(\)\s*\{\s*)?\w+\.Skip(?:f|Now)?\(\s*(?:"[^"\\]*"\s*(?:,\s*[\w.]+\s*)*)?\)\s*(?:\}\s*)*$`),
		regexp.MustCompile(`^\s*//\s*(?:go:build|\+build)\s[\w\s!&|(),.]*$`),
	},
	policy.LangPython: {
		regexp.MustCompile(`^\s*@\s*(?:unittest\.|pytest\.mark\.)?(?:skip|skipIf|skipUnless|skipif|xfail)` + lsPyArgs + `\s*$`),
		regexp.MustCompile(`^\s*(?:self\.skipTest|pytest\.skip|raise\s+(?:unittest\.)?SkipTest)\(\s*` + lsStr + `?\s*\)\s*$`),
	},
	policy.LangJS: {
		regexp.MustCompile(`^\s*(?:test|it|describe|suite|context)\.(?:skip|todo)` + lsJSName + lsJSFn + lsJSEnd),
		regexp.MustCompile(`^\s*x(?:it|describe|test)` + lsJSName + lsJSFn + lsJSEnd),
		regexp.MustCompile(`^\s*(?:test|it|describe|suite)` + lsJSName + `\s*,\s*\{\s*(?:skip|todo)\s*:\s*(?:` + lsStr + `|true)\s*\}` + lsJSFn + lsJSEnd),
		regexp.MustCompile(`^\s*\w+\.(?:skip|todo)\(\s*` + lsStr + `?\s*\)\s*;?\s*$`),
	},
	policy.LangRust: {regexp.MustCompile(`^\s*#\[\s*ignore(?:\s*=\s*"[^"\\]*")?\s*\]\s*$`)},
	policy.LangJava: {regexp.MustCompile(`^\s*@(?:Disabled|Ignore)(?:\(\s*"[^"\\]*"\s*\))?\s*$`)},
	policy.LangRuby: {
		regexp.MustCompile(`^\s*(?:skip|pending)(?:\s*\(?\s*` + lsStr + `\s*\)?)?\s*$`),
		regexp.MustCompile(`^\s*x(?:it|describe|context|specify)\s*\(?\s*` + lsStr + `?\s*\)?\s*(?:do(?:\s*\|[\w\s,]*\|)?|\{)?\s*$`),
	},
	policy.LangShell: {regexp.MustCompile(`^\s*skip(?:\s+(?:` + lsStr + `|[\w.-]+))*\s*$`)},
}

// skipKind are the default skip markers (the expressions of the policy package's defaults) that
// only skip; the others end a run early, focus it, or change what is loaded.
var skipKind = map[string]bool{
	`Skip(f|Now)?`: true, `//\s*go:build`: true, `//\s*\+build`: true,
	`skip(If|Unless|Test|if)?`: true, `SkipTest`: true, `xfail`: true,
	`\.(skip|only|todo|skipIf|runIf)`: true, `xit`: true, `xdescribe`: true, `xtest`: true, `(skip|only|todo)\s*:`: true,
	`#\[\s*ignore`: true, `@Disabled`: true, `@Ignore`: true,
	`skip`: true, `pending`: true, `xcontext`: true, `xspecify`: true,
}

// onlySkips reports whether line, in a file the work adds, only skips the test it is in.
func onlySkips(lang, line string, m *policy.MarkerSet) bool {
	line = strings.TrimRight(line, "\r\n")
	local := false
	for _, re := range localSkip[lang] {
		if re.MatchString(line) {
			local = true
			break
		}
	}
	if !local {
		return false
	}
	for _, e := range m.FindAll(line) {
		if !skipKind[e] {
			return false
		}
	}
	return true
}
