package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpToolSchemas compiles the outputSchema every tool declares (with santhosh-tekuri/jsonschema,
// not the SDK's validator) after checking that each declares one of type object, as MCP asks.
func mcpToolSchemas(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Schema {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	out := map[string]*jsonschema.Schema{}
	for _, tool := range list.Tools {
		require.NotNil(t, tool.OutputSchema, "tool %s declares no outputSchema", tool.Name)
		raw, err := json.Marshal(tool.OutputSchema)
		require.NoError(t, err)
		var top struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(raw, &top))
		assert.Equal(t, "object", top.Type, "tool %s", tool.Name)
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		url := "mem://" + tool.Name + ".json"
		require.NoError(t, c.AddResource(url, bytes.NewReader(raw)))
		s, err := c.Compile(url)
		require.NoError(t, err, "tool %s: %s", tool.Name, raw)
		out[tool.Name] = s
	}
	assert.Len(t, out, 3)
	return out
}

// mcpResult is one tool result to validate: its structured content, as the client decoded it.
type mcpResult struct {
	name, tool string
	doc        map[string]any
}

// collect calls a tool and keeps its structured content under a name.
func collect(t *testing.T, cs *mcp.ClientSession, results *[]mcpResult, name, tool string, args map[string]any) map[string]any {
	t.Helper()
	var doc map[string]any
	mcpCall(t, cs, tool, args, &doc)
	*results = append(*results, mcpResult{name, tool, doc})
	return doc
}

// TestMCPResultsMatchTheirOutputSchemas: every tool declares an outputSchema, and real results of
// every kind validate against it with a second validator: pass, fail, error with an unreadable
// contract (gate_profile null), the recheck of a verified task that holds, is revoked and is not
// backed by the records, verify's intact, revoked, tampered and skipped, and the task status. The
// schemas are not permissive: a result with a verdict out of the vocabulary, a missing or an
// unknown property is refused.
func TestMCPResultsMatchTheirOutputSchemas(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	cs := mcpSession(t, dir)
	schemas := mcpToolSchemas(t, cs)
	var results []mcpResult
	task := map[string]any{"task": "t1"}

	pass := collect(t, cs, &results, "pass", mcpToolEvaluate, task)
	assert.Equal(t, "pass", pass["verdict"])
	collect(t, cs, &results, "artifact_only pass", mcpToolEvaluate, map[string]any{"task": "t2"})
	collect(t, cs, &results, "status t1", mcpToolTaskStatus, task)
	collect(t, cs, &results, "status t2", mcpToolTaskStatus, map[string]any{"task": "t2"})
	collect(t, cs, &results, "verify: nothing passed", mcpToolVerify, map[string]any{})
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"exit 1"} })
	assert.Equal(t, "fail", collect(t, cs, &results, "fail", mcpToolEvaluate, task)["verdict"])
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	code, res := gateTask(t, dir)
	require.Equal(t, 0, code, "the example task passes: %v", res["causes"])
	assert.Equal(t, true, collect(t, cs, &results, "recheck holds", mcpToolEvaluate, task)["recheck"])
	assert.Equal(t, true, collect(t, cs, &results, "verify intact", mcpToolVerify, map[string]any{})["ok"])
	withdrawQA(t, dir)
	assert.Equal(t, "fail", collect(t, cs, &results, "recheck revoked", mcpToolEvaluate, task)["verdict"])
	assert.Equal(t, false, collect(t, cs, &results, "verify revoked", mcpToolVerify, task)["ok"])

	// A project whose t1 says verified by hand (no gate pass in its history), and one whose t1
	// contract cannot be read.
	hand := copyExample(t)
	editContract(t, hand, func(c map[string]any) { c["status"] = "verified" })
	hs := mcpSession(t, hand)
	unbacked := collect(t, hs, &results, "recheck unbacked", mcpToolEvaluate, task)
	assert.Equal(t, "error", unbacked["verdict"])
	tampered := collect(t, hs, &results, "verify tampered", mcpToolVerify, task)
	require.Len(t, tampered["tasks"], 1)
	assert.Equal(t, "tampered", tampered["tasks"].([]any)[0].(map[string]any)["status"])
	broken := copyExample(t)
	require.NoError(t, os.WriteFile(filepath.Join(broken, taskDir, "contract.json"), []byte(`{"task_id": `), 0o644))
	bad := collect(t, mcpSession(t, broken), &results, "unreadable contract", mcpToolEvaluate, task)
	assert.Equal(t, "error", bad["verdict"])
	assert.Nil(t, bad["gate_profile"], "the unknown profile is null")

	for _, r := range results {
		assert.NoError(t, schemas[r.tool].Validate(r.doc), "%s (%s)", r.name, r.tool)
	}

	mutants := map[string]func(m map[string]any){
		"verdict out of the vocabulary": func(m map[string]any) { m["verdict"] = "passed" },
		"verdict missing":               func(m map[string]any) { delete(m, "verdict") },
		"unknown property":              func(m map[string]any) { m["approved"] = true },
		"profile out of the vocabulary": func(m map[string]any) { m["gate_profile"] = "anything" },
		"check status unknown":          func(m map[string]any) { m["checks"].([]any)[0].(map[string]any)["status"] = "ok" },
		"transition to no state":        func(m map[string]any) { m["transition"] = map[string]any{"from": "integrated", "to": "done"} },
	}
	for name, mutate := range mutants {
		doc := clone(t, pass)
		mutate(doc)
		assert.Error(t, schemas[mcpToolEvaluate].Validate(doc), name)
	}
	verify := clone(t, tampered)
	verify["tasks"].([]any)[0].(map[string]any)["status"] = "fine"
	assert.Error(t, schemas[mcpToolVerify].Validate(verify), "a verify status out of the vocabulary")
}

// clone deep-copies a decoded JSON document.
func clone(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
