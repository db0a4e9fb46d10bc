package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: a deeper document is refused by both decoders.
const maxDepth = 10000

// parser reads a document in one pass into the values encoding/json gives with UseNumber
// (map[string]any, []any, string, json.Number, bool, nil), refusing a repeated key, and, given a
// Shape, collecting the keys that equal a field only under case folding (FoldProblems' findings).
// It accepts exactly what decodeStd accepts; on anything it does not accept it stops, and Decode
// asks decodeStd why, so every refusal keeps its words (TestParseMatchesDecodeStd and
// FuzzParseMatchesDecodeStd check the two agree on values, fold problems and refusals).
//
// It mirrors encoding/json (decodeStd: a decode with UseNumber, then a token pass for repeated
// keys, then FoldProblems), and pays for itself where many documents are read: against the build
// with -tags lib_parse (bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2 shared cores), median
// CPU time of gate --all over 100 tasks library/twin 1.155 (quartiles 1.12-1.20; 1.143 in a second
// series); 0.99-1.03 on one task.
type parser struct {
	data  []byte
	i     int
	depth int
	path  []pathToken // where the value being read is, for fold problems
	folds []Problem
}

type pathToken struct {
	key   string
	index int // when key is "" and isIndex
	isKey bool
}

// parse returns the document's value, or ok false when data is not one well-formed, valid UTF-8
// JSON value without repeated keys.
func parse(data []byte, s *Shape) (v any, folds []Problem, ok bool) {
	if !twinParse {
		return nil, nil, false
	}
	if !utf8.Valid(data) {
		return nil, nil, false
	}
	p := &parser{data: data}
	p.space()
	v, ok = p.value(s)
	if !ok {
		return nil, nil, false
	}
	p.space()
	if p.i != len(p.data) {
		return nil, nil, false
	}
	return v, p.folds, true
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(s *Shape) (any, bool) {
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(s)
	case c == '[':
		return p.array(s)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return false
	}
	p.i += len(word)
	return true
}

func (p *parser) object(s *Shape) (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		kv, ok := p.str()
		if !ok {
			return nil, false
		}
		k := kv.(string)
		if _, dup := m[k]; dup {
			return nil, false
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		p.path = append(p.path, pathToken{key: k, isKey: true})
		v, ok := p.value(p.member(s, k))
		p.path = p.path[:len(p.path)-1]
		if !ok {
			return nil, false
		}
		m[k] = v
		if done, ok := p.separator('}'); !ok {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

// member returns the shape of key k's value in an object of shape s, noting a fold problem when
// k equals one of s's fields only under case folding (the rules of FoldProblems).
func (p *parser) member(s *Shape, k string) *Shape {
	switch {
	case s == nil:
		return nil
	case s.Map:
		return s.Elem
	case s.Fields == nil:
		return nil
	}
	if fs, ok := s.Fields[k]; ok {
		return fs
	}
	for name := range s.Fields {
		if strings.EqualFold(k, name) {
			p.folds = append(p.folds, Problem{Pointer: p.pointer(), Message: fmt.Sprintf(
				"key %q differs from the field %q only by letter case: JSON names are case-sensitive", k, name)})
			break
		}
	}
	return nil
}

// pointer is the JSON pointer of the value being read.
func (p *parser) pointer() string {
	var b strings.Builder
	for _, t := range p.path {
		b.WriteByte('/')
		if t.isKey {
			b.WriteString(escapePointer(t.key))
		} else {
			b.WriteString(strconv.Itoa(t.index))
		}
	}
	return b.String()
}

func (p *parser) array(s *Shape) (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // [
	var elem *Shape
	if s != nil {
		elem = s.Elem
	}
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		p.space()
		p.path = append(p.path, pathToken{index: len(a)})
		v, ok := p.value(elem)
		p.path = p.path[:len(p.path)-1]
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if done, ok := p.separator(']'); !ok {
			return nil, false
		} else if done {
			return a, true
		}
	}
}

// str reads a string. One without escapes is its bytes (already known to be valid UTF-8); one
// with escapes is unquoted by encoding/json itself, so escapes mean exactly what they mean there
// (a lone surrogate is U+FFFD).
func (p *parser) str() (any, bool) {
	start := p.i
	p.i++ // "
	escaped := false
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			if !escaped {
				return string(p.data[start+1 : p.i-1]), true
			}
			var s string
			if json.Unmarshal(p.data[start:p.i], &s) != nil {
				return nil, false
			}
			return s, true
		case c == '\\':
			escaped = true
			if !p.escape() {
				return nil, false
			}
		case c < 0x20:
			return nil, false
		default:
			p.i++
		}
	}
	return nil, false
}

// escape checks the escape at p.i and steps over it.
func (p *parser) escape() bool {
	if p.i+1 >= len(p.data) {
		return false
	}
	switch p.data[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return true
	case 'u':
		if p.i+6 > len(p.data) {
			return false
		}
		for _, h := range p.data[p.i+2 : p.i+6] {
			if !isHex(h) {
				return false
			}
		}
		p.i += 6
		return true
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept exact as a json.Number.
func (p *parser) number() (any, bool) {
	start := p.i
	if p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.data) && p.data[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return nil, false
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, false
		}
	}
	return json.Number(p.data[start:p.i]), true
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// separator reads what follows a member or an element: a comma (more to come), or closer (the
// object or array is done). Anything else, or the end of the data, is not JSON (ok false).
func (p *parser) separator(closer byte) (done, ok bool) {
	p.space()
	if p.i >= len(p.data) {
		return false, false
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		return false, true
	case closer:
		p.i++
		return true, true
	}
	return false, false
}
