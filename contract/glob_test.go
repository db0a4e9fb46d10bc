package contract

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMalformedGlobsAreInvalid (SPEC §5.3 B): a scope glob that doublestar cannot match is an
// invalid contract at load, naming the field; it must not validate and then spend a retry as a
// scope violation.
func TestMalformedGlobsAreInvalid(t *testing.T) {
	t.Parallel()
	base := readFixture(t, "example.json")
	for _, tc := range []struct {
		field, glob string
	}{
		{"surfaces", "docs/["}, {"surfaces", "src/{a,b"}, {"surfaces", `a\`}, {"surfaces", "[]"},
		{"shared", "{go.mod"}, {"shared", "x[y"},
	} {
		t.Run(tc.field+" "+tc.glob, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(base, &m))
			scope := m["scope"].(map[string]any)
			scope[tc.field] = []any{"greeter/", tc.glob}
			data, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = Parse("contract.json", data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/scope/"+tc.field+"/1: malformed glob")
		})
	}
	for _, ok := range []string{"greeter/", "src/**/*.go", "*.{go,md}", "docs/[a-z]*.md", `a\*b`, "**"} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(base, &m))
		m["scope"].(map[string]any)["surfaces"] = []any{ok}
		data, err := json.Marshal(m)
		require.NoError(t, err)
		_, err = Parse("contract.json", data)
		assert.NoError(t, err, ok)
	}
}
