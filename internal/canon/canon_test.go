package canon

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBytesIsRFC8785 checks the properties the gate relies on: keys sorted by UTF-16 code units,
// no insignificant white space, numbers in their shortest ECMAScript form, and the same output for
// documents that differ only in layout.
func TestBytesIsRFC8785(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": [true, null, "x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`{"n": 1.0e2, "m": 0.50}`, `{"m":0.5,"n":100}`},
		{"{\n  \"z\": {\"y\": 2, \"x\": 1}\n}", `{"z":{"x":1,"y":2}}`},
		{`{"\u00e9": 1, "e": 2}`, `{"e":2,"é":1}`},
	}
	for _, tc := range tests {
		got, err := Bytes([]byte(tc.in))
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, string(got), tc.in)
	}
	_, err := Bytes([]byte(`{"a": `))
	assert.Error(t, err)
}

func TestSHA256IgnoresLayoutButNotContent(t *testing.T) {
	a, err := SHA256(map[string]any{"x": 1, "y": []int{1, 2}})
	require.NoError(t, err)
	b, err := SHA256(map[string]any{"y": []int{1, 2}, "x": 1})
	require.NoError(t, err)
	c, err := SHA256(map[string]any{"y": []int{2, 1}, "x": 1})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

// TestSumHexIsTheDigestOfTheBytesAsTheyAre: a file's digest is the sha256 of its bytes, layout
// included (unlike SHA256, which digests the canonical form).
func TestSumHexIsTheDigestOfTheBytesAsTheyAre(t *testing.T) {
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", SumHex(nil))
	assert.NotEqual(t, SumHex([]byte(`{"a":1}`)), SumHex([]byte(`{"a": 1}`)))
	d, err := SHA256(map[string]any{"a": 1})
	require.NoError(t, err)
	assert.Equal(t, SumHex([]byte(`{"a":1}`)), d)
}
