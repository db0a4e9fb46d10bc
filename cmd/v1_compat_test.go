package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geasV1RecordSchema compiles geas v1.0's own record schema, as it stands: the copy of
// ../shared/geas-v1 in testdata/geas-v1 (CI does not depend on the shared folder). It has no
// place for gate_history or integration at the record's root.
func geasV1RecordSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for _, name := range []string{"record.schema.json", "_defs.schema.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "geas-v1", name))
		require.NoError(t, err)
		require.NoError(t, c.AddResource(name, bytes.NewReader(b)))
	}
	s, err := c.Compile("record.schema.json")
	require.NoError(t, err)
	return s
}

// TestGeasV1CanCloseWhatTheGateVerified (SPEC §3 "geas v1 round trip"): after
// every command of a pass — the first of which migrates a record written in the earlier layout
// — record.json validates against geas v1.0's record schema with no superset, and the v1
// sections a pipeline writes after the gate (verdict, closure, retrospective) still go in.
func TestGeasV1CanCloseWhatTheGateVerified(t *testing.T) {
	v1 := geasV1RecordSchema(t)
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	recPath := filepath.Join(dir, taskDir, "record.json")
	valid := func(after string) {
		t.Helper()
		b, err := os.ReadFile(recPath)
		require.NoError(t, err)
		var doc any
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.NoError(t, v1.Validate(doc), "record.json after %s", after)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		assert.NotContains(t, m, "gate_history", after)
		assert.NotContains(t, m, "integration", after)
	}
	// The control: the example record is in the earlier layout, which geas v1 refuses.
	b, err := os.ReadFile(recPath)
	require.NoError(t, err)
	var legacy any
	require.NoError(t, json.Unmarshal(b, &legacy))
	require.Error(t, v1.Validate(legacy), "integration at the root is not geas v1.0")

	steps := []struct {
		args []string
		code int
	}{
		{[]string{"task", "record", "add", "--task", "t1", "--section", "self_check", "--data", `{"confidence":4,"known_risks":[],"untested_paths":[],"summary":"Flag added"}`}, 0},
		{[]string{"task", "integrate", "--task", "t1", "--commit", "HEAD", "--branch", "main"}, 0},
		{[]string{"gate", "--task", "t1"}, 0},
		{[]string{"task", "show", "--task", "t1"}, 0},
		{[]string{"gate", "verify", "--task", "t1"}, 0},
		{[]string{"gate", "verify", "--apply", "--task", "t1"}, 0},
		{[]string{"gate", "--task", "t1"}, 0}, // a re-check of the verified task
		{[]string{"task", "record", "add", "--task", "t1", "--section", "verdict", "--data", `{"verdict":"pass","rationale":"the gate verified it"}`}, 0},
		{[]string{"task", "record", "add", "--task", "t1", "--section", "closure", "--data", `{"change_summary":"flag added","reviews":[{"reviewer_type":"design-authority","status":"approved"}],"open_risks":[],"debt_items":[]}`}, 0},
		{[]string{"task", "record", "add", "--task", "t1", "--section", "retrospective", "--data", `{"what_went_well":["small change"],"what_broke":[]}`}, 0},
		{[]string{"task", "transition", "--id", "t1", "--to", "passed"}, 0},
		{[]string{"gate", "verify", "--task", "t1"}, 0},
	}
	for _, s := range steps {
		code, out := runGeas(t, dir, nil, s.args...)
		require.Equal(t, s.code, code, "geas %v: %s", s.args, out)
		valid(s.args[0] + " " + s.args[1])
	}
	// The gate's history and the integration are beside it, and they still verify.
	for _, f := range []string{"gate-history.jsonl", "integration.json"} {
		_, err := os.Stat(filepath.Join(dir, taskDir, f))
		assert.NoError(t, err, f)
	}
	rec := loadRecord(t, dir)
	assert.Len(t, rec.History(), 1)
	for _, s := range []string{"verdict", "closure", "retrospective", "gate_result", "self_check"} {
		_, ok := rec.Section(s)
		assert.True(t, ok, s)
	}
}
