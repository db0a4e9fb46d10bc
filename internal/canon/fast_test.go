package canon

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileValues are JSON values (and non-values) an edited or forged file may carry: escapes of
// every kind, numbers RFC 8785 rewrites, keys out of order or repeated, white space, text that is
// not one value, nesting past the scanner's depth.
var hostileValues = []string{
	`[]`, `{}`, `null`, `true`, `false`, `0`, `-1`, `7`, `123456789012345`, `1234567890123456`,
	`-123456789012345`, `9007199254740993`, `1e2`, `1E+2`, `1.0`, `0.5`, `-0`, `-0.0`, `100000000000000000000000`,
	`"x"`, `""`, `"a\"b"`, `"a\\b"`, `"a\/b"`, `"\b\f\n\r\t"`, `"\u0001\u001f\u007f"`, `"\u003c\u003e\u0026"`,
	`"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"\ud800"`, `"😀"`, `"\u2028"`, "\"\u2028\"", `"\u0000"`, `"\U0041"`,
	`["-\u003e", 1, [true, null]]`, `[{"code":"x","check":"y","detail":"a -\u003e b"}]`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":{"d":1,"c":[{"f":1,"e":2}]}}`, `{"\u0061":1,"a":2}`,
	`{"é":1,"e":2}`, `{"\ud83d\ude00":1,"\uffff":2}`, ` [1, 2] `, "\t{\"a\" : 1 }\n", `[1,]`, `{"a":}`,
	`[1] [2]`, `"unterminated`, `tru`, `nul`, `[`, `{"a":1`, `01`, `+1`, `.5`, `1.`, `1e`, `"\x"`,
	"\"tab\there\"", "\"bad\xff\"", `{"B":1,"a":2,"A":3,"_":4,"~":5}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// checkAppendValue fails when AppendValue takes raw and gives other bytes than Bytes, or takes
// a raw that Bytes refuses.
func checkAppendValue(t *testing.T, raw []byte) bool {
	t.Helper()
	fast, ok := AppendValue([]byte("prefix"), raw)
	if !ok {
		assert.Equal(t, "prefix", string(fast), "a refusal leaves dst as it was: %q", raw)
		return false
	}
	slow, err := Bytes(raw)
	require.NoError(t, err, "AppendValue took %q, which the library refuses", raw)
	assert.Equal(t, "prefix"+string(slow), string(fast), "%q", raw)
	return true
}

// TestAppendValueIsBytes: for every value the fast form takes, it gives exactly the library's
// bytes (jcs); it takes the values a history entry is made of.
func TestAppendValueIsBytes(t *testing.T) {
	taken := 0
	for _, raw := range hostileValues {
		if checkAppendValue(t, []byte(raw)) {
			taken++
		}
	}
	assert.Greater(t, taken, 20, "the fast form takes the ordinary values")
	for _, raw := range []string{`[]`, `["tests_failed","scope_violation"]`, `{"tester":2,"qa-engineer":1}`, `"gate-3"`, `-42`,
		`[{"code":"x","check":"y","detail":"score 3 < 4 -> \"fail\"\n"}]`} {
		_, ok := AppendValue(nil, []byte(raw))
		assert.True(t, ok, "the fast form takes %s", raw)
	}
}

// TestAppendStringIsBytes: every ASCII string, control characters and escapes included, is
// written as the library writes it.
func TestAppendStringIsBytes(t *testing.T) {
	all := make([]byte, 0, 128)
	for c := 0; c < 128; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "gate-1", `a"b\c`, "\b\f\n\r\t\x00\x1f\x7f", "<>&", "/", string(all)} {
		checkAppendString(t, s)
	}
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := Marshal(s)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(AppendString(nil, s)), "%q", s)
}

// FuzzAppendValue: any text, as a value and as a string.
func FuzzAppendValue(f *testing.F) {
	for _, raw := range hostileValues {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkAppendValue(t, raw)
		if s := string(raw); isASCII(s) {
			checkAppendString(t, s)
			quoted, err := json.Marshal(s)
			require.NoError(t, err)
			checkAppendValue(t, quoted)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
