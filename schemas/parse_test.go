//go:build !lib_parse

package schemas

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// foldTarget is a type with nested fields, maps and arrays, for the fold half of the comparison.
type foldTarget struct {
	TaskID string                `json:"task_id"`
	Scope  struct{ Paths []int } `json:"scope"`
	Items  []struct {
		Name string `json:"name"`
	} `json:"items"`
	Env map[string]struct {
		Value string `json:"value"`
	} `json:"env"`
	Raw json.RawMessage `json:"raw"`
}

func sortedProblems(ps []Problem) []Problem {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Problem) int {
		return strings.Compare(a.Pointer+"\x00"+a.Message, b.Pointer+"\x00"+b.Message)
	})
	return out
}

// checkParseMatches is the property FuzzParseMatchesDecodeStd checks: parse accepts exactly what
// decodeStd accepts, with equal values, and finds the fold problems FoldProblems finds.
func checkParseMatches(t *testing.T, data []byte) {
	t.Helper()
	shape := ShapeOf(reflect.TypeFor[foldTarget]())
	want, err := decodeStd("f.json", data)
	got, folds, ok := parse(data, shape)
	if ok != (err == nil) {
		t.Fatalf("parse ok %v, encoding/json error %v, on %q", ok, err, data)
	}
	if !ok {
		_, derr := Decode("f.json", data)
		require.Equal(t, err.Error(), derr.Error(), "Decode refuses with decodeStd's words")
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("parse read %#v, encoding/json %#v, from %q", got, want, data)
	}
	assert.Equal(t, sortedProblems(FoldProblems(want, shape)), sortedProblems(folds), "fold problems of %q", data)
}

var parseCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{}] } `,
	"\t\n\r{}\n", `"\u00e9\ud83d\ude00\ud800x\/\b\f\n\r\t\"\\"`, `"é ok"`, `{"a":"\u0000"}`,
	`{"task_id":"t","Task_ID":"u","scope":{"paths":[1],"Paths":[2]},"items":[{"NAME":"x"}],"env":{"K":{"VALUE":1}},"raw":{"TASK_ID":1}}`,
	`{"TASKID":1}`, `{"task_İd":1}`, `{"\u0074ask_id":"escaped name"}`, `{"Task_id":1,"task_id":2}`,
	// refused, by both
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a":1 "b":2}`, `01`, `1.`, `.5`,
	`-`, `1e`, `1e+`, `+1`, `0x10`, `NaN`, `tru`, `nul`, `truex`, `[true false]`, `"a`, `"\x"`, `"\u12"`,
	`"\u12g4"`, "\"a\tb\"", "\"\x01\"", `{"a":1}{}`, `{} x`, `{"a":1,"a":1}`, `{"a":{"b":1,"b":2}}`,
	`[{"k":1},{"k":1,"k":2}]`, `{"a":1,"\u0061":2}`, "\"\xff\"", "{\"a\xc3\":1}", "\xef\xbb\xbf{}",
	"{\"a\":1}\x00", `'a'`, `[1 2]`, `{1:2}`,
}

func TestParseMatchesDecodeStd(t *testing.T) {
	for _, c := range parseCases {
		checkParseMatches(t, []byte(c))
	}
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		checkParseMatches(t, []byte(strings.Repeat("[", depth)+strings.Repeat("]", depth)))
		checkParseMatches(t, []byte(strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth)))
	}
	_, _, ok := parse([]byte(strings.Repeat("[", maxDepth+1)+strings.Repeat("]", maxDepth+1)), nil)
	assert.False(t, ok, "a document deeper than encoding/json's limit is refused")
	v, folds, ok := parse([]byte(`{"Task_ID":1,"items":[{},{"Name":2}]}`), ShapeOf(reflect.TypeFor[foldTarget]()))
	require.True(t, ok)
	assert.NotNil(t, v)
	assert.Equal(t, []string{"/Task_ID", "/items/1/Name"}, []string{folds[0].Pointer, folds[1].Pointer})
}

// FuzzParseMatchesDecodeStd is the differential test of the one-pass decoder against
// encoding/json plus the token pass it replaces, on arbitrary bytes.
func FuzzParseMatchesDecodeStd(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c))
	}
	err := filepath.WalkDir(fixtureDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
		return err
	})
	require.NoError(f, err)
	f.Fuzz(checkParseMatches)
}
