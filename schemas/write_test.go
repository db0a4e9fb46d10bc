package schemas

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offlineCompiler is a stock compiler that loads only file: URLs (an editor offline): a $id or
// $ref that resolved anywhere else would fail to compile.
func offlineCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "file" {
			return nil, fmt.Errorf("offline: refused to load %s", s)
		}
		return os.Open(filepath.FromSlash(u.Path))
	}
	return c
}

func TestWrittenSchemasResolveOfflineWhereTheyLie(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "schemas")
	written, err := WriteDir(dir)
	require.NoError(t, err)
	require.Len(t, written, len(Printable()))
	for _, k := range Printable() {
		b, err := os.ReadFile(filepath.Join(dir, string(k)+".schema.json"))
		require.NoError(t, err)
		src, _ := Source(k)
		assert.Equal(t, src, b, "%s is written as embedded", k)
	}
	for _, k := range Kinds() {
		s, err := offlineCompiler().Compile(filepath.Join(dir, string(k)+".schema.json"))
		require.NoError(t, err, "%s compiles from the written files alone", k)
		// The example files validate against the written schema as against the embedded one,
		// "$schema" naming the written file included for the kinds people write.
		var doc map[string]any
		require.NoError(t, json.Unmarshal(readFixture(t, k, "valid-minimal.json"), &doc))
		assert.NoError(t, s.Validate(doc), "%s", k)
		doc["$schema"] = filepath.Join(dir, string(k)+".schema.json")
		if strings.Contains(fmt.Sprint(UserWritten()), string(k)) {
			assert.NoError(t, s.Validate(doc), "%s with $schema", k)
		} else {
			assert.Error(t, s.Validate(doc), "%s is geas's own: no $schema", k)
		}
		doc["$Schema"] = "x"
		delete(doc, "$schema")
		if k != Evidence {
			assert.Error(t, s.Validate(doc), "%s refuses $Schema", k)
		}
	}
}

func TestWriteDirReplacesAndReportsFailures(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "task-contract.schema.json")
	require.NoError(t, os.WriteFile(p, []byte("stale"), 0o644))
	_, err := WriteDir(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.NotEqual(t, "stale", string(b))
	// A directory that cannot be made (a file is in the way) is an error.
	_, err = WriteDir(filepath.Join(p, "sub"))
	assert.Error(t, err)
}
