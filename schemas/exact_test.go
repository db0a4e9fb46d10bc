package schemas

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type exactItem struct {
	Passed bool   `json:"passed"`
	Name   string `json:"name,omitempty"`
}

type exactDoc struct {
	Role    string             `json:"role"`
	Items   []exactItem        `json:"items"`
	Metrics map[string]float64 `json:"metrics"`
	ByName  map[string]exactItem
	Raw     json.RawMessage `json:"raw"`
	Skipped string          `json:"-"`
	exactEmbedded
}

type exactEmbedded struct {
	Promoted string `json:"promoted"`
}

func TestDecodeExactRefusesCaseFoldedNames(t *testing.T) {
	tests := []struct {
		name, doc string
		pointers  []string // empty: accepted
	}{
		{"exact names", `{"role":"r","items":[{"passed":false}],"metrics":{"Coverage":1,"coverage":2},"raw":{"ROLE":1}}`, nil},
		{"a Passed twin", `{"items":[{"passed":false,"Passed":true}]}`, []string{"/items/0/Passed"}},
		{"upper-case role", `{"role":"implementer","ROLE":"tester"}`, []string{"/ROLE"}},
		{"only the folded name", `{"Role":"tester"}`, []string{"/Role"}},
		{"long s folds like s", `{"item\u017f":[]}`, []string{"/item\u017f"}},
		{"nested and promoted names", `{"items":[{"name":"x","NAME":"y"}],"promoted":"a","PROMOTED":"b"}`, []string{"/PROMOTED", "/items/0/NAME"}},
		{"untagged field keeps its Go name", `{"byname":{}}`, []string{"/byname"}},
		{"map values are walked, map keys are data", `{"ByName":{"Passed":{"passed":true,"PASSED":false}}}`, []string{"/ByName/Passed/PASSED"}},
		{"a skipped field is not a name", `{"skipped":"x","Skipped":"y"}`, nil},
		{"unknown names are the schema's business", `{"rolex":1,"ITEMS2":[]}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d exactDoc
			err := DecodeExact("", "doc.json", []byte(tc.doc), &d)
			if len(tc.pointers) == 0 {
				require.NoError(t, err)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.Pointer)
				assert.Contains(t, p.Message, "only by letter case")
			}
			assert.Equal(t, tc.pointers, got)
		})
	}
	t.Run("duplicates are refused", func(t *testing.T) {
		var d exactDoc
		var se *SyntaxError
		require.ErrorAs(t, DecodeExact("", "doc.json", []byte(`{"role":"a","role":"b"}`), &d), &se)
	})
	t.Run("what is accepted reads the exact keys", func(t *testing.T) {
		var d exactDoc
		require.NoError(t, DecodeExact("", "doc.json", []byte(`{"role":"reviewer","items":[{"passed":true}]}`), &d))
		assert.Equal(t, "reviewer", d.Role)
		assert.True(t, d.Items[0].Passed)
	})
}

type shaped struct{ A string }

func (*shaped) JSONShape() *Shape { return Object(map[string]*Shape{"alpha": nil}) }

func TestShapeOfHonoursShaper(t *testing.T) {
	s := ShapeOf(reflect.TypeFor[[]shaped]())
	require.NotNil(t, s.Elem)
	assert.Contains(t, s.Elem.Fields, "alpha")
	assert.Equal(t, []Problem{{Pointer: "/0/ALPHA", Message: `key "ALPHA" differs from the field "alpha" only by letter case: JSON names are case-sensitive`}},
		FoldProblems([]any{map[string]any{"ALPHA": "x"}}, s))
}
