package gate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(b)
}

// hookCommands lists event -> the command lines of a harness file, in file order.
func hookCommands(t *testing.T, spec harnessSpec, data string) map[string][]string {
	t.Helper()
	var f struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &f))
	out := map[string][]string{}
	for ev, entries := range f.Hooks {
		for _, e := range entries {
			handlers := []map[string]any{e}
			if spec.nested {
				handlers = nil
				for _, h := range e["hooks"].([]any) {
					handlers = append(handlers, h.(map[string]any))
				}
			}
			for _, h := range handlers {
				for _, k := range spec.commandKeys[:1] {
					if c, ok := h[k].(string); ok {
						out[ev] = append(out[ev], c)
					}
				}
			}
		}
	}
	return out
}

// TestInstallWritesEachHarnessItsHooks: a fresh project gets one file per harness with each of
// its events running the right geas hook once.
func TestInstallWritesEachHarnessItsHooks(t *testing.T) {
	dir := t.TempDir()
	files, err := InstallHooks(dir, Harnesses())
	require.NoError(t, err)
	require.Len(t, files, 4)
	want := map[string]map[string][]string{
		HarnessClaude: {"Stop": {"geas hook claude-stop"}, "SubagentStop": {"geas hook claude-stop"},
			"TaskCompleted": {"geas hook claude-task-completed"}, "PreToolUse": {"geas hook claude-pre-tool-use"}},
		HarnessCodex:   {"Stop": {"geas hook codex-stop"}, "SubagentStop": {"geas hook codex-stop"}},
		HarnessCopilot: {"agentStop": {"geas hook copilot-stop"}, "subagentStop": {"geas hook copilot-stop"}},
		HarnessCursor:  {"stop": {"geas hook cursor-stop"}},
	}
	for _, f := range files {
		assert.Equal(t, HookFileCreated, f.Status, f.Path)
		assert.Empty(t, f.Present, f.Path)
		spec := harnessSpecs(f.Harness)
		assert.Equal(t, spec.file, f.Path)
		assert.Equal(t, want[f.Harness], hookCommands(t, spec, readFile(t, dir, f.Path)), f.Path)
		assert.Len(t, f.Added, len(want[f.Harness]))
	}
	var cursor struct {
		Version int `json:"version"`
		Hooks   struct {
			Stop []struct {
				LoopLimit *int `json:"loop_limit"`
			} `json:"stop"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, dir, ".cursor/hooks.json")), &cursor))
	assert.Equal(t, 1, cursor.Version)
	require.NotNil(t, cursor.Hooks.Stop[0].LoopLimit, "a loop_limit is always set: Cursor's null is no limit")
	assert.Equal(t, CursorLoopLimit, *cursor.Hooks.Stop[0].LoopLimit)
}

const claudeSettingsWithOthers = `{
    "permissions": {"allow": ["Bash(npm run *)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "npx prettier --write \"$FILE\" && echo <done>"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./lint.sh", "timeout": 1.50}]}]
    },
    "env": {"A": "1"}
}
`

// TestMergeKeepsEveryOtherKeyAndHookInOrder: an existing settings file keeps its keys, its other
// hooks (first in their event), its numbers and strings as written and its indentation; ours are
// appended.
func TestMergeKeepsEveryOtherKeyAndHookInOrder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".claude/settings.json", claudeSettingsWithOthers)
	files, err := InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Equal(t, HookFileMerged, files[0].Status)
	assert.Len(t, files[0].Added, 4)
	got := readFile(t, dir, ".claude/settings.json")
	assert.Less(t, strings.Index(got, `"permissions"`), strings.Index(got, `"hooks"`))
	assert.Less(t, strings.Index(got, `"hooks"`), strings.Index(got, `"env"`))
	assert.Less(t, strings.Index(got, `"PostToolUse"`), strings.Index(got, `"Stop"`))
	assert.Contains(t, got, `"timeout": 1.50`, "a number keeps how it was written")
	assert.Contains(t, got, `echo <done>"`, "no HTML escaping of what was there")
	assert.Contains(t, got, "\n    \"permissions\": {", "four-space indentation is kept")
	cmds := hookCommands(t, claudeSpec(), got)
	assert.Equal(t, []string{"./lint.sh", "geas hook claude-stop"}, cmds["Stop"])
	assert.Equal(t, []string{`npx prettier --write "$FILE" && echo <done>`}, cmds["PostToolUse"])
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &v))
	assert.Equal(t, map[string]any{"A": "1"}, v["env"])
	assert.Equal(t, map[string]any{"allow": []any{"Bash(npm run *)"}}, v["permissions"])
}

// TestSecondInstallChangesNothing: run again, every file is unchanged, byte for byte, and every
// entry is reported present.
func TestSecondInstallChangesNothing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".claude/settings.json", claudeSettingsWithOthers)
	_, err := InstallHooks(dir, Harnesses())
	require.NoError(t, err)
	before := map[string]string{}
	for _, h := range Harnesses() {
		before[h] = readFile(t, dir, harnessSpecs(h).file)
	}
	files, err := InstallHooks(dir, Harnesses())
	require.NoError(t, err)
	for _, f := range files {
		assert.Equal(t, HookFileUnchanged, f.Status, f.Path)
		assert.Empty(t, f.Added, f.Path)
		assert.Len(t, f.Present, len(harnessSpecs(f.Harness).entries), f.Path)
		assert.Equal(t, before[f.Harness], readFile(t, dir, f.Path), f.Path)
	}
}

