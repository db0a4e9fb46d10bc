package record

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/jsonscan"
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
// internal/canon), so both always give the same bytes; TestFastCanonicalIsCanon and
// FuzzFastCanonical check that.
//
// It mirrors encoding/json and jcs (slowCanonical, canon.Marshal) for the entries the gate writes,
// and pays for itself: every read of a history hashes each entry, and against the build with -tags
// lib_entrycanon (bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2 shared cores), median CPU
// time of a whole run library/twin 1.62 for gate --all over 100 tasks of 30 history lines and 1.78
// for one task of 530 lines (quartiles 1.54-1.65, 1.71-1.82); 1.00 on the tasks without a history.
func fastCanonical(e HistoryEntry, links bool) ([]byte, bool) {
	out, _, ok := appendFastCanonical(nil, make([]byte, 0, 512), e, links)
	return out, ok
}

// appendFastCanonical is fastCanonical appending to out, with scratch as room for the values; it
// returns both grown, for a caller that reuses them (withCanonical, with canonScratch).
func appendFastCanonical(out, scratch []byte, e HistoryEntry, links bool) ([]byte, []byte, bool) {
	if !twinEntryCanon {
		return out, scratch, false
	}
	v := canonVals{buf: scratch[:0]}
	if !v.known(e, links) {
		return out, v.buf, false
	}
	extra, ok := extraCanonKeys(e)
	if !ok {
		return out, v.buf, false
	}
	out, ok = v.appendObject(out, e, extra)
	return out, v.buf, ok
}

// canonVals holds the canonical values of an entry's known members, in one buffer.
type canonVals struct {
	// v[i] is the canonical value of canonKeys[i], nil when the member is not written.
	v   [len(canonKeys)][]byte
	buf []byte
}

// known fills v with e's known members, as MarshalJSON writes them; false when one is not in the
// fast path's subset.
func (v *canonVals) known(e HistoryEntry, links bool) bool {
	ok := v.str(ckKind, e.Kind, false) && v.str(ckRunID, e.RunID, false) && v.str(ckVerdict, e.Verdict, false) &&
		v.num(ckBefore, e.RetryBudgetBefore) && v.num(ckAfter, e.RetryBudgetAfter) &&
		v.str(ckHead, e.Head, false) && v.str(ckInputs, e.InputsSHA256, false) && v.str(ckRules, e.RulesSHA256, false) &&
		v.str(ckStarted, e.StartedAt, false) &&
		// The chain links are always written (MarshalJSON), even empty; hmac when set.
		v.str(ckPrev, e.PrevHash, true) && (!links || v.str(ckHash, e.Hash, true) && v.str(ckHMAC, e.HMAC, false))
	if !ok {
		return false
	}
	if len(e.Causes) > 0 {
		if v.v[ckCauses], ok = canonRaw(bytes.TrimSpace(e.Causes)); !ok {
			return false
		}
	}
	return true
}

// str sets v[i] to the string s, unless it is empty and not always written; false when s is not
// ASCII.
func (v *canonVals) str(i int, s string, always bool) bool {
	if s == "" && !always {
		return true
	}
	if !jsonscan.IsASCIIString(s) {
		return false
	}
	start := len(v.buf)
	v.buf = appendCanonString(v.buf, s)
	v.v[i] = v.buf[start:len(v.buf):len(v.buf)] // a later append that grows buf leaves this window as written
	return true
}

// num sets v[i] to the integer n when it is set; false when it has more than 15 digits.
func (v *canonVals) num(i int, n *int) bool {
	if n == nil {
		return true
	}
	if *n > maxCanonInt || *n < -maxCanonInt {
		return false
	}
	start := len(v.buf)
	v.buf = strconv.AppendInt(v.buf, int64(*n), 10)
	v.v[i] = v.buf[start:len(v.buf):len(v.buf)]
	return true
}

