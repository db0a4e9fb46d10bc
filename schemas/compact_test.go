package schemas

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The compact schemas (compact/, what the run-time compiler reads; see compactFiles) are generated
// from the embedded sources by this file:
//
//	go test ./schemas -run TestCompactSchemasAreUpToDate -update
var update = flag.Bool("update", false, "rewrite the compact schemas in compact/")

// splitAbove is the number of subschemas above which a source is split into parts: the library's
// compile does work for each subschema in proportion to the subschemas of its document.
const splitAbove = 64

// partAtLeast is the number of subschemas from which a root property's schema becomes a part of
// its own when its document is split (every $defs entry does).
const partAtLeast = 8

// Keywords by what the generator does with them. A keyword in none of these lists stops the
// generator: it cannot tell whether dropping, keeping or moving it keeps the schema's meaning.
var (
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
	subschemaOne   = []string{"items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema"}
	subschemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	annotations    = []string{"title", "description", "$comment", "examples"}
	values         = []string{"$ref", "type", "enum", "const", "required", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties", "dependentRequired", "default", "contentEncoding", "contentMediaType", "readOnly", "writeOnly", "deprecated"}
)

var partName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// compactSources derives the compact schemas from the embedded sources: the same schemas without
// their annotations (title, description, $comment, examples) and without "$schema" (the compiler
// names the draft), and each source of more than splitAbove subschemas split into parts: every
// $defs entry, and every root property of at least partAtLeast subschemas, becomes a document of
// its own that the rest refers to by "$ref" ("record-defs-evalRun.json",
// "record-properties-gate_result.json"), its internal references rewritten to match. A $ref is the
// same as the schema in its place (JSON Schema 2020-12 §8.2.3.1), so every document validates and
// fails exactly as its source does (TestRunTimeSchemasCompileAsTheSources, TestCompactSchemasAgree);
// the library's compile, which is quadratic in a document's subschemas, has less to do.
func compactSources() (map[string][]byte, error) {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		src, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		d := json.NewDecoder(bytes.NewReader(src))
		d.UseNumber()
		var doc any
		if err := d.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		docs, err := compactDocument(name, doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for n, v := range docs {
			b, err := marshalCompact(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			out[n] = b
		}
	}
	return out, nil
}

func compactDocument(name string, doc any) (map[string]any, error) {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not a schema object")
	}
	if id, ok := root["$id"]; ok && id != name {
		return nil, fmt.Errorf("$id %v is not the file name", id)
	}
	if s := root["$schema"]; s != "https://json-schema.org/draft/2020-12/schema" {
		return nil, fmt.Errorf("$schema %v is not draft 2020-12", s)
	}
	delete(root, "$id")
	delete(root, "$schema")
	v, err := stripSchema(root, "#")
	if err != nil {
		return nil, err
	}
	root = v.(map[string]any)
	docs := map[string]any{name: root}
	if countSubschemas(root) <= splitAbove {
		return docs, nil
	}
	base := strings.TrimSuffix(name, ".schema.json")
	moved := map[string]string{} // "#/$defs/x" → the part's name
	if defs, ok := root["$defs"].(map[string]any); ok {
		for n, s := range defs {
			if !partName.MatchString(n) {
				return nil, fmt.Errorf("$defs name %q cannot name a part", n)
			}
			part := base + "-defs-" + n + ".json"
			docs[part] = s
			moved["#/$defs/"+n] = part
		}
		delete(root, "$defs")
	}
	if props, ok := root["properties"].(map[string]any); ok {
		for n, s := range props {
			if countSubschemas(s) < partAtLeast {
				continue
			}
			if !partName.MatchString(n) {
				return nil, fmt.Errorf("property %q cannot name a part", n)
			}
			part := base + "-properties-" + n + ".json"
			docs[part] = s
			props[n] = map[string]any{"$ref": part}
		}
	}
	for n, d := range docs {
		if err := rewriteRefs(d, moved); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	return docs, nil
}

// stripSchema returns schema s (at pointer at) without its annotations, and fails on a keyword the
// generator does not know.
func stripSchema(s any, at string) (any, error) {
	switch s := s.(type) {
	case bool:
		return s, nil
	case map[string]any:
		out := map[string]any{}
		for k, v := range s {
			var err error
			switch {
			case slices.Contains(annotations, k):
				continue
			case slices.Contains(values, k):
				out[k] = v
			case slices.Contains(subschemaOne, k):
				out[k], err = stripSchema(v, at+"/"+k)
			case slices.Contains(subschemaMaps, k):
				m, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s/%s is not an object", at, k)
				}
				mm := map[string]any{}
				for n, sub := range m {
					if mm[n], err = stripSchema(sub, at+"/"+k+"/"+n); err != nil {
						return nil, err
					}
				}
				out[k] = mm
			case slices.Contains(subschemaLists, k):
				l, ok := v.([]any)
				if !ok {
					return nil, fmt.Errorf("%s/%s is not an array", at, k)
				}
				ll := make([]any, len(l))
				for i, sub := range l {
					if ll[i], err = stripSchema(sub, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
						return nil, err
					}
				}
				out[k] = ll
			default:
				return nil, fmt.Errorf("%s: keyword %q is not one the generator knows what to do with", at, k)
			}
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not a schema", at)
}

// countSubschemas counts s and the schemas below it.
func countSubschemas(s any) int {
	n := 1
	eachSubschema(s, func(sub any) error {
		n += countSubschemas(sub)
		return nil
	})
	return n
}

// eachSubschema calls f with every schema directly below s (the values of the subschema keywords;
// none below a boolean schema), stopping at f's first error.
func eachSubschema(s any, f func(sub any) error) error {
	m, _ := s.(map[string]any)
	for k, v := range m {
		switch {
		case slices.Contains(subschemaOne, k):
			if err := f(v); err != nil {
				return err
			}
		case slices.Contains(subschemaMaps, k):
			for _, sub := range v.(map[string]any) {
				if err := f(sub); err != nil {
					return err
				}
			}
		case slices.Contains(subschemaLists, k):
			for _, sub := range v.([]any) {
				if err := f(sub); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rewriteRefs points every "$ref" of a split document's schemas that names a moved definition at
// its part, and fails on any other reference inside the document: a pointer into the old document
// would no longer resolve. It walks the schema positions only (as stripSchema does), so a "$ref"
// member of a const, enum or default value, which is data, stays as it is.
func rewriteRefs(s any, moved map[string]string) error {
	if m, ok := s.(map[string]any); ok {
		if r, ok := m["$ref"].(string); ok && strings.HasPrefix(r, "#") {
			part, ok := moved[r]
			if !ok {
				return fmt.Errorf("$ref %q points into the split document", r)
			}
			m["$ref"] = part
		}
	}
	return eachSubschema(s, func(sub any) error { return rewriteRefs(sub, moved) })
}

func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestCompactSchemasAreUpToDate: compact/ holds exactly what compactSources derives from the
// sources, so an edited source cannot leave the run-time compiler on an old schema.
func TestCompactSchemasAreUpToDate(t *testing.T) {
	want, err := compactSources()
	require.NoError(t, err)
	if *update {
		old, err := filepath.Glob("compact/*.json")
		require.NoError(t, err)
		for _, p := range old {
			require.NoError(t, os.Remove(p))
		}
		for n, b := range want {
			require.NoError(t, os.WriteFile(filepath.Join("compact", n), b, 0o644))
		}
		return
	}
	entries, err := compactFiles.ReadDir("compact")
	require.NoError(t, err)
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
		b, err := compactFiles.ReadFile("compact/" + e.Name())
		require.NoError(t, err)
		assert.Equal(t, string(want[e.Name()]), string(b),
			"compact/%s is stale: run go test ./schemas -run TestCompactSchemasAreUpToDate -update", e.Name())
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	assert.Equal(t, names, have, "compact/ lists other files than the sources give: run go test ./schemas -run TestCompactSchemasAreUpToDate -update")
}

// TestCompactSchemasAreSmaller: the split and the stripping happened (record and task-contract are
// over splitAbove), and no compact document is over the limit that makes a split worth it.
func TestCompactSchemasAreSmaller(t *testing.T) {
	docs, err := compactSources()
	require.NoError(t, err)
	for _, k := range []Kind{Record, Contract} {
		src, err := Source(k)
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(src, &doc))
		assert.Greater(t, countSubschemas(doc), splitAbove, "%s", k)
		assert.Contains(t, docs, string(k)+"-defs-"+map[Kind]string{Record: "evalRun", Contract: "evalCommand"}[k]+".json")
	}
	total, srcTotal := 0, 0
	for n, b := range docs {
		var doc any
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.LessOrEqual(t, countSubschemas(doc), splitAbove, "%s", n)
		// No annotation is left: stripping again changes nothing.
		again, err := stripSchema(doc, "#")
		require.NoError(t, err)
		assert.Equal(t, doc, again, "%s", n)
		total += len(b)
	}
	for _, k := range Printable() {
		src, err := Source(k)
		require.NoError(t, err)
		srcTotal += len(src)
	}
	assert.Less(t, total, srcTotal*2/3, "compact bytes against the sources'")
}

// TestTheGeneratorRefusesWhatItCannotKeep: a keyword it does not know, a reference into a split
// document that is not a $defs entry, an $id other than the file name and another draft stop it.
func TestTheGeneratorRefusesWhatItCannotKeep(t *testing.T) {
	big := func() map[string]any {
		props := map[string]any{}
		for i := range splitAbove + 1 {
			props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "string"}
		}
		return map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props}
	}
	cases := map[string]struct {
		edit func(map[string]any)
		want string
	}{
		"unknown keyword": {func(d map[string]any) { d["$dynamicAnchor"] = "x" }, `keyword "$dynamicAnchor"`},
		"nested unknown":  {func(d map[string]any) { d["properties"].(map[string]any)["p0"] = map[string]any{"$anchor": "a"} }, `#/properties/p0: keyword "$anchor"`},
		"pointer into doc": {func(d map[string]any) {
			d["properties"].(map[string]any)["p0"] = map[string]any{"$ref": "#/properties/p1"}
		}, `points into the split document`},
		"foreign $id":       {func(d map[string]any) { d["$id"] = "other.schema.json" }, `$id other.schema.json`},
		"another draft":     {func(d map[string]any) { d["$schema"] = "http://json-schema.org/draft-07/schema#" }, `is not draft 2020-12`},
		"odd part name":     {func(d map[string]any) { d["$defs"] = map[string]any{"a/b": true} }, `cannot name a part`},
		"properties scalar": {func(d map[string]any) { d["properties"] = 5 }, `is not an object`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := big()
			tc.edit(d)
			_, err := compactDocument("x.schema.json", d)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// In a split document, a "$ref" member of a const, enum or default value is data: kept as it
	// is, while the schema's own reference to the moved definition is rewritten.
	d := big()
	d["$defs"] = map[string]any{"a": map[string]any{"type": "string"}}
	props := d["properties"].(map[string]any)
	props["link"] = map[string]any{"const": map[string]any{"$ref": "#/$defs/a"}}
	props["pick"] = map[string]any{"enum": []any{map[string]any{"$ref": "#/$defs/a"}}, "default": map[string]any{"$ref": "#/x"}}
	props["real"] = map[string]any{"$ref": "#/$defs/a"}
	split, err := compactDocument("x.schema.json", d)
	require.NoError(t, err)
	got := split["x.schema.json"].(map[string]any)["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"const": map[string]any{"$ref": "#/$defs/a"}}, got["link"])
	assert.Equal(t, map[string]any{"enum": []any{map[string]any{"$ref": "#/$defs/a"}}, "default": map[string]any{"$ref": "#/x"}}, got["pick"])
	assert.Equal(t, map[string]any{"$ref": "x-defs-a.json"}, got["real"])

	// And an unsplit, known document goes through, annotations dropped, values kept.
	docs, err := compactDocument("x.schema.json", map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x.schema.json",
		"title": "t", "description": "d", "properties": map[string]any{"description": map[string]any{"description": "kept name", "const": map[string]any{"title": "value"}}},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x.schema.json": map[string]any{
		"properties": map[string]any{"description": map[string]any{"const": map[string]any{"title": "value"}}},
	}}, docs)
}

// TestCompactSchemasAgree: beyond the fixtures (TestRunTimeSchemasCompileAsTheSources), every document
// of ../testdata mutated at every position (a member dropped, a value replaced by each JSON type, an
// unknown member added) passes or fails alike against the compact schemas and against the sources
// compiled the stock way, with the same problems reported.
func TestCompactSchemasAgree(t *testing.T) {
	replacements := []any{"", "x", json.Number("0"), json.Number("-1"), json.Number("1.5"), true, nil, []any{}, map[string]any{}, []any{"x"}}
	n, failures := 0, 0
	for _, k := range Kinds() {
		stock := stockCompile(t, k)
		ours, err := compiled(k)
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, b := range testDocuments(t)[k] {
			doc, err := Decode("f.json", b)
			if err != nil || stock.Validate(doc) != nil {
				continue // mutate valid documents only: their every position is one the schema knows
			}
			var variants []any
			mutate(doc, func(v any) { variants = append(variants, v) }, replacements)
			for _, v := range variants {
				key, _ := json.Marshal(v)
				if seen[string(key)] {
					continue
				}
				seen[string(key)] = true
				n++
				want, got := stock.Validate(v), ours.Validate(v)
				if want != nil {
					failures++
				}
				if !assert.Equal(t, errText(want, v), errText(got, v), "%s: %s", k, key) {
					return
				}
			}
		}
	}
	t.Logf("%d variants, %d failing", n, failures)
	assert.Greater(t, n, 5000, "variants compared")
	assert.Greater(t, failures, 3000, "failing variants compared")
}

// mutate calls emit with every one-step variant of doc: each member of each object dropped, each
// value replaced by each of replacements, and an unknown member added to each object.
func mutate(doc any, emit func(any), replacements []any) {
	var walk func(v any, rebuild func(any) any)
	walk = func(v any, rebuild func(any) any) {
		for _, r := range replacements {
			emit(rebuild(r))
		}
		switch v := v.(type) {
		case map[string]any:
			withExtra := maps.Clone(v)
			withExtra["zz_unknown"] = "x"
			emit(rebuild(withExtra))
			for key, child := range v {
				without := maps.Clone(v)
				delete(without, key)
				emit(rebuild(without))
				walk(child, func(c any) any {
					m := maps.Clone(v)
					m[key] = c
					return rebuild(m)
				})
			}
		case []any:
			for i, child := range v {
				walk(child, func(c any) any {
					l := slices.Clone(v)
					l[i] = c
					return rebuild(l)
				})
			}
		}
	}
	walk(doc, func(v any) any { return v })
}

// FuzzCompactSchemasAgree: any document that decodes passes or fails alike against the compact
// schemas and against the sources compiled the stock way, with the same problems reported.
func FuzzCompactSchemasAgree(f *testing.F) {
	for _, docs := range testDocuments(f) {
		for _, b := range docs {
			f.Add(b)
		}
	}
	stock := map[Kind]*jsonschema.Schema{}
	for _, k := range Kinds() {
		stock[k] = stockCompile(f, k)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Decode("f.json", data)
		if err != nil {
			return
		}
		for _, k := range Kinds() {
			ours, err := compiled(k)
			if err != nil {
				t.Fatal(err)
			}
			want, got := stock[k].Validate(doc), ours.Validate(doc)
			if errText(want, doc) != errText(got, doc) {
				t.Fatalf("%s: the sources say %q, the compact schemas %q", k, errText(want, doc), errText(got, doc))
			}
		}
	})
}