// TestAnEntryThatRunsTheHookIsNotAddedTwice: the plugin's launcher, a path to geas, quotes and
// plain flags all run the same hook, so nothing is added.
func TestAnEntryThatRunsTheHookIsNotAddedTwice(t *testing.T) {
	for _, cmd := range []string{
		`geas hook cursor-stop`,
		`"${CLAUDE_PLUGIN_ROOT}/bin/geas-plugin" hook cursor-stop`,
		`/usr/local/bin/geas hook cursor-stop --mission mission-001`,
		`geas  hook cursor-stop --task=t-1 --timeout 9m`,
		`C:\\tools\\geas.exe hook cursor-stop`,
	} {
		dir := t.TempDir()
		writeFile(t, dir, ".cursor/hooks.json", `{"version": 1, "hooks": {"stop": [{"command": "`+strings.ReplaceAll(cmd, `"`, `\"`)+`"}]}}`)
		before := readFile(t, dir, ".cursor/hooks.json")
		files, err := InstallHooks(dir, []string{HarnessCursor})
		require.NoError(t, err, cmd)
		assert.Equal(t, HookFileUnchanged, files[0].Status, cmd)
		assert.Equal(t, []string{"stop: geas hook cursor-stop"}, files[0].Present, cmd)
		assert.Equal(t, before, readFile(t, dir, ".cursor/hooks.json"), cmd)
	}
}

