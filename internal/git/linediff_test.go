package git

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/stretchr/testify/require"
)

// addedByLineDiff gives exactly what go-git's line diff gives, on texts built from few distinct
// lines (so that repeats, moves and the merge pass's shifts happen), with and without a last
// newline, with CRLF.
func TestAddedByLineDiffEqualsDiff(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a\n", "b\n", "c\n", "a\r\n", "\n", "TODO\n", "x"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			l := alphabet[rng.IntN(len(alphabet))]
			if l == "x" && b.Len() > 0 {
				continue // a line without "\n" only at the end, below
			}
			b.WriteString(l)
		}
		if rng.IntN(4) == 0 {
			b.WriteString("end")
		}
		return b.String()
	}
	edit := func(s string) string {
		lines := splitLines(s)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(lines) + 1)
			switch rng.IntN(3) {
			case 0:
				lines = append(lines[:i], append([]string{alphabet[rng.IntN(len(alphabet)-1)]}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			default:
				if i < len(lines) {
					lines[i] = "new line\n"
				}
			}
		}
		return strings.Join(lines, "")
	}
	for i := range 20000 {
		old := text(rng.IntN(12))
		neu := edit(old)
		if i%5 == 0 {
			neu = text(rng.IntN(12))
		}
		want := appendAdded(nil, "f", diff.Do(old, neu))
		got := addedByLineDiff("f", old, neu)
		require.Equal(t, want, got, "old %q new %q", old, neu)
	}
}

func FuzzAddedByLineDiff(f *testing.F) {
	f.Add("a\nb\n", "a\nx\nb\n")
	f.Add("a\nb\na\n", "a\nb\na\nb\na\n")
	f.Add("a\nc\n", "a\nb\na\nc\n")
	f.Add("", "x")
	f.Add("p\r\nq", "p\r\nq\r\n")
	f.Fuzz(func(t *testing.T, old, neu string) {
		if len(old) > 4096 || len(neu) > 4096 {
			return
		}
		require.Equal(t, appendAdded(nil, "f", diff.Do(old, neu)), addedByLineDiff("f", old, neu))
	})
}
