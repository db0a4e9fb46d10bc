// Package text holds the one cutter of text to a size: every message, name and quoted line the
// gate bounds is cut by Cut, so that no cut falls inside a UTF-8 sequence; and the few generic
// helpers the gate's messages are written with (Truncate, Counted, JoinLimited), which know
// nothing of what they describe; and the literal pre-filter of line matchers (literals.go).
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Cut returns the longest prefix of s of at most n bytes that does not end inside a UTF-8
// sequence: s itself when it fits, "" when n <= 0. A cut that would fall inside a character drops
// the character's first bytes too, so the prefix of valid UTF-8 is valid UTF-8. Bytes that are not
// part of a valid sequence are kept as they are (at most utf8.UTFMax-1 bytes are given back).
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for i := n - 1; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:n]) {
				return s[:i]
			}
			break
		}
	}
	return s[:n]
}

// Truncate cuts s to at most n bytes between characters (Cut) and marks the cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}

// Counted is n followed by the words for that many: Counted(1, "file differs", "files differ")
// is "1 file differs", Counted(2, ...) "2 files differ", Counted(0, ...) "0 files differ".
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// JoinLimited joins at most max items with ", " and says how many more there are: JoinLimited
// of a, b, c with max 2 is "a, b and 1 more".
func JoinLimited(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + " and " + strconv.Itoa(len(items)-max) + " more"
}