// extraCanonKeys are the keys of e.Extra that MarshalJSON writes, sorted; false when one is not
// ASCII.
func extraCanonKeys(e HistoryEntry) ([]string, bool) {
	var extra []string
	for k := range e.Extra {
		if slices.Contains(historyKeys, k) {
			continue // MarshalJSON drops an extra key that shadows a known one
		}
		if !jsonscan.IsASCIIString(k) {
			return nil, false
		}
		extra = append(extra, k)
	}
	// ASCII keys: byte order is the UTF-16 order RFC 8785 sorts by.
	slices.Sort(extra)
	return extra, true
}

// appendObject writes the object over out: the known members of v, in canonKeys order (the
// RFC 8785 order), with the extra keys of e merged in; false when an extra value is not in the
// fast path's subset.
func (v *canonVals) appendObject(out []byte, e HistoryEntry, extra []string) ([]byte, bool) {
	out = append(out[:0], '{')
	x := 0
	for i, k := range canonKeys {
		for ; x < len(extra) && extra[x] < k; x++ {
			var ok bool
			if out, ok = appendExtraMember(out, extra[x], e.Extra[extra[x]]); !ok {
				return out, false
			}
		}
		if v.v[i] != nil {
			out = appendCanonMember(out, k, v.v[i])
		}
	}
	for ; x < len(extra); x++ {
		var ok bool
		if out, ok = appendExtraMember(out, extra[x], e.Extra[extra[x]]); !ok {
			return out, false
		}
	}
	return append(out, '}'), true
}

// appendExtraMember appends the member k of an entry's extra keys, its raw value made canonical.
func appendExtraMember(out []byte, k string, raw []byte) ([]byte, bool) {
	v, ok := canonRaw(bytes.TrimSpace(raw))
	if !ok {
		return out, false
	}
	return appendCanonMember(out, k, v), true
}

// appendCanonMember appends `"k":v` to the object out, after a comma unless it is the first.
func appendCanonMember(out []byte, k string, v []byte) []byte {
	if len(out) > 1 { // out holds more than its '{'
		out = append(out, ',')
	}
	out = appendCanonString(out, k)
	out = append(out, ':')
	return append(out, v...)
}

// canonScratch holds the buffers EntryHash, EntryHMAC and HistoryLineBytes reuse, since a
// verification canonicalizes every entry of the history and keeps none of the bytes.
var canonScratch = sync.Pool{New: func() any { return new([2][]byte) }}

// withCanonical calls use with e's canonical form (canonical, or with links the form of
// HistoryLineBytes), in a reused buffer that use must not keep.
func withCanonical(e HistoryEntry, links bool, use func([]byte)) error {
	sc := canonScratch.Get().(*[2][]byte)
	defer canonScratch.Put(sc)
	out, buf, ok := appendFastCanonical(sc[0], sc[1], e, links)
	if cap(out) <= 64<<10 && cap(buf) <= 64<<10 {
		sc[0], sc[1] = out[:0], buf[:0]
	}
	if !ok {
		var err error
		if links {
			out, err = canon.Marshal(e)
		} else {
			out, err = slowCanonical(e)
		}
		if err != nil {
			return err
		}
	}
	use(out)
	return nil
}

// canonKeys are HistoryEntry's known keys in RFC 8785 order, and ck* their indexes.
var canonKeys = [...]string{
	"causes", "hash", "head", "hmac", "inputs_sha256", "kind", "prev_hash", "retry_budget_after",
	"retry_budget_before", "rules_sha256", "run_id", "started_at", "verdict",
}

const (
	ckCauses = iota
	ckHash
	ckHead
	ckHMAC
	ckInputs
	ckKind
	ckPrev
	ckAfter
	ckBefore
	ckRules
	ckRunID
	ckStarted
	ckVerdict
)

