package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestACutNeverSplitsACharacter: a cut inside a two-, three- or four-byte character drops the whole
// character, a cut between characters keeps every byte up to the bound, and text that fits is
// returned as it is.
func TestACutNeverSplitsACharacter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"},            // é is 2 bytes
		{"a…b", 2, "a"},           // … is 3 bytes
		{"a…b", 3, "a"},           //
		{"a…b", 4, "a…"},          //
		{"a😀b", 4, "a"},           // 😀 is 4 bytes
		{"a😀b", 5, "a😀"},          //
		{"😀", 3, ""},              //
		{"ab\xffcd", 3, "ab\xff"}, // an invalid byte is kept as it is
		{"ab\x80\x80\x80\x80\x80", 6, "ab\x80\x80\x80\x80"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Cut(c.s, c.n), "Cut(%q, %d)", c.s, c.n)
	}
}

// FuzzCut: for any text and bound, the cut is a prefix of the text, never longer than the bound
// (nor than the text), valid UTF-8 when the text is, and at most utf8.UTFMax-1 bytes shorter than
// the bound when the text was longer.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "abc", "aé…😀", "\xff\x80\x80", strings.Repeat("…", 40)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Cut(s, n)
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Cut(%q, %d) = %q: not a prefix", s, n, got)
		}
		if len(got) > max(n, 0) {
			t.Fatalf("Cut(%q, %d) = %q: %d bytes, over the bound", s, n, got, len(got))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Cut(%q, %d) = %q: not valid UTF-8", s, n, got)
		}
		if len(s) > n && n > 0 && len(got) < n-(utf8.UTFMax-1) {
			t.Fatalf("Cut(%q, %d) = %q: gave back more than a character", s, n, got)
		}
		if len(s) <= n && got != s {
			t.Fatalf("Cut(%q, %d) = %q: the text fits and was cut", s, n, got)
		}
	})
}
