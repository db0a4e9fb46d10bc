package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

const baseURL = "https://schemas.geas.invalid/"

// compactFiles are the schemas the compiler reads: the embedded sources without their annotations
// and "$schema", the largest split into parts (compactSources in compact_test.go derives them, and
// TestCompactSchemasAreUpToDate fails when a source changed without them). They validate exactly as
// the sources do; the library compiles them in about two thirds of the time (bench/schemacompile).
//
//go:generate go test -run TestCompactSchemasAreUpToDate -update .
//go:embed compact/*.json
var compactFiles embed.FS

// compiler is the one schema compiler of a process. It reads an embedded file only when a kind
// first needs it, so the shared definitions are parsed and compiled once whatever the kinds, and a
// command compiles only the schemas it uses (a dry gate run needs three of the seven).
var compiler = sync.OnceValue(newCompiler)

func newCompiler() *lockedCompiler {
	c := jsonschema.NewCompiler()
	// The compact files name no draft: they are compiled under c.Draft, the stock draft 2020-12.
	// Its metaschema check of each schema is part of the library's compile cost; jsonschema v5
	// has no option to skip it, and geas uses the library through its public API only.
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		name, ok := strings.CutPrefix(url, baseURL)
		b, err := compactFiles.ReadFile("compact/" + name)
		if !ok || err != nil || strings.Contains(name, "/") {
			return nil, fmt.Errorf("schema %s is not embedded; geas never loads schemas at run time", url)
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return &lockedCompiler{c: c}
}

// lockedCompiler serializes compiles: a jsonschema.Compiler is not safe for concurrent use, while
// the schemas it returns are.
type lockedCompiler struct {
	mu sync.Mutex
	c  *jsonschema.Compiler
}

// compile compiles the schema of kind k. A schema the library cannot compile (which, without the
// metaschema check, may panic) is an error.
func (lc *lockedCompiler) compile(k Kind) (s *jsonschema.Schema, err error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("compile schema %s: %v", k, r)
		}
	}()
	s, err = lc.c.Compile(baseURL + string(k) + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", k, err)
	}
	return s, nil
}

// kindSchemas holds the compiled schema of each kind, in the order of Kinds, compiled once on
// first use.
var kindSchemas [len(kinds)]struct {
	once sync.Once
	s    *jsonschema.Schema
	err  error
}

// compiled returns the compiled schema of kind k.
func compiled(k Kind) (*jsonschema.Schema, error) {
	i := kindIndex(k)
	if i < 0 {
		return nil, fmt.Errorf("unknown schema %q", k)
	}
	ks := &kindSchemas[i]
	ks.once.Do(func() { ks.s, ks.err = compiler().compile(k) })
	return ks.s, ks.err
}

func kindIndex(k Kind) int {
	for i, kk := range kinds {
		if kk == k {
			return i
		}
	}
	return -1
}

// compileAll compiles every schema (tests use it to prove they all compile).
func compileAll() (map[Kind]*jsonschema.Schema, error) {
	out := make(map[Kind]*jsonschema.Schema)
	for _, k := range Kinds() {
		s, err := compiled(k)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}
