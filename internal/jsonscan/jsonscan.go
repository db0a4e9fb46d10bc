// Package jsonscan walks JSON text without decoding it: a scanner of strings, numbers, literals,
// objects and arrays that says where each token ends and whether it is valid (RFC 8259), for the
// hand-written twins of encoding/json that read the gate's own lines (record's fastEntry,
// fastEvent and the entry's canonical form). It knows nothing of what the documents mean: the
// twins decide what they accept, and take the library path for anything else.
package jsonscan

import (
	"bytes"
	"slices"
)

// MaxDepth bounds the nesting Value follows; a deeper document is not ok (a twin then takes the
// library path).
const MaxDepth = 64

// Scanner walks one JSON document, Data, from Pos.
type Scanner struct {
	Data []byte
	Pos  int
	// DupCheck: a nested object with a repeated key (or a key written with escapes, which the
	// scan does not decode) makes the value not ok, as a decoder that refuses repeated keys would.
	DupCheck bool
	// Spaced: white space was seen between tokens.
	Spaced bool
}

// WS skips white space at Pos.
func (s *Scanner) WS() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
			s.Spaced = true
		default:
			return
		}
	}
}

// Str scans a string at s.Pos and returns its raw content (between the quotes) and whether it has
// no escapes. ok is false when it is not a valid JSON string.
func (s *Scanner) Str() (raw []byte, plain, ok bool) {
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '"' {
		return nil, false, false
	}
	start := s.Pos + 1
	plain = true
	for j := start; j < len(s.Data); j++ {
		c := s.Data[j]
		switch {
		case c == '"':
			s.Pos = j + 1
			return s.Data[start:j], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if j+1 >= len(s.Data) {
				return nil, false, false
			}
			switch s.Data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(s.Data) {
					return nil, false, false
				}
				for _, h := range s.Data[j+2 : j+6] {
					if HexVal(h) < 0 {
						return nil, false, false
					}
				}
				j += 5
			default:
				return nil, false, false
			}
		}
	}
	return nil, false, false
}

// HexVal is the value of the hexadecimal digit c, or -1 when c is not one.
func HexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Num scans a number (RFC 8259 grammar) and reports whether it is a plain integer.
func (s *Scanner) Num() (integer, ok bool) {
	j := s.Pos
	if j < len(s.Data) && s.Data[j] == '-' {
		j++
	}
	switch {
	case j < len(s.Data) && s.Data[j] == '0':
		j++
	case j < len(s.Data) && s.Data[j] >= '1' && s.Data[j] <= '9':
		for j < len(s.Data) && s.Data[j] >= '0' && s.Data[j] <= '9' {
			j++
		}
	default:
		return false, false
	}
	integer = true
	if j < len(s.Data) && s.Data[j] == '.' {
		integer = false
		if j = s.digits(j + 1); j < 0 {
			return false, false
		}
	}
	if j < len(s.Data) && (s.Data[j] == 'e' || s.Data[j] == 'E') {
		integer = false
		j++
		if j < len(s.Data) && (s.Data[j] == '+' || s.Data[j] == '-') {
			j++
		}
		if j = s.digits(j); j < 0 {
			return false, false
		}
	}
	s.Pos = j
	return integer, true
}

// Value scans one value at s.Pos (after white space) and reports whether it is valid JSON (and,
// with DupCheck, free of repeated or escaped keys).
func (s *Scanner) Value(depth int) bool {
	s.WS()
	if s.Pos >= len(s.Data) || depth > MaxDepth {
		return false
	}
	switch c := s.Data[s.Pos]; {
	case c == '"':
		_, _, ok := s.Str()
		return ok
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := s.Num()
		return ok
	default:
		_, ok := s.Literal()
		return ok
	}
}

// object scans the object at s.Pos, its members one level deeper than depth, for Value.
func (s *Scanner) object(depth int) bool {
	s.Pos++
	var keys [][]byte
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '}' {
		s.Pos++
		return true
	}
	for {
		s.WS()
		k, plain, ok := s.Str()
		if !ok {
			return false
		}
		if s.DupCheck {
			if !plain || len(keys) > 64 || slices.ContainsFunc(keys, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return false
			}
			keys = append(keys, k)
		}
		s.WS()
		if s.Pos >= len(s.Data) || s.Data[s.Pos] != ':' {
			return false
		}
		s.Pos++
		if !s.Value(depth + 1) {
			return false
		}
		if more, ok := s.More('}'); !ok || !more {
			return ok
		}
	}
}

// digits is the index after the run of one or more digits at j, or -1 when there is none there.
func (s *Scanner) digits(j int) int {
	k := j
	for j < len(s.Data) && s.Data[j] >= '0' && s.Data[j] <= '9' {
		j++
	}
	if j == k {
		return -1
	}
	return j
}

// More reads what follows a member or an item: a comma (more, ok) or closer (the end: ok only).
func (s *Scanner) More(closer byte) (more, ok bool) {
	s.WS()
	if s.Pos >= len(s.Data) {
		return false, false
	}
	switch s.Data[s.Pos] {
	case ',':
		s.Pos++
		return true, true
	case closer:
		s.Pos++
		return false, true
	}
	return false, false
}

// array scans the array at s.Pos, its items one level deeper than depth, for Value.
func (s *Scanner) array(depth int) bool {
	s.Pos++
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == ']' {
		s.Pos++
		return true
	}
	for {
		if !s.Value(depth + 1) {
			return false
		}
		if more, ok := s.More(']'); !ok || !more {
			return ok
		}
	}
}

// Literal scans true, false or null at s.Pos and returns it.
func (s *Scanner) Literal() (string, bool) {
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.Data[s.Pos:], []byte(lit)) {
			s.Pos += len(lit)
			return lit, true
		}
	}
	return "", false
}

// Member scans `"key":` at s.Pos (after white space) and returns the key, which must be ASCII
// without escapes: its bytes are its decoded value (encoding/json would turn invalid UTF-8 into
// U+FFFD, so that two keys the scan tells apart could be one key there).
func (s *Scanner) Member() ([]byte, bool) {
	s.WS()
	k, plain, ok := s.Str()
	if !ok || !plain || !IsASCII(k) {
		return nil, false
	}
	s.WS()
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != ':' {
		return nil, false
	}
	s.Pos++
	s.WS()
	return k, true
}

// PlainString scans a string value that has no escapes and only ASCII bytes, so that its bytes
// are its decoded value.
func (s *Scanner) PlainString() (string, bool) {
	raw, plain, ok := s.Str()
	if !ok || !plain || !IsASCII(raw) {
		return "", false
	}
	return string(raw), true
}

// IsASCII reports whether b has only bytes below 0x80.
func IsASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// IsASCIIString is IsASCII of a string.
func IsASCIIString(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return false
		}
	}
	return true
}
