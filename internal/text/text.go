// Package text holds the one cutter of text to a size: every message, name and quoted line the
// gate bounds is cut by Cut, so that no cut falls inside a UTF-8 sequence.
package text

import "unicode/utf8"

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
