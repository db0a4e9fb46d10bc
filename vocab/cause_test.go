package vocab

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryCauseIsRegistered reads cause.go and checks that Causes lists every CauseCode constant
// declared there, once, and that no two constants share a code.
func TestEveryCauseIsRegistered(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "cause.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				declared = append(declared, n.Name)
			}
		}
	}
	require.NotEmpty(t, declared)
	registered := Causes()
	assert.Len(t, registered, len(declared), "declared: %v", declared)
	seen := map[CauseCode]bool{}
	for _, c := range registered {
		assert.False(t, seen[c], "%s is registered twice", c)
		seen[c] = true
	}
	assert.True(t, slices.Contains(registered, CauseNothingToSatisfy))
	assert.True(t, slices.Contains(registered, CauseHistoryFull))
}

// TestEveryCauseIsDescribed: every registered cause code has a one-sentence description (what
// SARIF output names as its rule), without Markdown.
func TestEveryCauseIsDescribed(t *testing.T) {
	for _, c := range Causes() {
		d := c.Description()
		assert.NotEmpty(t, d, "%s has no description", c)
		assert.NotContains(t, d, "`", "%s: description without Markdown", c)
	}
	assert.Len(t, causeDescriptions, len(Causes()), "a description for a code that is not registered")
	assert.Empty(t, CauseCode("no_such_code").Description())
}
