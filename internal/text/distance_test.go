package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	t.Parallel()
	d := func(a, b string, bound int) int { return EditDistance([]rune(a), []rune(b), bound) }
	assert.Equal(t, 0, d("abc", "abc", 2))
	assert.Equal(t, 1, d("abc", "acb", 2), "a transposition is one edit")
	assert.Equal(t, 1, d("codequalty", "codequality", 2))
	assert.Equal(t, 3, d("kitten", "sitting", 3))
	assert.Equal(t, 3, d("abcdef", "uvwxyz", 2), "past the bound: bound+1")
	assert.Equal(t, 3, d("", "abc", 5))
}
