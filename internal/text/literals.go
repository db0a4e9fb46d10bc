package text

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// The literal pre-filter of line matchers: the literals every match of a regular expression on an
// ASCII line holds one of (RequiredLiterals, MinimalLiterals), and the quick test of a line
// against them (MayHoldLiteral), which lets a matcher skip the regexp for most lines.

// MayHoldLiteral is the pre-filter of a line matcher (the policy's stub matcher and marker sets):
// false only for an ASCII line whose lowercased bytes hold none of lits (lowercase, from
// RequiredLiterals). buf is scratch space for the lowercased line, returned for reuse.
func MayHoldLiteral(buf []byte, line string, lits [][]byte) (bool, []byte) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c >= utf8.RuneSelf {
			return true, buf
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	for _, lit := range lits {
		if bytes.Contains(buf, lit) {
			return true, buf
		}
	}
	return false, buf
}

// RequiredLiterals returns literals of which every match of expr on an ASCII line contains at
// least one, lowercased; ok is false when no such set is found (the pre-filter must let every
// line through). A literal rune that is not ASCII stands for the ASCII member of its case-folding
// orbit; a literal with a rune that no ASCII byte can match is left out, since it cannot occur in
// an ASCII line (a pattern all of whose literals are left out matches no ASCII line).
func RequiredLiterals(expr string) ([][]byte, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	set, ok := literalSet(re.Simplify())
	if !ok {
		return nil, false
	}
	var out [][]byte
	for _, s := range set {
		if lit, ok := asciiFolded(s); ok {
			out = append(out, lit)
		}
	}
	return out, true
}

// literalSet returns rune strings of which any match of re contains one; ok is false when re
// can match without any (an empty set with ok true means re cannot match at all).
func literalSet(re *syntax.Regexp) ([][]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return nil, false
		}
		return [][]rune{re.Rune}, true
	case syntax.OpCapture:
		return literalSet(re.Sub[0])
	case syntax.OpPlus:
		return literalSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literalSet(re.Sub[0])
		}
	case syntax.OpNoMatch:
		return nil, true
	case syntax.OpConcat:
		// Every part must match: the part whose set has the longest shortest literal.
		var best [][]rune
		found := false
		for _, sub := range re.Sub {
			if set, ok := literalSet(sub); ok && (!found || shortest(set) > shortest(best)) {
				best, found = set, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		var all [][]rune
		for _, sub := range re.Sub {
			set, ok := literalSet(sub)
			if !ok {
				return nil, false
			}
			all = append(all, set...)
		}
		return all, true
	}
	return nil, false
}

func shortest(set [][]rune) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// asciiFolded lowercases a literal for the ASCII pre-filter: each rune becomes the lowercase
// ASCII member of its case-folding orbit (which is the rune itself for ASCII). ok is false when a
// rune has no ASCII member: no ASCII line holds the literal, whatever the case flags. Folding a
// literal the pattern matches case-sensitively only widens the filter.
func asciiFolded(lit []rune) ([]byte, bool) {
	out := make([]byte, 0, len(lit))
	for _, r := range lit {
		a, ok := asciiInOrbit(r)
		if !ok {
			return nil, false
		}
		out = append(out, byte(unicode.ToLower(a)))
	}
	return out, true
}

func asciiInOrbit(r rune) (rune, bool) {
	if r < utf8.RuneSelf {
		return r, true
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return f, true
		}
	}
	return 0, false
}

// MinimalLiterals drops every literal that contains another one (a line holding it holds the
// other) and duplicates.
func MinimalLiterals(lits [][]byte) [][]byte {
	var out [][]byte
	for i, a := range lits {
		redundant := false
		for j, b := range lits {
			if i != j && bytes.Contains(a, b) && (len(a) > len(b) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, a)
		}
	}
	return out
}
