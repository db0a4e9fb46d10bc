package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequiredLiteralsAreThoseAMatchCannotDoWithout: the literals a pattern cannot do without; none
// when it can match without one.
func TestRequiredLiteralsAreThoseAMatchCannotDoWithout(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string][]string{
		`(?i)ſtub`:         {"stub"},
		`(?i)K+elvin`:      {"elvin"},
		`(?i)éa|xy`:        {"xy"},
		`(?i)é`:            nil,
		`(?i)todo|x*`:      nil,
		`(?i)[ab]c`:        {"c"},
		`(?i)(?:fix|hack)`: {"fix", "hack"},
	} {
		got, ok := RequiredLiterals(expr)
		if expr == `(?i)todo|x*` {
			assert.False(t, ok, expr)
			continue
		}
		require.True(t, ok, expr)
		var s []string
		for _, l := range got {
			s = append(s, string(l))
		}
		assert.Equal(t, want, s, expr)
	}
	_, ok := RequiredLiterals(`(?i)x*`)
	assert.False(t, ok)
}