// appendCanonString appends the RFC 8785 form of the ASCII string v, as jcs writes it (its
// decorateString): the two-character escapes for '\\', '"', and \b \f \n \r \t, \u00xx for the
// other control characters, every other byte as it is.
func appendCanonString(dst []byte, v string) []byte {
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

// canonRaw is appendCanonValue(nil, raw).
func canonRaw(raw []byte) ([]byte, bool) { return appendCanonValue(nil, raw) }

// appendCanonValue appends the RFC 8785 form of the JSON value raw when raw is in the subset the
// fast path handles: ASCII strings (escapes decoded, \u only below 0x80), integers of at most 15
// digits, literals, arrays, and objects without repeated keys. ok is false otherwise, or when raw
// is not exactly one JSON value.
func appendCanonValue(dst, raw []byte) ([]byte, bool) {
	s := &canonScan{jsonscan.Scanner{Data: raw}}
	out, ok := s.canonValue(dst, 0)
	if !ok {
		return dst, false
	}
	s.WS()
	if s.Pos != len(raw) {
		return dst, false
	}
	return out, true
}

// canonScan is the scanner appendCanonValue walks a value with.
type canonScan struct{ jsonscan.Scanner }

// canonValue appends the canonical form of the value at s.Pos (after white space) for
// appendCanonValue; ok is false when it is not in the fast path's subset.
func (s *canonScan) canonValue(dst []byte, depth int) ([]byte, bool) {
	s.WS()
	if s.Pos >= len(s.Data) || depth > jsonscan.MaxDepth {
		return dst, false
	}
	switch c := s.Data[s.Pos]; {
	case c == '"':
		v, ok := s.canonStringValue()
		if !ok {
			return dst, false
		}
		return appendCanonString(dst, v), true
	case c == '[':
		return s.canonArray(dst, depth)
	case c == '{':
		return s.canonObject(dst, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.canonNumber(dst)
	default:
		lit, ok := s.Literal()
		if !ok {
			return dst, false
		}
		return append(dst, lit...), true
	}
}

// canonArray appends the canonical form of the array at s.Pos, its items one level deeper than
// depth.
func (s *canonScan) canonArray(dst []byte, depth int) ([]byte, bool) {
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
		if dst, ok = s.canonValue(dst, depth+1); !ok {
			return dst, false
		}
		s.WS()
		if s.Pos >= len(s.Data) {
			return dst, false
		}
		switch s.Data[s.Pos] {
		case ',':
			s.Pos++
		case ']':
			s.Pos++
			return append(dst, ']'), true
		default:
			return dst, false
		}
	}
}

// canonMember is one member of an object canonObject read: its decoded key and canonical value.
type canonMember struct {
	key string
	val []byte
}

// canonObject appends the canonical form of the object at s.Pos, its members one level deeper than
// depth, sorted by key; ok is false when a key is repeated.
func (s *canonScan) canonObject(dst []byte, depth int) ([]byte, bool) {
	s.Pos++
	var members []canonMember
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
		k, ok := s.canonStringValue()
		if !ok || slices.ContainsFunc(members, func(m canonMember) bool { return m.key == k }) {
			return dst, false
		}
		s.WS()
		if s.Pos >= len(s.Data) || s.Data[s.Pos] != ':' {
			return dst, false
		}
		s.Pos++
		v, ok := s.canonValue(nil, depth+1)
		if !ok {
			return dst, false
		}
		members = append(members, canonMember{k, v})
		s.WS()
		if s.Pos >= len(s.Data) {
			return dst, false
		}
		if s.Data[s.Pos] == ',' {
			s.Pos++
			continue
		}
		if s.Data[s.Pos] != '}' {
			return dst, false
		}
		s.Pos++
		break
	}
	slices.SortFunc(members, func(a, b canonMember) int { return strings.Compare(a.key, b.key) })
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
}

// canonNumber appends the number at s.Pos when it is an integer of at most 15 digits (its digits
// are then its canonical form) other than -0; ok is false for any other number.
func (s *canonScan) canonNumber(dst []byte) ([]byte, bool) {
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

// canonStringValue scans a string at s.Pos and returns its decoded value when it is ASCII: its raw
// bytes below 0x80, and its \u escapes too.
func (s *canonScan) canonStringValue() (string, bool) {
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
