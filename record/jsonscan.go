package record

import (
	"bytes"
	"slices"
)

// The fast paths of this file read the JSON the gate itself writes (history lines, its own
// events) without encoding/json. Each one answers only when it is sure to give what the slow path
// (encoding/json, schemas.Decode, internal/canon) gives; on anything else it reports !ok and the
// caller takes the slow path. Tests check both paths against each other on hostile input.
//
// jsonScan is the scanner of three twins of the library path, each kept because it pays for
// itself on a whole gate run with a history (figures in their doc comments): fastEntry
// (entryscan.go), fastCanonical (entrycanon.go) and fastEvent (events_read.go).

// maxScanDepth bounds the nesting the fast paths follow; deeper documents take the slow path.
const maxScanDepth = 64

// jsonScan walks one JSON document.
type jsonScan struct {
	b []byte
	i int
	// dupCheck: a nested object with a repeated key (or a key written with escapes, which the
	// scan does not decode) makes the value not ok, as schemas.Decode refuses repeated keys.
	dupCheck bool
	// spaced: white space was seen between tokens.
	spaced bool
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.spaced = true
		default:
			return
		}
	}
}

// str scans a string at s.i and returns its raw content (between the quotes) and whether it has
// no escapes. ok is false when it is not a valid JSON string.
func (s *jsonScan) str() (raw []byte, plain, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	plain = true
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if j+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(s.b) {
					return nil, false, false
				}
				for _, h := range s.b[j+2 : j+6] {
					if hexVal(h) < 0 {
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

func hexVal(c byte) int {
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

// num scans a number (RFC 8259 grammar) and reports whether it is a plain integer.
func (s *jsonScan) num() (integer, ok bool) {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	switch {
	case j < len(s.b) && s.b[j] == '0':
		j++
	case j < len(s.b) && s.b[j] >= '1' && s.b[j] <= '9':
		for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
			j++
		}
	default:
		return false, false
	}
	integer = true
	if j < len(s.b) && s.b[j] == '.' {
		integer = false
		if j = s.digits(j + 1); j < 0 {
			return false, false
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		integer = false
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if j = s.digits(j); j < 0 {
			return false, false
		}
	}
	s.i = j
	return integer, true
}

// value scans one value at s.i (after white space) and reports whether it is valid JSON (and,
// with dupCheck, free of repeated or escaped keys).
func (s *jsonScan) value(depth int) bool {
	s.ws()
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := s.num()
		return ok
	default:
		_, ok := s.literal()
		return ok
	}
}

// object scans the object at s.i, its members one level deeper than depth, for value.
func (s *jsonScan) object(depth int) bool {
	s.i++
	var keys [][]byte
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		k, plain, ok := s.str()
		if !ok {
			return false
		}
		if s.dupCheck {
			if !plain || len(keys) > 64 || slices.ContainsFunc(keys, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return false
			}
			keys = append(keys, k)
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !s.value(depth + 1) {
			return false
		}
		if more, ok := s.more('}'); !ok || !more {
			return ok
		}
	}
}

// digits is the index after the run of one or more digits at j, or -1 when there is none there.
func (s *jsonScan) digits(j int) int {
	k := j
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	if j == k {
		return -1
	}
	return j
}

// more reads what follows a member or an item: a comma (more, ok) or closer (the end: ok only).
func (s *jsonScan) more(closer byte) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case closer:
		s.i++
		return false, true
	}
	return false, false
}

// array scans the array at s.i, its items one level deeper than depth, for value.
func (s *jsonScan) array(depth int) bool {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth + 1) {
			return false
		}
		if more, ok := s.more(']'); !ok || !more {
			return ok
		}
	}
}

// literal scans true, false or null at s.i and returns it.
func (s *jsonScan) literal() (string, bool) {
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return lit, true
		}
	}
	return "", false
}

// member scans `"key":` at s.i (after white space) and returns the key, which must be ASCII
// without escapes: its bytes are its decoded value (encoding/json would turn invalid UTF-8 into
// U+FFFD, so that two keys the scan tells apart could be one key there).
func (s *jsonScan) member() ([]byte, bool) {
	s.ws()
	k, plain, ok := s.str()
	if !ok || !plain || !isASCII(k) {
		return nil, false
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false
	}
	s.i++
	s.ws()
	return k, true
}

// plainString scans a string value that has no escapes and only ASCII bytes, so that its bytes
// are its decoded value.
func (s *jsonScan) plainString() (string, bool) {
	raw, plain, ok := s.str()
	if !ok || !plain || !isASCII(raw) {
		return "", false
	}
	return string(raw), true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func isASCIIString(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return false
		}
	}
	return true
}
