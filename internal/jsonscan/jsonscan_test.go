package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

var documents = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e3`, `-12`, `true`, `false`, `null`,
	`{"a":1,"b":[true,null,"x"]}`, ` { "a" : { "b" : [ 1 , 2 ] } } `, `"\u00e9\n\"\\"`,
	`01`, `1.`, `.5`, `1e`, `-`, `+1`, `"\x"`, `"\u12G4"`, `"a` + "\x01" + `"`, `{"a"}`, `{"a":}`,
	`[1,]`, `[,1]`, `{,}`, `{"a":1,}`, `tru`, `nul`, `[`, `{`, `"`, `{"a":1}}`, `[1] [2]`,
}

// scanWhole reports whether s.Value reads doc whole, as json.Valid would judge it.
func scanWhole(doc string) bool {
	s := &Scanner{Data: []byte(doc)}
	if !s.Value(0) {
		return false
	}
	s.WS()
	return s.Pos == len(doc)
}

func TestAScannedValueIsValidJSON(t *testing.T) {
	for _, doc := range documents {
		if got, want := scanWhole(doc), json.Valid([]byte(doc)); got != want {
			t.Errorf("%q: scanned whole %v, json.Valid %v", doc, got, want)
		}
	}
}

func TestNestingDeeperThanMaxDepthIsNotOK(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	if scanWhole(deep) {
		t.Errorf("a document %d levels deep scanned as ok", MaxDepth+2)
	}
	shallow := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if !scanWhole(shallow) {
		t.Errorf("a document %d levels deep did not scan", MaxDepth)
	}
}

func TestDupCheckRefusesRepeatedAndEscapedKeys(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":1,"b":2}`:         true,
		`{"a":1,"a":2}`:         false,
		`{"\u0061":1}`:          false,
		`{"x":{"a":1,"a":2}}`:   false,
		`[{"a":1},{"a":1}]`:     true,
		`{"a":{"b":1},"b":{}}`:  true,
		`{"a":[{"c":1,"c":2}]}`: false,
	} {
		s := &Scanner{Data: []byte(doc), DupCheck: true}
		if got := s.Value(0) && s.Pos == len(doc); got != want {
			t.Errorf("%s with DupCheck: ok %v, want %v", doc, got, want)
		}
	}
}

func TestMemberAndPlainStringTakeOnlyASCIIWithoutEscapes(t *testing.T) {
	for doc, want := range map[string]bool{
		`"code": "x1"`:        true,
		`"c\u006fde": "x1"`:   false,
		`"cöde": "x1"`:        false,
		`"code": "x\n"`:       false,
		`"code": "é"`:         false,
		`"code" "x"`:          false,
		` "code" :  "a b" `:   true,
		`"code": 1`:           false,
		`"code": "x` + "\x00": false,
	} {
		s := &Scanner{Data: []byte(doc)}
		k, ok := s.Member()
		if ok {
			_, ok = s.PlainString()
		}
		if ok && string(k) != "code" {
			t.Errorf("%s: key %q", doc, k)
		}
		if ok != want {
			t.Errorf("%s: ok %v, want %v", doc, ok, want)
		}
	}
}

func TestNumSaysWhetherANumberIsAnInteger(t *testing.T) {
	for doc, want := range map[string]bool{"0": true, "-12": true, "1.0": false, "1e2": false, "-0": true} {
		s := &Scanner{Data: []byte(doc)}
		integer, ok := s.Num()
		if !ok || integer != want || s.Pos != len(doc) {
			t.Errorf("%s: integer %v ok %v at %d, want integer %v", doc, integer, ok, s.Pos, want)
		}
	}
}

func FuzzScannedValueIsValidJSON(f *testing.F) {
	for _, doc := range documents {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if strings.Count(doc, "[")+strings.Count(doc, "{") > MaxDepth {
			return // deeper documents are refused by design
		}
		if got, want := scanWhole(doc), json.Valid([]byte(doc)); got != want {
			t.Errorf("%q: scanned whole %v, json.Valid %v", doc, got, want)
		}
	})
}
