package canon

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/geas-dev/geas/internal/jsonscan"
)

// The fast form: RFC 8785 written directly for the values a history entry is made of, without
// encoding/json and a re-parse by jcs. It mirrors jcs (Bytes) on that subset and says so when a
// value is outside it; TestAppendValueIsBytes and FuzzAppendValue check that both give the same
// bytes, and TestAppendStringIsBytes the strings. Its one user is the history entries' canonical
// form (record/entrycanon.go), which pays for itself: every read of a history hashes each entry.

// MaxExactInt is the largest integer magnitude whose RFC 8785 form is its digits: RFC 8785 reads
// every number as an IEEE 754 double, and every integer of at most 15 digits is one exactly, so
// its shortest form is its digits. AppendValue refuses larger ones.
const MaxExactInt = 999_999_999_999_999

// AppendString appends the RFC 8785 form of the ASCII string v, as jcs writes it (its
// decorateString): the two-character escapes for '\\', '"', and \b \f \n \r \t, \u00xx for the
// other control characters, every other byte as it is.
func AppendString(dst []byte, v string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
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

// AppendValue appends the RFC 8785 form of the JSON value raw, the bytes Bytes gives for it, when
// raw is in the subset it handles: ASCII strings (escapes decoded, \u only below 0x80), integers
// of at most 15 digits (MaxExactInt), literals, arrays, and objects without repeated keys. ok is
// false otherwise, or when raw is not exactly one JSON value, and the caller takes Bytes.
func AppendValue(dst, raw []byte) ([]byte, bool) {
	s := &scanner{jsonscan.Scanner{Data: raw}}
	out, ok := s.value(dst, 0)
	if !ok {
		return dst, false
	}
	s.WS()
	if s.Pos != len(raw) {
		return dst, false
	}
	return out, true
}

// scanner is the scanner AppendValue walks a value with.
type scanner struct{ jsonscan.Scanner }

// value appends the canonical form of the value at s.Pos (after white space) for AppendValue; ok
// is false when it is not in the subset.
func (s *scanner) value(dst []byte, depth int) ([]byte, bool) {
	s.WS()
	if s.Pos >= len(s.Data) || depth > jsonscan.MaxDepth {
		return dst, false
	}
	switch c := s.Data[s.Pos]; {
	case c == '"':
		v, ok := s.stringValue()
		if !ok {
			return dst, false
		}
		return AppendString(dst, v), true
	case c == '[':
		return s.array(dst, depth)
	case c == '{':
		return s.object(dst, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(dst)
	default:
		lit, ok := s.Literal()
		if !ok {
			return dst, false
		}
		return append(dst, lit...), true
	}
}

// array appends the canonical form of the array at s.Pos, its items one level deeper than
// depth.
func (s *scanner) array(dst []byte, depth int) ([]byte, bool) {
	s.Pos++
	dst = append(dst, '[')
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == ']' {
		s.Pos++
		return append(dst, ']'), true
	}
	for n := 0; ; n++ {
		if n > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = s.value(dst, depth+1); !ok {
			return dst, false
		}
		more, ok := s.More(']')
		if !ok {
			return dst, false
		}
		if !more {
			return append(dst, ']'), true
		}
	}
}

// member is one member of an object that object read: its decoded key and canonical value.
type member struct {
	key string
	val []byte
}

// object appends the canonical form of the object at s.Pos, its members one level deeper than
// depth, sorted by key; ok is false when a key is repeated.
func (s *scanner) object(dst []byte, depth int) ([]byte, bool) {
	s.Pos++
	var members []member
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '}' {
		s.Pos++
		return append(dst, '{', '}'), true
	}
	for {
		s.WS()
		if s.Pos >= len(s.Data) || s.Data[s.Pos] != '"' {
			return dst, false
		}
		k, ok := s.stringValue()
		if !ok || slices.ContainsFunc(members, func(m member) bool { return m.key == k }) {
			return dst, false
		}
		s.WS()
		if s.Pos >= len(s.Data) || s.Data[s.Pos] != ':' {
			return dst, false
		}
		s.Pos++
		v, ok := s.value(nil, depth+1)
		if !ok {
			return dst, false
		}
		members = append(members, member{k, v})
		more, ok := s.More('}')
		if !ok {
			return dst, false
		}
		if !more {
			break
		}
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for n, m := range members {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}'), true
}

// number appends the number at s.Pos when it is an integer of at most 15 digits (its digits
// are then its canonical form) other than -0; ok is false for any other number.
func (s *scanner) number(dst []byte) ([]byte, bool) {
	start := s.Pos
	integer, ok := s.Num()
	if !ok || !integer {
		return dst, false
	}
	n := s.Data[start:s.Pos]
	digits := bytes.TrimPrefix(n, []byte("-"))
	if len(digits) > 15 || bytes.Equal(n, []byte("-0")) {
		return dst, false
	}
	return append(dst, n...), true
}

// stringValue scans a string at s.Pos and returns its decoded value when it is ASCII: its raw
// bytes below 0x80, and its \u escapes too.
func (s *scanner) stringValue() (string, bool) {
	raw, plain, ok := s.Str()
	if !ok || !jsonscan.IsASCII(raw) {
		return "", false
	}
	if plain {
		return string(raw), true
	}
	out := make([]byte, 0, len(raw))
	for j := 0; j < len(raw); j++ {
		c := raw[j]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		j++
		switch raw[j] {
		case '"', '\\', '/':
			out = append(out, raw[j])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := 0
			for _, h := range raw[j+1 : j+5] {
				r = r<<4 | jsonscan.HexVal(h)
			}
			if r >= utf8.RuneSelf {
				return "", false
			}
			out = append(out, byte(r))
			j += 4
		}
	}
	return string(out), true
}
