package gate

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

// harnessSchemaFiles names, for each harness, the schema its configuration is checked against
// (testdata/harness-schemas/README.md says where each comes from): the published schema for
// Claude Code and Codex, a shape written from the documentation for Cursor and Copilot, which
// publish none.
var harnessSchemaFiles = map[string]string{
	HarnessClaude:  "claude-code-settings.json",
	HarnessCodex:   "codex-hooks.json",
	HarnessCursor:  "cursor-hooks.shape.json",
	HarnessCopilot: "copilot-hooks.shape.json",
}

// compiledHarnessSchemas caches each compiled schema (Claude Code's is 200 KB).
var compiledHarnessSchemas = map[string]*jsonschema.Schema{}

func harnessSchema(t *testing.T, harness string) *jsonschema.Schema {
	t.Helper()
	if s, ok := compiledHarnessSchemas[harness]; ok {
		return s
	}
	name := harnessSchemaFiles[harness]
	b, err := os.ReadFile(filepath.Join("testdata", "harness-schemas", name))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	url := "https://geas.invalid/harness-schemas/" + name
	require.NoError(t, c.AddResource(url, bytes.NewReader(b)))
	s, err := c.Compile(url)
	require.NoError(t, err, name)
	compiledHarnessSchemas[harness] = s
	return s
}

func validateJSON(t *testing.T, s *jsonschema.Schema, data string) error {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(data), &v))
	return s.Validate(v)
}

// TestInstalledConfigsValidateAgainstTheHarnessSchemas: every file geas init writes, fresh or
// merged into a file with other hooks, is valid for its harness's schema.
func TestInstalledConfigsValidateAgainstTheHarnessSchemas(t *testing.T) {
	existing := map[string]string{
		HarnessClaude: claudeSettingsWithOthers,
		HarnessCodex:  `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}`,
		HarnessCopilot: `{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo start", "cwd": ".", "timeoutSec": 10}],
			"agentStop": [{"type": "command", "bash": "./summary.sh", "powershell": "./summary.ps1"}]}}`,
		HarnessCursor: `{"version": 1, "hooks": {"afterFileEdit": [{"command": ".cursor/hooks/format.sh"}], "stop": [{"command": "./audit.sh", "loop_limit": null}]}}`,
	}
	for _, fresh := range []bool{true, false} {
		dir := t.TempDir()
		if !fresh {
			for h, data := range existing {
				writeFile(t, dir, harnessSpecs(h).file, data)
			}
		}
		files, err := InstallHooks(dir, Harnesses())
		require.NoError(t, err)
		for _, f := range files {
			assert.NotEmpty(t, f.Added, f.Path)
			assert.NoError(t, validateJSON(t, harnessSchema(t, f.Harness), readFile(t, dir, f.Path)), "%s (fresh %v)", f.Path, fresh)
		}
	}
}

// TestHarnessSchemasCanFail: each schema rejects a configuration that breaks its harness's
// format, so the validation above can fail.
func TestHarnessSchemasCanFail(t *testing.T) {
	for harness, bad := range map[string]string{
		HarnessClaude:  `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook claude-stop", "timeout": 0}]}]}}`,
		HarnessCodex:   `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook codex-stop", "timeout": 1.5}]}]}}`,
		HarnessCursor:  `{"version": 1, "hooks": {"stop": [{"command": "geas hook cursor-stop", "loopLimit": 8}]}}`,
		HarnessCopilot: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "timeoutSec": 600}]}}`,
	} {
		assert.Error(t, validateJSON(t, harnessSchema(t, harness), bad), harness)
	}
}

// TestDocumentedExamplesFitTheShapes: the shapes written for Cursor and Copilot accept the
// examples of those harnesses' own documentation.
func TestDocumentedExamplesFitTheShapes(t *testing.T) {
	// https://cursor.com/docs/agent/hooks, "Configuration file" and "Command-based hooks".
	cursorDocs := []string{
		`{"version": 1, "hooks": {"sessionStart": [{"command": "./session-init.sh"}], "preToolUse": [{"command": "./hooks/validate-tool.sh", "matcher": "Shell|Read|Write"}],
		  "subagentStop": [{"command": "./hooks/audit-subagent.sh"}], "stop": [{"command": "./audit.sh", "loop_limit": 10}]}}`,
		`{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./scripts/approve-network.sh", "timeout": 30, "matcher": "curl|wget|nc"}]}}`,
		`{"version": 1, "hooks": {"beforeShellExecution": [{"type": "prompt", "prompt": "Is this command safe?", "timeout": 10}]}}`,
	}
	// https://docs.github.com/en/copilot/reference/hooks-reference, "Hook configuration format".
	copilotDocs := []string{
		`{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "YOUR_BASH_COMMAND", "powershell": "YOUR_POWERSHELL_COMMAND", "cwd": "OPTIONAL/WORKING/DIRECTORY", "env": {"VAR": "VALUE"}, "timeoutSec": 30}]}}`,
		`{"version": 1, "hooks": {"preToolUse": [{"type": "command", "exec": "YOUR_EXECUTABLE", "args": ["YOUR_ARGUMENT"], "cwd": "OPTIONAL/WORKING/DIRECTORY", "env": {"VAR": "VALUE"}, "timeoutSec": 30}]}}`,
		`{"version": 1, "hooks": {"postToolUse": [{"type": "http", "url": "https://hooks.example.com/copilot", "headers": {"X-Source": "copilot-cli"}, "allowedEnvVars": ["GITHUB_TOKEN"], "timeoutSec": 30}]}}`,
		`{"version": 1, "hooks": {"sessionStart": [{"type": "prompt", "prompt": "YOUR_PROMPT_TEXT_OR_SLASH_COMMAND"}]}}`,
	}
	for _, ex := range cursorDocs {
		assert.NoError(t, validateJSON(t, harnessSchema(t, HarnessCursor), ex), ex)
	}
	for _, ex := range copilotDocs {
		assert.NoError(t, validateJSON(t, harnessSchema(t, HarnessCopilot), ex), ex)
	}
}
