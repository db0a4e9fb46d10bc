package record

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxCanonInt is the largest integer magnitude written as its digits by the fast canonical form:
// RFC 8785 reads every number as an IEEE 754 double, and every integer of at most 15 digits is
// one exactly, so its shortest form is its digits. Larger ones take the slow path.
const maxCanonInt = 999_999_999_999_999

// fastCanonical writes e's RFC 8785 form without encoding/json: the members MarshalJSON writes
// (without hash and hmac unless links is set), sorted, each value in canonical form. It handles
// the entries the gate writes: ASCII strings and keys, integers of at most 15 digits, causes and
// extra values made of those. ok is false for anything else (non-ASCII text, other numbers, a
// value that is not valid JSON, repeated keys), and the caller takes the slow path (canonical via
// internal/canon), so both always give the same bytes; TestFastCanonicalIsCanon checks that.
func fastCanonical(e HistoryEntry, links bool) ([]byte, bool) {
	type kv struct {
		key string
		val []byte
	}
	members := make([]kv, 0, 16)
	buf := make([]byte, 0, 1024)
	str := func(k, v string) bool {
		if v == "" {
			return true
		}
		if !isASCIIString(v) {
			return false
		}
		start := len(buf)
		buf = appendCanonString(buf, v)
		members = append(members, kv{k, buf[start:len(buf):len(buf)]})
		return true
	}
	num := func(k string, v *int) bool {
		if v == nil {
			return true
		}
		if *v > maxCanonInt || *v < -maxCanonInt {
			return false
		}
		start := len(buf)
		buf = strconv.AppendInt(buf, int64(*v), 10)
		members = append(members, kv{k, buf[start:len(buf):len(buf)]})
		return true
	}
	raw := func(k string, v []byte) bool {
		start := len(buf)
		var ok bool
		if buf, ok = appendCanonValue(buf, bytes.TrimSpace(v)); !ok {
			return false
		}
		members = append(members, kv{k, buf[start:len(buf):len(buf)]})
		return true
	}
	ok := str("kind", e.Kind) && str("run_id", e.RunID) && str("verdict", e.Verdict) &&
		(len(e.Causes) == 0 || raw("causes", e.Causes)) &&
		num("retry_budget_before", e.RetryBudgetBefore) && num("retry_budget_after", e.RetryBudgetAfter) &&
		str("head", e.Head) && str("inputs_sha256", e.InputsSHA256) && str("rules_sha256", e.RulesSHA256) &&
		str("started_at", e.StartedAt)
	if !ok {
		return nil, false
	}
	// The chain links are always written (MarshalJSON), even empty.
	for _, l := range []struct{ k, v string }{{"prev_hash", e.PrevHash}, {"hash", e.Hash}, {"hmac", e.HMAC}} {
		if l.k != "prev_hash" && !links {
			continue
		}
		if !isASCIIString(l.v) {
			return nil, false
		}
		if l.k == "hmac" && l.v == "" {
			continue
		}
		start := len(buf)
		buf = appendCanonString(buf, l.v)
		members = append(members, kv{l.k, buf[start:len(buf):len(buf)]})
	}
	for k, v := range e.Extra {
		if slices.Contains(historyKeys, k) {
			continue // MarshalJSON drops an extra key that shadows a known one
		}
		if !isASCIIString(k) || !raw(k, v) {
			return nil, false
		}
	}
	// Each value is a window of buf as it was when appended; a later append that grows buf moves
	// on to a new array and leaves the window as written. ASCII keys: byte order is the UTF-16
	// order RFC 8785 sorts by.
	slices.SortFunc(members, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	out := make([]byte, 0, len(buf)+len(members)*24+2)
	out = append(out, '{')
	for n, m := range members {
		if n > 0 {
			out = append(out, ',')
		}
		out = appendCanonString(out, m.key)
		out = append(out, ':')
		out = append(out, m.val...)
	}
	return append(out, '}'), true
}

// appendCanonString appends the RFC 8785 form of the ASCII string v: only ", \ and control
// characters are escaped, with the short escapes where JSON has them, else \u00xx.
func appendCanonString(dst []byte, v string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
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
				const hex = "0123456789abcdef"
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// appendCanonValue appends the RFC 8785 form of the JSON value raw when raw is in the subset the
// fast path handles: ASCII strings (escapes decoded, \u only below 0x80), integers of at most 15
// digits, literals, arrays, and objects without repeated keys. ok is false otherwise, or when raw
// is not exactly one JSON value.
func appendCanonValue(dst, raw []byte) ([]byte, bool) {
	s := &jsonScan{b: raw}
	out, ok := s.canonValue(dst, 0)
	if !ok {
		return dst, false
	}
	s.ws()
	if s.i != len(raw) {
		return dst, false
	}
	return out, true
}

func (s *jsonScan) canonValue(dst []byte, depth int) ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || depth > maxScanDepth {
		return dst, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, ok := s.canonStringValue()
		if !ok {
			return dst, false
		}
		return appendCanonString(dst, v), true
	case c == '[':
		s.i++
		dst = append(dst, '[')
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return append(dst, ']'), true
		}
		for n := 0; ; n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = s.canonValue(dst, depth+1); !ok {
				return dst, false
			}
			s.ws()
			if s.i >= len(s.b) {
				return dst, false
			}
			switch s.b[s.i] {
			case ',':
				s.i++
			case ']':
				s.i++
				return append(dst, ']'), true
			default:
				return dst, false
			}
		}
	case c == '{':
		s.i++
		type kv struct {
			key string
			val []byte
		}
		var members []kv
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return append(dst, '{', '}'), true
		}
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return dst, false
			}
			k, ok := s.canonStringValue()
			if !ok || slices.ContainsFunc(members, func(m kv) bool { return m.key == k }) {
				return dst, false
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return dst, false
			}
			s.i++
			v, ok := s.canonValue(nil, depth+1)
			if !ok {
				return dst, false
			}
			members = append(members, kv{k, v})
			s.ws()
			if s.i >= len(s.b) {
				return dst, false
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.b[s.i] != '}' {
				return dst, false
			}
			s.i++
			break
		}
		slices.SortFunc(members, func(a, b kv) int { return strings.Compare(a.key, b.key) })
		dst = append(dst, '{')
		for n, m := range members {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonString(dst, m.key)
			dst = append(dst, ':')
			dst = append(dst, m.val...)
		}
		return append(dst, '}'), true
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		integer, ok := s.num()
		if !ok || !integer {
			return dst, false
		}
		n := s.b[start:s.i]
		digits := bytes.TrimPrefix(n, []byte("-"))
		if len(digits) > 15 || bytes.Equal(n, []byte("-0")) {
			return dst, false
		}
		return append(dst, n...), true
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
				s.i += len(lit)
				return append(dst, lit...), true
			}
		}
		return dst, false
	}
}

// canonStringValue scans a string at s.i and returns its decoded value when it is ASCII: its raw
// bytes below 0x80, and its \u escapes too.
func (s *jsonScan) canonStringValue() (string, bool) {
	raw, plain, ok := s.str()
	if !ok || !isASCII(raw) {
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
				r = r<<4 | hexVal(h)
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
