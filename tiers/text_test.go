package tiers

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/geas-dev/geas/internal/text"
	"github.com/stretchr/testify/assert"
)

// TestTheCheckTextCuttersNeverSplitACharacter: every cutter of a check's text (truncate, cut,
// cutText) cuts a character that straddles its bound whole, for every position of the bound in
// a two-, three- and four-byte character; text that fits is returned as it is.
func TestTheCheckTextCuttersNeverSplitACharacter(t *testing.T) {
	t.Parallel()
	for _, ch := range []string{"é", "…", "😀"} {
		for pad := 0; pad < 4; pad++ {
			long := strings.Repeat("a", 200+pad) + strings.Repeat(ch, 2000)
			for _, got := range []string{text.Truncate(long, 202), cut(long), cutText(long, 300)} {
				assert.True(t, utf8.ValidString(got), "%q", got)
				assert.Less(t, len(got), len(long))
			}
		}
	}
	assert.Equal(t, "fits é", text.Truncate("fits é", 7))
	assert.Equal(t, "fits é", cut("fits é"))
	assert.Equal(t, "fits é", cutText("fits é", 7))
}
