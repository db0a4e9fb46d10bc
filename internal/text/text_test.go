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

// TestATruncatedTextIsMarkedAndNeverSplitsACharacter: text that fits is returned as it is; text
// that does not is cut between characters and ends in "…".
func TestATruncatedTextIsMarkedAndNeverSplitsACharacter(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "abc", Truncate("abc", 3))
	assert.Equal(t, "ab…", Truncate("abc", 2))
	assert.Equal(t, "a…", Truncate("aéb", 2), "é is 2 bytes: a cut inside it drops it")
	assert.Equal(t, "…", Truncate("abc", 0))
	assert.True(t, utf8.ValidString(Truncate("a😀b", 3)))
}

// TestCountedAgreesWithItsNumber: one is singular, zero and many are plural, whatever the words.
func TestCountedAgreesWithItsNumber(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "1 file differs", Counted(1, "file differs", "files differ"))
	assert.Equal(t, "2 files differ", Counted(2, "file differs", "files differ"))
	assert.Equal(t, "0 warnings", Counted(0, "warning", "warnings"))
	assert.Equal(t, "1 entry verifies", Counted(1, "entry verifies", "entries verify"))
	assert.Equal(t, "-1 lines", Counted(-1, "line", "lines"))
	assert.Equal(t, "1000 judgments", Counted(1000, "judgment", "judgments"))
}

// TestAJoinedListNamesAtMostItsLimitAndCountsTheRest: the items past the limit are counted, never
// dropped silently; a list within the limit is joined whole.
func TestAJoinedListNamesAtMostItsLimitAndCountsTheRest(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", JoinLimited(nil, 2))
	assert.Equal(t, "a, b", JoinLimited([]string{"a", "b"}, 2))
	assert.Equal(t, "a, b and 1 more", JoinLimited([]string{"a", "b", "c"}, 2))
	assert.Equal(t, " and 3 more", JoinLimited([]string{"a", "b", "c"}, 0))
}
