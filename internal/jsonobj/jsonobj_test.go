package jsonobj

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeSetEncodeKeepsOrderAndBytes(t *testing.T) {
	members, err := Decode([]byte(`{"b": 1.50, "a": "x<&>", "c": {"z": 1}}`))
	require.NoError(t, err)
	members = Set(members, "a", String("y"))
	members = Set(members, "d", json.RawMessage(`true`))
	got, err := Encode(members)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"b\": 1.50,\n  \"a\": \"y\",\n  \"c\": {\n    \"z\": 1\n  },\n  \"d\": true\n}\n", string(got))
	assert.Equal(t, `{"b":1.50,"a":"y","c":{"z": 1},"d":true}`, string(Compact(members)))
}

func TestDecodeRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate key": `{"a":1,"a":2}`,
		"not an object": `[1]`,
		"trailing data": `{} {}`,
		"malformed":     `{"a":`,
		"empty":         ``,
	} {
		_, err := Decode([]byte(in))
		assert.Error(t, err, name)
	}
}

func TestStringDoesNotEscapeHTML(t *testing.T) {
	assert.Equal(t, `"a<&>\"b"`, string(String(`a<&>"b`)))
}
