package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stockCompile compiles kind k the way the library does by default: every schema validated
// against the 2020-12 metaschema as it is compiled.
func stockCompile(t testing.TB, k Kind) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) { return nil, fmt.Errorf("%s is not embedded", s) }
	entries, err := files.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		require.NoError(t, err)
		require.NoError(t, c.AddResource(baseURL+e.Name(), bytes.NewReader(b)))
	}
	s, err := c.Compile(baseURL + string(k) + ".schema.json")
	require.NoError(t, err, "schema %s does not compile against the metaschema", k)
	return s
}

// TestEverySchemaMatchesItsMetaschema is the check the run-time compiler skips: every embedded
// schema is valid JSON Schema 2020-12, so a broken schema still fails here.
func TestEverySchemaMatchesItsMetaschema(t *testing.T) {
	meta, err := jsonschema.NewCompiler().Compile("https://json-schema.org/draft/2020-12/schema")
	require.NoError(t, err)
	entries, err := files.ReadDir(".")
	require.NoError(t, err)
	require.Len(t, entries, len(Kinds())+1, "the kinds and _defs")
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			b, err := files.ReadFile(e.Name())
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var doc any
			require.NoError(t, dec.Decode(&doc))
			assert.NoError(t, meta.Validate(doc))
		})
	}
	for _, k := range Kinds() {
		stockCompile(t, k)
	}
	// And the metaschema check is not a formality: a schema whose "type" is a number fails it.
	assert.Error(t, meta.Validate(map[string]any{"type": json.Number("5")}))
}

// TestEverySchemaNamesItsDraftOnce: every source names draft 2020-12 (the generator refuses any
// other), and no compact file names one, so each is compiled under the compiler's draft. The
// property "$schema" of the kinds people write (a file's own schema binding) is not the keyword.
func TestEverySchemaNamesItsDraftOnce(t *testing.T) {
	schemaProperty := regexp.MustCompile(`"\$schema": ?\{ ?"\$ref": ?"_defs\.schema\.json#/\$defs/schemaRef" ?\}`)
	entries, err := files.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		require.NoError(t, err)
		assert.Equal(t, 1, bytes.Count(b, []byte(`"$schema": "https://json-schema.org/draft/2020-12/schema",`)), "%s", e.Name())
		assert.Equal(t, 1, bytes.Count(schemaProperty.ReplaceAll(b, nil), []byte(`"$schema"`)), "%s", e.Name())
		// No "format" is used, so whether it asserts (vocabularies) changes nothing: none
		// is used.
		assert.NotContains(t, string(b), `"format"`, "%s", e.Name())
	}
	compact, err := compactFiles.ReadDir("compact")
	require.NoError(t, err)
	require.NotEmpty(t, compact)
	for _, e := range compact {
		b, err := compactFiles.ReadFile("compact/" + e.Name())
		require.NoError(t, err)
		assert.NotContains(t, string(schemaProperty.ReplaceAll(b, nil)), `"$schema"`, "%s", e.Name())
	}
}

// TestRunTimeSchemasCompileAsTheSources validates every fixture and example with the run-time
// schemas and with stock-compiled ones: the same documents pass, and the failures say the same.
func TestRunTimeSchemasCompileAsTheSources(t *testing.T) {
	docs := testDocuments(t)
	n, failures := 0, 0
	for _, k := range Kinds() {
		stock := stockCompile(t, k)
		ours, err := compiled(k)
		require.NoError(t, err)
		require.NotSame(t, stock, ours)
		for _, b := range docs[k] {
			doc, err := Decode("f.json", b)
			if err != nil {
				continue
			}
			n++
			want, got := stock.Validate(doc), ours.Validate(doc)
			if want != nil {
				failures++
			}
			assert.Equal(t, errText(want, doc), errText(got, doc), "%s: %s", k, b)
		}
	}
	assert.Greater(t, n, 100, "documents compared")
	assert.Greater(t, failures, 30, "invalid documents compared")
}

// testDocuments returns every fixture and every file of ../testdata by kind.
func testDocuments(t testing.TB) map[Kind][][]byte {
	docs := map[Kind][][]byte{}
	for _, tc := range fixtures {
		docs[tc.kind] = append(docs[tc.kind], readFixture(t, tc.kind, tc.file))
	}
	err := filepath.WalkDir("../testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		if k, ok := KindForFile(p); ok {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			docs[k] = append(docs[k], b)
		}
		return nil
	})
	require.NoError(t, err)
	return docs
}

// errText is a validation error as geas reports it (the library's own order of names and causes
// follows map iteration).
func errText(err error, doc any) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return (&ValidationError{File: "f.json", Problems: problems(ve, doc)}).Error()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// BenchmarkCompileGateRun is a process's schema compile for a dry gate run: a fresh compiler, the
// contract, evidence and record schemas.
func BenchmarkCompileGateRun(b *testing.B) {
	for b.Loop() {
		c := newCompiler()
		for _, k := range []Kind{Contract, Evidence, Record} {
			if _, err := c.compile(k); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCompileAll is every kind on a fresh compiler.
func BenchmarkCompileAll(b *testing.B) {
	for b.Loop() {
		c := newCompiler()
		for _, k := range Kinds() {
			if _, err := c.compile(k); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestCheckingAgainGivesTheSameAnswer: a document checked twice gets the same answer each time,
// a refusal stays a refusal, the same bytes under another kind are checked against that kind, and
// DecodeExact decodes into each destination it is given.
func TestCheckingAgainGivesTheSameAnswer(t *testing.T) {
	good := []byte(`{"timestamp": "2026-04-02T11:00:05Z", "event_type": "gate_result", "data": {}}`)
	bad := bytes.Replace(good, []byte("gate_result"), []byte("Gate result"), 1)
	for range 2 {
		require.NoError(t, Validate(Event, "e.json", good))
		err := Validate(Event, "e.json", bad)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, "a refusal checked again is still a refusal")
		assert.Contains(t, err.Error(), "e.json: /event_type")
		assert.Error(t, Validate(Record, "e.json", good), "the same bytes under another kind are checked against it")
	}
	type ev struct {
		EventType string `json:"event_type"`
	}
	var a ev
	require.NoError(t, DecodeExact(Event, "e.json", good, &a))
	var b ev
	require.NoError(t, DecodeExact(Event, "e.json", good, &b))
	assert.Equal(t, "gate_result", b.EventType)
	var m map[string]any
	require.NoError(t, DecodeExact(Event, "e.json", good, &m))
	assert.Len(t, m, 3)
}
