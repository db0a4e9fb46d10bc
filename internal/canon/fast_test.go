package canon

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slow is Marshal's slow path: encoding/json, then jcs.
func slow(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// decoded is doc decoded as geas decodes the documents it digests (numbers kept as written).
func decoded(t testing.TB, doc string) any {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), doc)
	return v
}

var fastCases = []string{
	`{}`, `[]`, `null`, `true`, `"x"`, `0`, `-0`, `1.0`, `1E+2`, `1e20`, `1e21`, `1e-7`, `0.1`, `5e-324`,
	`123456789012345678901234567890`, `-1.5e300`, `0.000001`, `9007199254740993`,
	`{"b": 1, "a": [true, null, "x"], "c": {"z": {}, "y": []}}`,
	`{"s": "<>&\u2028\u2029\u007f\u0000\u001f\b\f\n\r\t\"\\/é€😀"}`,
	// UTF-16 order: a character past U+FFFF sorts before U+E000-U+FFFF, unlike code point order.
	`{"\ue000": 1, "😀": 2, "\uffff": 3, "a": 4, "é": 5, "": 6, "aa": 7, "\ud83d\ude01": 8}`,
	`{"contract": {"version": "1.0", "task_id": "t1", "budget": 3, "criteria": [{"id": "c1", "text": "runs"}]}, "policy": {}}`,
	`[[[[[[[[[[1]]]]]]]]]]`,
}

// TestFastEqualsSlow: for every value the fast path takes, its bytes are the slow path's.
func TestFastEqualsSlow(t *testing.T) {
	for _, doc := range fastCases {
		v := decoded(t, doc)
		want, err := slow(v)
		require.NoError(t, err, doc)
		got, ok := appendFast(nil, v, 0)
		require.True(t, ok, doc)
		assert.Equal(t, string(want), string(got), doc)
	}
	// The shapes geas builds itself.
	for _, v := range []any{
		map[string]string{"b": "1", "a": "\x01"},
		map[string]any{"files": map[string]string{".geas/x": "ab"}, "head": "c0ffee"},
		map[string]json.RawMessage{"self_check": json.RawMessage(`{ "b" : 1e2, "a": "<" }`), "x": json.RawMessage(`[1, 2]`)},
		[]string{"b", "a"}, []any(nil), map[string]any(nil),
	} {
		want, err := slow(v)
		require.NoError(t, err)
		got, ok := appendFast(nil, v, 0)
		require.True(t, ok, "%#v", v)
		assert.Equal(t, string(want), string(got), "%#v", v)
	}
}

// TestFastLeavesTheRestToTheSlowPath: values the fast path does not decide are left to the slow
// path (ok false), so Marshal still answers, or refuses, as it always did.
func TestFastLeavesTheRestToTheSlowPath(t *testing.T) {
	for _, v := range []any{
		"bad \xff utf-8", map[string]any{"\xff": 1}, json.Number("1e400"), json.Number("01"), json.Number("+1"),
		json.Number("1."), json.Number(""), json.RawMessage(`{"a":1,"a":2}`), json.RawMessage(`{`), json.RawMessage(nil),
		3.5, 7, struct{ A int }{1}, map[string]int{"a": 1}, []any{1.5},
		decodedDeep(fastMaxDepth + 2),
	} {
		_, ok := appendFast(nil, v, 0)
		assert.False(t, ok, "%#v", v)
		// And Marshal's answer is the slow path's, error or bytes.
		want, werr := slow(v)
		got, gerr := Marshal(v)
		if werr != nil {
			assert.Error(t, gerr, "%#v", v)
			continue
		}
		require.NoError(t, gerr)
		assert.Equal(t, string(want), string(got))
	}
}

func decodedDeep(n int) any {
	var v any = "x"
	for range n {
		v = []any{v}
	}
	return v
}

// FuzzFastEqualsSlow: any JSON document, decoded as geas decodes, canonicalizes to the same bytes
// through the fast path as through the slow one, or is left to the slow path.
func FuzzFastEqualsSlow(f *testing.F) {
	for _, doc := range fastCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		got, ok := appendFast(nil, v, 0)
		want, err := slow(v)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast path answered %q where the slow one fails: %v", got, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("fast %q, slow %q", got, want)
		}
		// A raw message of the same document, too.
		if json.Valid(doc) {
			got, ok = appendFast(nil, json.RawMessage(doc), 0)
			want, err = slow(json.RawMessage(doc))
			if ok && (err != nil || !bytes.Equal(got, want)) {
				t.Fatalf("raw: fast %q, slow %q (%v)", got, want, err)
			}
		}
	})
}
