package policy

import (
	"regexp"
	"strings"

	"github.com/geas-dev/geas/internal/text"
)

// StubMatcher answers Policy.IsStub for many lines at once, compiled once per run: every pattern
// joined into one alternation, behind a literal pre-filter. A line of ASCII bytes that contains
// none of the patterns' required literals (lowercased) cannot match any pattern and never reaches
// a regexp; a line with a byte over 0x7f always does, since Go's (?i) folds non-ASCII runes onto
// ASCII letters ('ſ' is 's', 'K' (Kelvin) is 'k'). A line the alternation matches is then tried
// pattern by pattern, in order, so the pattern it names is the one IsStub names.
type StubMatcher struct {
	patterns []*regexp.Regexp
	any      *regexp.Regexp // the alternation; nil when the patterns cannot be joined safely
	// lits are the lowercase ASCII literals of which a matching ASCII line holds at least one;
	// filter is false when some pattern has no such literal (every line goes to the regexp).
	lits   [][]byte
	filter bool
	buf    []byte
}

// NewStubMatcher compiles patterns (a policy's StubPatterns) into one matcher.
func NewStubMatcher(patterns []*regexp.Regexp) *StubMatcher {
	m := &StubMatcher{patterns: patterns, filter: true}
	var alts []string
	for _, re := range patterns {
		expr := re.String()
		if strings.Contains(expr, `\Q`) {
			// \Q quotes to the end of the expression when \E is missing, so "(?:"+expr+")" might
			// quote the closing parenthesis: do not join, do not filter.
			return &StubMatcher{patterns: patterns}
		}
		alts = append(alts, "(?:"+expr+")")
		lits, ok := text.RequiredLiterals(expr)
		if !ok {
			m.filter = false
		}
		m.lits = append(m.lits, lits...)
	}
	if len(patterns) == 0 {
		return m
	}
	any, err := regexp.Compile(strings.Join(alts, "|"))
	if err != nil {
		return &StubMatcher{patterns: patterns}
	}
	m.any = any
	m.lits = text.MinimalLiterals(m.lits)
	return m
}

// Match is Policy{StubPatterns: m.patterns}.IsStub(line).
func (m *StubMatcher) Match(line string) (string, bool) {
	if m.any != nil {
		if m.filter && !m.mayMatch(line) {
			return "", false
		}
		if !m.any.MatchString(line) {
			return "", false
		}
	}
	for _, re := range m.patterns {
		if re.MatchString(line) {
			return re.String(), true
		}
	}
	return "", false
}

// mayMatch is the pre-filter: false only for an ASCII line that holds none of the literals.
func (m *StubMatcher) mayMatch(line string) bool {
	var ok bool
	ok, m.buf = text.MayHoldLiteral(m.buf[:0], line, m.lits)
	return ok
}