// TestAnEntryThatOnlyMentionsTheHookIsNotOurs: a command that names the hook but does not run it
// as installed (echoed, its output thrown away, its failure ignored, another hook, a non-command
// or async hook, an `if` filter) does not count: ours is added beside it, and it is kept.
func TestAnEntryThatOnlyMentionsTheHookIsNotOurs(t *testing.T) {
	for name, handler := range map[string]string{
		"echoed":        `{"type": "command", "command": "echo geas hook claude-stop"}`,
		"redirected":    `{"type": "command", "command": "geas hook claude-stop > /dev/null"}`,
		"or true":       `{"type": "command", "command": "geas hook claude-stop || true"}`,
		"chained":       `{"type": "command", "command": "geas hook claude-stop; exit 0"}`,
		"second line":   `{"type": "command", "command": "geas hook claude-stop\nexit 0"}`,
		"unknown flag":  `{"type": "command", "command": "geas hook claude-stop --bogus"}`,
		"stray word":    `{"type": "command", "command": "geas hook claude-stop exit"}`,
		"flag no value": `{"type": "command", "command": "geas hook claude-stop --task"}`,
		"flag as value": `{"type": "command", "command": "geas hook claude-stop --task --bogus"}`,
		"launcher flag": `{"type": "command", "command": "geas -C /elsewhere hook claude-stop"}`,
		"lookalike":     `{"type": "command", "command": "g\u0435as hook claude-stop"}`,
		"other hook":    `{"type": "command", "command": "geas hook claude-stopper"}`,
		"other program": `{"type": "command", "command": "notgeas hook claude-stop"}`,
		"prompt hook":   `{"type": "prompt", "prompt": "geas hook claude-stop"}`,
		"async":         `{"type": "command", "command": "geas hook claude-stop", "async": true}`,
		"if filter":     `{"type": "command", "command": "geas hook claude-stop", "if": "Bash(never)"}`,
	} {
		dir := t.TempDir()
		writeFile(t, dir, ".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [`+handler+`]}]}}`)
		files, err := InstallHooks(dir, []string{HarnessClaude})
		require.NoError(t, err, name)
		assert.Equal(t, HookFileMerged, files[0].Status, name)
		assert.Contains(t, files[0].Added, "Stop: geas hook claude-stop", name)
		var got struct {
			Hooks struct{ Stop []json.RawMessage }
		}
		require.NoError(t, json.Unmarshal([]byte(readFile(t, dir, ".claude/settings.json")), &got))
		require.Len(t, got.Hooks.Stop, 2, name)
		assert.JSONEq(t, `{"hooks": [`+handler+`]}`, string(got.Hooks.Stop[0]), name)
		assert.Contains(t, string(got.Hooks.Stop[1]), `"command": "geas hook claude-stop"`, name)
	}
	// The honest control: the plain entry counts.
	dir := t.TempDir()
	writeFile(t, dir, ".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook claude-stop"}]}]}}`)
	files, err := InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Contains(t, files[0].Present, "Stop: geas hook claude-stop")
}

// TestABrokenConfigIsRefusedAndNothingIsWritten: JSONC, duplicate keys and members of the wrong
// type are refused with the file's path; the file keeps its bytes and no other harness's file is
// written either.
func TestABrokenConfigIsRefusedAndNothingIsWritten(t *testing.T) {
	cases := map[string]struct{ file, data, why string }{
		"comment":              {".claude/settings.json", "{\n  // mine\n  \"hooks\": {}\n}\n", "not plain JSON"},
		"trailing comma":       {".claude/settings.json", `{"hooks": {},}`, "not plain JSON"},
		"duplicate top key":    {".claude/settings.json", `{"hooks": {}, "hooks": {"Stop": []}}`, `key "hooks" appears twice`},
		"duplicate nested key": {".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook claude-stop", "command": "true"}]}]}}`, `key "command" appears twice`},
		"array":                {".claude/settings.json", `[]`, "not a plain JSON object"},
		"empty":                {".claude/settings.json", "\n", "is empty"},
		"two documents":        {".claude/settings.json", `{} {}`, "not a plain JSON object"},
		"hooks not object":     {".claude/settings.json", `{"hooks": []}`, `"hooks" is not a JSON object`},
		"event not array":      {".claude/settings.json", `{"hooks": {"Stop": {}}}`, `"hooks"."Stop" is not an array`},
		"event null":           {".claude/settings.json", `{"hooks": {"Stop": null}}`, `"hooks"."Stop" is not an array`},
		"group not object":     {".claude/settings.json", `{"hooks": {"Stop": ["x"]}}`, `"hooks"."Stop"[0] is not an object`},
		"group hooks":          {".codex/hooks.json", `{"hooks": {"Stop": [{"hooks": "geas hook codex-stop"}]}}`, `"hooks"."Stop"[0]."hooks" is not an array`},
		"handler not object":   {".codex/hooks.json", `{"hooks": {"Stop": [{"hooks": [1]}]}}`, `"hooks"."Stop"[0]."hooks"[0] is not an object`},
		"command not string":   {".cursor/hooks.json", `{"version": 1, "hooks": {"stop": [{"command": ["geas"]}]}}`, `"hooks"."stop"[0]."command" is not a string`},
		"cursor version 2":     {".cursor/hooks.json", `{"version": 2, "hooks": {}}`, `"version" is 2`},
		"copilot version text": {".github/hooks/geas.json", `{"version": "1", "hooks": {}}`, `"version" is "1"`},
		"bom":                  {".cursor/hooks.json", "\ufeff{\"version\": 1}", "not plain JSON"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		writeFile(t, dir, c.file, c.data)
		_, err := InstallHooks(dir, Harnesses())
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.file+": ", name)
		assert.Contains(t, err.Error(), c.why, name)
		assert.Contains(t, err.Error(), "nothing written", name)
		assert.Equal(t, c.data, readFile(t, dir, c.file), name)
		for _, h := range Harnesses() {
			if f := harnessSpecs(h).file; f != c.file {
				assert.NoFileExists(t, filepath.Join(dir, f), name)
			}
		}
	}
}

