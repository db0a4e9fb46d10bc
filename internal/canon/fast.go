package canon

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// fastMaxDepth bounds the nesting the fast path walks; deeper values take the slow path, whose
// bounds (encoding/json's, jcs's) then decide.
const fastMaxDepth = 512

// appendFast appends the RFC 8785 form of v to dst without the detour Marshal takes (encoding/json
// writes the value, jcs parses it back and writes it again), for the values geas digests: what
// encoding/json decodes into (map[string]any, []any, string, json.Number with UseNumber, bool,
// nil), json.RawMessage, and maps and slices of strings. ok is false for anything else, and for
// any value whose form the slow path decides itself (a string or a key that is not valid UTF-8,
// a number out of a double's range or not in JSON's grammar, a raw message jcs refuses, a depth
// past fastMaxDepth): Marshal then takes the slow path, so that every answer, errors included,
// is the one it always gave. The output is byte for byte the slow path's (TestFastEqualsSlow,
// FuzzFastEqualsSlow).
func appendFast(dst []byte, v any, depth int) ([]byte, bool) {
	if !twinCanonFast {
		return dst, false
	}
	if depth > fastMaxDepth {
		return dst, false
	}
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return appendString(dst, v)
	case json.Number:
		return appendNumber(dst, string(v))
	case json.RawMessage:
		if v == nil || !utf8.Valid(v) || !json.Valid(v) {
			return dst, false
		}
		out, err := jcs.Transform(v)
		if err != nil {
			return dst, false
		}
		return append(dst, out...), true
	case map[string]any:
		return appendObject(dst, v, depth)
	case map[string]string:
		return appendObject(dst, v, depth)
	case map[string]json.RawMessage:
		return appendObject(dst, v, depth)
	case []any:
		return appendArray(dst, v, depth)
	case []string:
		return appendArray(dst, v, depth)
	}
	return dst, false
}

func appendObject[V any](dst []byte, m map[string]V, depth int) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true // as encoding/json writes a nil map
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !utf8.ValidString(k) {
			return dst, false
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	dst = append(dst, '{')
	var ok bool
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, _ = appendString(dst, k)
		dst = append(dst, ':')
		if dst, ok = appendFast(dst, m[k], depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

func appendArray[V any](dst []byte, a []V, depth int) ([]byte, bool) {
	if a == nil {
		return append(dst, "null"...), true // as encoding/json writes a nil slice
	}
	dst = append(dst, '[')
	var ok bool
	for i, v := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = appendFast(dst, v, depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// appendString writes s as RFC 8785 does, unless it is not valid UTF-8 (ok false: the slow path
// decides, as encoding/json replaces its bad bytes).
func appendString(dst []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return dst, false
	}
	return AppendString(dst, s), true
}

// AppendString appends the RFC 8785 form of s, which must be valid UTF-8, as jcs writes it (its
// decorateString): the two-character escapes for '\\', '"', and \b \f \n \r \t, \u00xx for the
// other control characters, every other byte as it is.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// appendNumber writes a JSON number as RFC 8785 does: the ECMAScript form of the nearest double.
func appendNumber(dst []byte, s string) ([]byte, bool) {
	if !isJSONNumber(s) {
		return dst, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return dst, false
	}
	out, err := jcs.NumberToJSON(f)
	if err != nil {
		return dst, false
	}
	return append(dst, out...), true
}

// isJSONNumber reports whether s is in RFC 8259's number grammar:
// [ "-" ] ( "0" / digit1-9 *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "-" / "+" ] 1*DIGIT ].
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// compareUTF16 orders two valid UTF-8 strings by their UTF-16 code units, as RFC 8785 sorts
// object keys: code point order, except that a character past U+FFFF (a surrogate pair,
// 0xD800-0xDBFF first) sorts before U+E000-U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ha, la := utf16Units(ra)
			hb, lb := utf16Units(rb)
			if ha != hb {
				return int(ha) - int(hb)
			}
			return int(la) - int(lb) // both past U+FFFF, with the same first unit
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Units is r's first UTF-16 code unit and, past U+FFFF, its second (else 0).
func utf16Units(r rune) (first, second uint16) {
	if r < 0x10000 {
		return uint16(r), 0
	}
	r -= 0x10000
	return uint16(0xD800 + r>>10), uint16(0xDC00 + r&0x3FF)
}
