package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
)

// TestExamplePolicyIsTheDefaults: the example geas init writes validates, and read as a policy it
// is exactly the built-in defaults, so copying it changes nothing and it cannot drift from them.
func TestExamplePolicyIsTheDefaults(t *testing.T) {
	b := Example()
	require.NoError(t, schemas.Validate(schemas.GatePolicy, ExampleFile, b))
	got, err := Parse(ExampleFile, b)
	require.NoError(t, err)
	want := Default()
	assert.Equal(t, patternStrings(want), patternStrings(got))
	got.StubPatterns, want.StubPatterns = nil, nil
	assert.Equal(t, want, got)
	assert.Contains(t, string(b), `"//": [`)
	assert.Contains(t, string(b), `"eval_checkout": "worktree"`)
}

// TestPolicyCommentChangesNoSetting: a "//" comment (string or lines) is accepted and read as
// nothing; anything else under "//" is invalid.
func TestPolicyCommentChangesNoSetting(t *testing.T) {
	for _, doc := range []string{`{"//": "one line"}`, `{"//": ["a", "b"]}`, `{"//": []}`} {
		p, err := Parse("p.json", []byte(doc))
		require.NoError(t, err, doc)
		assert.Equal(t, patternStrings(Default()), patternStrings(p))
		assert.Equal(t, Default().SharedGlobs, p.SharedGlobs)
	}
	for _, doc := range []string{`{"//": 1}`, `{"//": {"x": "y"}}`, `{"//": ["a", 2]}`, `{"/": "x"}`, `{"///": "x"}`} {
		_, err := Parse("p.json", []byte(doc))
		assert.Error(t, err, doc)
	}
}

func patternStrings(p Policy) []string {
	var out []string
	for _, re := range p.StubPatterns {
		out = append(out, re.String())
	}
	return out
}