// TestInitWithHooksRefusesBeforeStartingGeas: a refused configuration leaves the project as it
// was, .geas/ included.
func TestInitWithHooksRefusesBeforeStartingGeas(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".codex/hooks.json", `{"hooks": {"Stop": {}}}`)
	_, err := InitWithHooks(dir, "", []string{HarnessClaude, HarnessCodex})
	require.Error(t, err)
	assert.NoDirExists(t, filepath.Join(dir, ".geas"))
	assert.NoDirExists(t, filepath.Join(dir, ".claude"))
	// The honest control: with the file fixed, both are done.
	writeFile(t, dir, ".codex/hooks.json", `{"hooks": {}}`)
	res, err := InitWithHooks(dir, "", []string{HarnessClaude, HarnessCodex})
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(dir, ".geas"))
	require.Len(t, res.Hooks, 2)
	assert.Equal(t, HookFileMerged, res.Hooks[1].Status)
}

// TestSymlinksOnTheWayAreRefused: a configuration file that is a link (to a file inside or
// outside the project), a directory on its way that is a link, or a file where a directory should
// be is refused and nothing is written through it.
func TestSymlinksOnTheWayAreRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	writeFile(t, outside, "settings.json", `{"hooks": {}}`)

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "settings.json"), filepath.Join(dir, ".claude/settings.json")))
	_, err := InstallHooks(dir, []string{HarnessClaude})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".claude/settings.json is a symbolic link")
	assert.Equal(t, `{"hooks": {}}`, readFile(t, outside, "settings.json"))

	dir = t.TempDir()
	writeFile(t, dir, ".geas/state/run.json", `{}`)
	require.NoError(t, os.Symlink(".geas/state", filepath.Join(dir, ".cursor")))
	_, err = InstallHooks(dir, []string{HarnessCursor})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".cursor is a symbolic link")
	assert.NoFileExists(t, filepath.Join(dir, ".geas/state/hooks.json"))

	dir = t.TempDir()
	writeFile(t, dir, ".github", "a file")
	_, err = InstallHooks(dir, []string{HarnessCopilot})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".github is not a directory")
}

// TestMergeKeepsTheFileMode: a merged file keeps its permission bits.
func TestMergeKeepsTheFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permission bits")
	}
	for _, mode := range []os.FileMode{0o600, 0o640, 0o664} {
		dir := t.TempDir()
		writeFile(t, dir, ".codex/hooks.json", `{"hooks": {}}`)
		p := filepath.Join(dir, ".codex/hooks.json")
		require.NoError(t, os.Chmod(p, mode))
		files, err := InstallHooks(dir, []string{HarnessCodex})
		require.NoError(t, err)
		assert.Equal(t, HookFileMerged, files[0].Status)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm())
	}
}

// TestCopilotEntryInAnotherHooksFileCounts: Copilot reads every .github/hooks/*.json, so our hook
// in another file there is not added again to geas.json; an unreadable sibling is noted, never
// rewritten.
func TestCopilotEntryInAnotherHooksFileCounts(t *testing.T) {
	dir := t.TempDir()
	other := `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "geas hook copilot-stop"}]}}`
	writeFile(t, dir, ".github/hooks/team.json", other)
	writeFile(t, dir, ".github/hooks/broken.json", `{`)
	files, err := InstallHooks(dir, []string{HarnessCopilot})
	require.NoError(t, err)
	f := files[0]
	assert.Equal(t, HookFileCreated, f.Status)
	assert.Equal(t, []string{"agentStop: geas hook copilot-stop (in .github/hooks/team.json)"}, f.Present)
	assert.Equal(t, []string{"subagentStop: geas hook copilot-stop"}, f.Added)
	assert.Contains(t, strings.Join(f.Notes, "\n"), ".github/hooks/broken.json (read by copilot too) was not searched")
	assert.Equal(t, map[string][]string{"subagentStop": {"geas hook copilot-stop"}},
		hookCommands(t, copilotSpec(), readFile(t, dir, ".github/hooks/geas.json")))
	assert.Equal(t, other, readFile(t, dir, ".github/hooks/team.json"))
	assert.Equal(t, `{`, readFile(t, dir, ".github/hooks/broken.json"))
}

