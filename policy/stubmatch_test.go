package policy

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubLines is an adversarial corpus for the stub matcher: case variants, Unicode case folding
// onto ASCII ('ſ' folds to 's', 'K' (Kelvin sign) to 'k'), near misses, CRLF, NUL bytes,
// invalid UTF-8, and markers at the edges of a line.
var stubLines = []string{
	"", " ", "TODO", "todo", "ToDo: later", "// TODO(x)", "TOD0", "T O D O", "xTODOx", "FIXME", "fixme",
	"FiXmE", "fix me", "XXX", "xx", "xXx", "not implemented", "NOT IMPLEMENTED", "not  implemented",
	"notimplemented", "Unimplemented!", "unimplement", `panic("todo")`, `PANIC("TODO`, `panic('todo')`,
	"raise NotImplementedError", "raise NotImplemented", "raiſe NotImplemented", "RAIſE notimplemented",
	"NotImplementedError", "notimplementederror", `throw new Error("not implemented")`,
	`throw new Error('Not Implemented')`, "throw new Error(`not implemented`)", "THROW NEW ERROR(\"NOT IMPLEMENTED",
	"HAcK", "hack", "HACK", "haK", "ſtub", "STUB", "stub", "ﬅub", "Ǆ", "ǆ", "dž",
	"TODO\r", "\rTODO", "TO\x00DO", "\x00TODO\x00", "\xffTODO", "TO\xffDO", "\xff\xfe", "ToDo\xc3",
	"café", "CAFÉ", "cafe", "é", "e", "K", "k", "KELVIN", "kelvin", "ſ", "s", "S",
	"a line with no marker at all", "func main() { fmt.Println(\"hello\") }", "x := todoList[0]",
}

// stubPatternSets are the default patterns and custom ones as a policy compiles them ("(?i)"
// prepended): Unicode literals, case-sensitive groups, classes, anchors, alternations with an
// empty branch, \Q...\E quoting, a pattern that matches everything.
var stubPatternSets = [][]string{
	nil,
	{`hack`, `ſtub`},
	{`(?-i:TODO)`, `é`},
	{`ha[ck]k`, `^stub$`, `kelvin|`},
	{`\Qnot implemented`, `todo`},
	{`caf\x{e9}`, `dž`, `s+t`},
	{`x*`, `todo`},
	{`(?:fix|hack)me`, `k{2,}`, `(todo){1}`},
	{`[^a-z]`},
	{`\btodo\b`, `(?s).todo`},
}

func stubPolicy(t testing.TB, exprs []string) Policy {
	t.Helper()
	p := Default()
	if exprs == nil {
		return p
	}
	p.StubPatterns = nil
	for _, e := range exprs {
		re, err := regexp.Compile("(?i)" + e)
		require.NoError(t, err, e)
		p.StubPatterns = append(p.StubPatterns, re)
	}
	return p
}

// chunks cuts a line as internal/git hands a long line on: pieces of 1 MiB, each starting 4 KiB
// before the end of the one before it.
func chunks(line string) []string {
	const maxChunk, overlap = 1 << 20, 4 << 10
	var out []string
	for len(line) > maxChunk {
		out = append(out, line[:maxChunk])
		line = line[maxChunk-overlap:]
	}
	return append(out, line)
}

// The matcher names the same pattern as Policy.IsStub for every line of the corpus, under every
// pattern set, including the pieces of long lines with a marker on a piece boundary.
func TestStubMatcherEqualsIsStub(t *testing.T) {
	t.Parallel()
	// A long line as internal/git cuts it, a marker across the first cut (the first piece ends in
	// "To", the second holds "ToDo"); only with the default patterns: a case-folding regexp runs
	// at a few MB/s, so each 1 MiB piece costs the old matcher about a second.
	filler := strings.Repeat("a", 1<<20)
	long := chunks(filler[:1<<20-2] + "ToDo" + filler[:100] + "ſ")
	require.Len(t, long, 2)
	require.True(t, strings.HasSuffix(long[0], "To"))
	for i, exprs := range stubPatternSets {
		lines := stubLines
		if i == 0 {
			lines = slices.Concat(stubLines, long)
		}
		p := stubPolicy(t, exprs)
		m := NewStubMatcher(p.StubPatterns)
		matched := 0
		for _, line := range lines {
			wantP, want := p.IsStub(line)
			gotP, got := m.Match(line)
			require.Equal(t, want, got, "patterns %q, line %q", exprs, clip(line))
			require.Equal(t, wantP, gotP, "patterns %q, line %q", exprs, clip(line))
			if got {
				matched++
			}
		}
		assert.Positive(t, matched, "patterns %q match some line", exprs)
		if exprs == nil {
			assert.Less(t, matched, len(lines), "the default patterns leave some lines alone")
		}
	}
}

// The default patterns are joined and filtered; the literals are what they require.
func TestStubMatcherDefaultLiterals(t *testing.T) {
	t.Parallel()
	m := NewStubMatcher(Default().StubPatterns)
	require.NotNil(t, m.any)
	require.True(t, m.filter)
	var lits []string
	for _, l := range m.lits {
		lits = append(lits, string(l))
	}
	assert.ElementsMatch(t, []string{"todo", "fixme", "xxx", "not implemented", "unimplemented",
		"notimplementederror", "raise notimplemented", "throw new error("}, lits)
	assert.False(t, m.mayMatch("an ordinary line of code"))
	assert.True(t, m.mayMatch("raiſe NotImplemented"), "a non-ASCII line always reaches the regexp")
	assert.True(t, m.mayMatch("x // ToDo"))

	assert.Nil(t, NewStubMatcher(stubPolicy(t, []string{`\Qa`}).StubPatterns).any, `\Q is never joined`)
}

func FuzzStubMatch(f *testing.F) {
	for i, line := range stubLines {
		f.Add(i%2 == 0, "", line)
	}
	for _, set := range stubPatternSets {
		for _, e := range set {
			f.Add(true, e, "TODO "+e)
			f.Add(false, e, strings.ToUpper(e))
		}
	}
	f.Fuzz(func(t *testing.T, withDefaults bool, expr, line string) {
		p := Default()
		if !withDefaults {
			p.StubPatterns = nil
		}
		if re, err := regexp.Compile("(?i)" + expr); err == nil {
			p.StubPatterns = append(p.StubPatterns, re)
		}
		m := NewStubMatcher(p.StubPatterns)
		wantP, want := p.IsStub(line)
		gotP, got := m.Match(line)
		if want != got || wantP != gotP {
			t.Fatalf("pattern %q, line %q: IsStub %q %v, matcher %q %v", expr, line, wantP, want, gotP, got)
		}
	})
}

// clip shortens a long line for a failure message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:40] + "..." + s[len(s)-40:]
	}
	return s
}