// TestAShortTimeoutOnOurEntryIsNoted: our hook already there with a timeout under ours (or a
// harness default under it, Copilot's 30 s) is kept, with a note to raise it.
func TestAShortTimeoutOnOurEntryIsNoted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".codex/hooks.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook codex-stop", "timeout": 5}]}],
		"SubagentStop": [{"hooks": [{"type": "command", "command": "geas hook codex-stop"}]}]}}`)
	writeFile(t, dir, ".github/hooks/geas.json", `{"version": 1, "hooks": {"agentStop": [{"bash": "geas hook copilot-stop"}], "subagentStop": [{"bash": "geas hook copilot-stop", "timeoutSec": 900}]}}`)
	files, err := InstallHooks(dir, []string{HarnessCodex, HarnessCopilot})
	require.NoError(t, err)
	codex := strings.Join(files[0].Notes, "\n")
	assert.Contains(t, codex, `"hooks"."Stop"[0]."hooks"[0] runs geas hook codex-stop with a timeout of 5 s, under 600 s`)
	assert.NotContains(t, codex, "SubagentStop", "no timeout is Codex's 600 s")
	copilot := strings.Join(files[1].Notes, "\n")
	assert.Contains(t, copilot, `"hooks"."agentStop"[0] runs geas hook copilot-stop with a timeout of 30 s`)
	assert.NotContains(t, copilot, "subagentStop")
	for _, f := range files {
		assert.Equal(t, HookFileUnchanged, f.Status)
	}
}

// TestClaudeSettingsThatChangeTheHooksAreNoted: settings that enable the geas-gate plugin get a
// note that both run; settings that disable all hooks, a note that none runs.
func TestClaudeSettingsThatChangeTheHooksAreNoted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".claude/settings.json", `{"enabledPlugins": {"geas-gate@geas": true}}`)
	files, err := InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(files[0].Notes, "\n"), "enables the geas-gate plugin here too")
	dir = t.TempDir()
	writeFile(t, dir, ".claude/settings.json", `{"enabledPlugins": {"geas-gate@geas": false}, "disableAllHooks": false}`)
	files, err = InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(files[0].Notes, "\n"), "enables the geas-gate plugin")
	assert.NotContains(t, strings.Join(files[0].Notes, "\n"), "disableAllHooks")
	dir = t.TempDir()
	writeFile(t, dir, ".claude/settings.json", `{"disableAllHooks": true}`)
	files, err = InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(files[0].Notes, "\n"), "disableAllHooks is true in these settings")
}

// TestUnknownHarnessIsAUsageError: only the four names are installed.
func TestUnknownHarnessIsAUsageError(t *testing.T) {
	_, err := InstallHooks(t.TempDir(), []string{"vscode"})
	var ie *InputError
	assert.True(t, errors.As(err, &ie))
}

// TestClaudeEntriesMirrorThePlugin: what geas init writes for Claude Code registers the events,
// matchers, timeouts and hook commands the plugin's hooks/hooks.json does, so the two ways of
// installing gate the same stops.
func TestClaudeEntriesMirrorThePlugin(t *testing.T) {
	type handler struct {
		Type, Command, StatusMessage string
		Timeout                      int
	}
	type group struct {
		Matcher string
		Hooks   []handler
	}
	var plugin struct{ Hooks map[string][]group }
	b, err := os.ReadFile(filepath.Join("..", "hooks", "hooks.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &plugin))
	dir := t.TempDir()
	_, err = InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	var ours struct{ Hooks map[string][]group }
	require.NoError(t, json.Unmarshal([]byte(readFile(t, dir, ".claude/settings.json")), &ours))
	require.Len(t, ours.Hooks, len(plugin.Hooks))
	for ev, groups := range plugin.Hooks {
		require.Len(t, groups, 1, ev)
		require.Len(t, ours.Hooks[ev], 1, ev)
		p, o := groups[0], ours.Hooks[ev][0]
		assert.Equal(t, p.Matcher, o.Matcher, ev)
		require.Len(t, o.Hooks, len(p.Hooks), ev)
		for i := range p.Hooks {
			ph, oh := p.Hooks[i], o.Hooks[i]
			_, sub, ok := strings.Cut(ph.Command, " hook ")
			require.True(t, ok, ph.Command)
			assert.Equal(t, "geas hook "+sub, oh.Command, ev)
			ph.Command, oh.Command = "", ""
			assert.Equal(t, ph, oh, ev)
		}
	}
}

// TestNoDuplicateKeysLooksAtEveryDepth: a key twice in one object is found however deep; the same
// key in two objects is fine.
func TestNoDuplicateKeysLooksAtEveryDepth(t *testing.T) {
	assert.NoError(t, noDuplicateKeys([]byte(`{"a": [{"k": 1}, {"k": 2}], "b": {"k": {"k": []}}, "k": "k"}`)))
	assert.Error(t, noDuplicateKeys([]byte(`{"a": [{"k": 1, "k": 2}]}`)))
	assert.Error(t, noDuplicateKeys([]byte(`{"a": {"b": [[{"x": {"k": 1, "j": [], "k": 2}}]]}}`)))
	assert.Error(t, noDuplicateKeys([]byte(`{"k": {}, "k": 1}`)))
	assert.NoError(t, noDuplicateKeys([]byte(`{"a": "k", "k": "a"}`)), "a value equal to a key is not a key")
}

// TestIndentOf: the first indented line gives the indentation; none gives two spaces.
func TestIndentOf(t *testing.T) {
	assert.Equal(t, "    ", indentOf([]byte("{\n    \"a\": 1\n}")))
	assert.Equal(t, "\t", indentOf([]byte("{\n\t\"a\": 1\n}")))
	assert.Equal(t, "  ", indentOf([]byte(`{"a": 1}`)))
	assert.Equal(t, "  ", indentOf([]byte("{\n \t\"a\": 1\n}")))
}

// TestAnOlderGuardMatcherDoesNotStandForOurs: a settings file whose PreToolUse group runs the
// guard for the file tools only (an install from before the guard read Bash and MCP calls) gets
// geas's group beside it, with a note, so Bash and MCP calls are guarded; the same matcher is
// left alone (the control).
func TestAnOlderGuardMatcherDoesNotStandForOurs(t *testing.T) {
	old := `{"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit|NotebookEdit", "hooks": [{"type": "command", "command": "geas hook claude-pre-tool-use", "timeout": 30}]}]}}` + "\n"
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	path := filepath.Join(dir, ".claude", "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	files, err := InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Contains(t, files[0].Added, "PreToolUse: geas hook claude-pre-tool-use")
	assert.Contains(t, strings.Join(files[0].Notes, "\n"), `with matcher "Write|Edit|MultiEdit|NotebookEdit"`)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), toolGuardMatcher)

	again, err := InstallHooks(dir, []string{HarnessClaude})
	require.NoError(t, err)
	assert.Empty(t, again[0].Added, "the second install finds geas's own group")
}

// TestAConfigOverTheSizeBoundIsRefusedAndKept: a configuration file larger than geas init reads
// is refused with nothing written, and the user's file is left whole (never truncated to what was
// read). The control: the same settings under the bound are merged.
func TestAConfigOverTheSizeBoundIsRefusedAndKept(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat(" ", maxHookConfigSize)
	big := `{"model": "x",` + pad + `"hooks": {}}`
	writeFile(t, dir, ".codex/hooks.json", big)
	_, err := InstallHooks(dir, []string{HarnessCodex})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing written")
	assert.Equal(t, big, readFile(t, dir, ".codex/hooks.json"))

	small := `{"model": "x", "hooks": {}}`
	writeFile(t, dir, ".codex/hooks.json", small)
	files, err := InstallHooks(dir, []string{HarnessCodex})
	require.NoError(t, err)
	assert.Equal(t, HookFileMerged, files[0].Status)
	assert.Contains(t, readFile(t, dir, ".codex/hooks.json"), `"model": "x"`)
}
