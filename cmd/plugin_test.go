package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
)

// The documented shapes these tests hold the plugin files to (Claude Code's plugins reference,
// "Plugin manifest schema"; plugin marketplaces, "Marketplace schema"; hooks reference). They run
// on every machine; .ci/claude-plugin-validate runs Claude Code's own validator where npm is.
var (
	// "name: Unique identifier (kebab-case, no spaces)".
	kebabName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	semver    = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	// The plugin's hook and MCP commands: the launcher, by ${CLAUDE_PLUGIN_ROOT} (quoted in shell
	// form, as the reference's "Hook troubleshooting" writes it), then the geas arguments.
	launcherCommand = regexp.MustCompile(`^"\$\{CLAUDE_PLUGIN_ROOT\}/(bin/geas-plugin)" (.+)$`)
)

// pluginEvents are the hook events the plugin registers, with the geas command each runs. The
// names are Claude Code's, case-sensitive ("Verify the event name is correct (case-sensitive)").
var pluginEvents = map[string]string{
	"Stop":          "hook claude-stop",
	"SubagentStop":  "hook claude-stop",
	"TaskCompleted": "hook claude-task-completed",
	"PreToolUse":    "hook claude-pre-tool-use",
}

// reservedMarketplaceNames are the marketplace names the marketplace reference reserves.
var reservedMarketplaceNames = []string{
	"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "claude-plugins-community",
	"claude-community", "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills",
	"knowledge-work-plugins", "life-sciences", "claude-for-legal", "claude-for-financial-services",
	"financial-services-plugins", "first-party-plugins", "healthcare",
}

// readPluginJSON reads a plugin file of the repository as one JSON object without duplicate keys.
func readPluginJSON(t *testing.T, rel string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	require.NoError(t, err)
	doc, err := schemas.Decode(rel, b)
	require.NoError(t, err, "%s must be one JSON value without duplicate keys", rel)
	obj, ok := doc.(map[string]any)
	require.True(t, ok, "%s must be a JSON object", rel)
	return obj
}

func str(t *testing.T, obj map[string]any, key, file string) string {
	t.Helper()
	s, ok := obj[key].(string)
	require.True(t, ok, "%s: %q must be a string, got %T", file, key, obj[key])
	return s
}

func TestPluginManifests(t *testing.T) {
	m := readPluginJSON(t, ".claude-plugin/plugin.json")
	name := str(t, m, "name", "plugin.json")
	assert.Regexp(t, kebabName, name)
	assert.Regexp(t, semver, str(t, m, "version", "plugin.json"))
	assert.NotEmpty(t, str(t, m, "description", "plugin.json"))
	author, ok := m["author"].(map[string]any)
	require.True(t, ok, "plugin.json author must be an object")
	assert.NotEmpty(t, str(t, author, "name", "plugin.json author"))
	for _, k := range []string{"homepage", "repository"} {
		assert.True(t, strings.HasPrefix(str(t, m, k, "plugin.json"), "https://github.com/geas-dev/geas"), k)
	}
	assert.Equal(t, "Apache-2.0", str(t, m, "license", "plugin.json"))
	kw, ok := m["keywords"].([]any)
	require.True(t, ok, "keywords must be an array (a string fails to load)")
	assert.NotEmpty(t, kw)
	// Components are found in their default places, so the manifest names none of them.
	for _, k := range []string{"hooks", "mcpServers", "commands"} {
		assert.NotContains(t, m, k, "plugin.json %s: the default location is used", k)
	}

	mk := readPluginJSON(t, ".claude-plugin/marketplace.json")
	mname := str(t, mk, "name", "marketplace.json")
	assert.Regexp(t, kebabName, mname)
	assert.NotContains(t, reservedMarketplaceNames, mname)
	owner, ok := mk["owner"].(map[string]any)
	require.True(t, ok, "marketplace.json owner must be an object")
	assert.NotEmpty(t, str(t, owner, "name", "marketplace.json owner"))
	plugins, ok := mk["plugins"].([]any)
	require.True(t, ok)
	require.Len(t, plugins, 1)
	entry := plugins[0].(map[string]any)
	assert.Equal(t, name, str(t, entry, "name", "marketplace.json plugin"), "the marketplace offers this plugin under its own name")
	source := str(t, entry, "source", "marketplace.json plugin")
	require.True(t, strings.HasPrefix(source, "./"), "a relative source must start with ./")
	assert.FileExists(t, filepath.Join(repoRoot, source, ".claude-plugin", "plugin.json"), "the source is this repository's root")
}

// TestPluginHooksRunTheGate: hooks/hooks.json registers exactly the documented events, each with
// one command hook that runs the launcher (which exists and is executable) with a geas command that
// exists; SubagentStop's matcher matches the agents that build the change, PreToolUse's the file
// tools, Bash and MCP tools, and the events without matcher support have none.
func TestPluginHooksRunTheGate(t *testing.T) {
	h := readPluginJSON(t, "hooks/hooks.json")
	assert.NotEmpty(t, str(t, h, "description", "hooks.json"))
	events, ok := h["hooks"].(map[string]any)
	require.True(t, ok, "hooks.json must hold a hooks object")
	var names []string
	for e := range events {
		names = append(names, e)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"PreToolUse", "Stop", "SubagentStop", "TaskCompleted"}, names)
	for event, groups := range events {
		gs, ok := groups.([]any)
		require.True(t, ok, "%s: an array of matcher groups", event)
		require.Len(t, gs, 1, event)
		group := gs[0].(map[string]any)
		matcher, hasMatcher := group["matcher"]
		// Stop and TaskCompleted have "no matcher support" (a matcher there is silently ignored).
		assert.Equal(t, event == "SubagentStop" || event == "PreToolUse", hasMatcher, "%s matcher", event)
		switch event {
		case "SubagentStop":
			checkSubagentMatcher(t, matcher.(string))
		case "PreToolUse":
			// A regular expression (it holds more than letters and |), anchored: the file tools,
			// Bash and every MCP tool, which the identity guard reads; no other tool.
			re := regexp.MustCompile(matcher.(string))
			for _, tool := range []string{"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "mcp__shell__run", "mcp__plugin_geas_geas__geas_gate_evaluate"} {
				assert.True(t, re.MatchString(tool), tool)
			}
			for _, tool := range []string{"Read", "TodoWrite", "WebFetch", "Grep", "BashOutput", "xmcp__a"} {
				assert.False(t, re.MatchString(tool), tool)
			}
		}
		handlers, ok := group["hooks"].([]any)
		require.True(t, ok, event)
		require.Len(t, handlers, 1, event)
		hk := handlers[0].(map[string]any)
		assert.Equal(t, "command", str(t, hk, "type", event))
		want := "600" // a gate run may take minutes
		if event == "PreToolUse" {
			want = "30" // the guard only compares paths
		}
		assert.Equal(t, want, fmt.Sprint(hk["timeout"]), event)
		if event != "PreToolUse" {
			// The hook ends its own run first (--timeout), so that Claude Code never kills it: a
			// killed hook is a non-blocking error, after which the agent goes on unverified.
			secs, err := strconv.ParseFloat(fmt.Sprint(hk["timeout"]), 64)
			require.NoError(t, err, event)
			assert.Less(t, defaultHookTimeout.Seconds(), secs, "%s: the hook's --timeout default is below its timeout in hooks.json", event)
		}
		assert.Equal(t, pluginEvents[event], checkLauncherCommand(t, str(t, hk, "command", event)), event)
	}

	mcp := readPluginJSON(t, ".mcp.json")
	servers, ok := mcp["mcpServers"].(map[string]any)
	require.True(t, ok)
	geas, ok := servers["geas"].(map[string]any)
	require.True(t, ok, ".mcp.json names the geas server")
	cmdPath := str(t, geas, "command", ".mcp.json")
	require.Equal(t, "${CLAUDE_PLUGIN_ROOT}/bin/geas-plugin", cmdPath)
	checkExecutable(t, "bin/geas-plugin")
	var args []string
	for _, a := range geas["args"].([]any) {
		args = append(args, a.(string))
	}
	assert.Equal(t, []string{"-C", "${CLAUDE_PROJECT_DIR}", "mcp"}, args, "geas mcp in the project Claude Code started in")
	checkGeasCommand(t, "mcp")
}

// checkSubagentMatcher: the matcher is on Claude Code's regular-expression path (it holds
// characters outside letters, digits, _, -, spaces, commas and |), tested unanchored like
// JavaScript's RegExp.test; plugin agents are plugin-scoped ("my-plugin:reviewer").
func checkSubagentMatcher(t *testing.T, matcher string) {
	t.Helper()
	re := regexp.MustCompile(matcher)
	for _, a := range []string{"software-engineer", "platform-engineer", "technical-writer", "research-engineer",
		"research-writer", "geas:software-engineer", "my-plugin:platform-engineer"} {
		assert.True(t, re.MatchString(a), "SubagentStop gates %s", a)
	}
	for _, a := range []string{"Explore", "Plan", "general-purpose", "qa-engineer", "security-engineer", "design-authority",
		"challenger", "senior-software-engineer", "software-engineer-helper", "software-engineer\n", "Software-Engineer", ""} {
		assert.False(t, re.MatchString(a), "SubagentStop does not gate %q", a)
	}
}

// checkLauncherCommand returns the geas arguments of a hook command after checking the launcher.
func checkLauncherCommand(t *testing.T, command string) string {
	t.Helper()
	mm := launcherCommand.FindStringSubmatch(command)
	require.NotNil(t, mm, "hook command %q must run the launcher through ${CLAUDE_PLUGIN_ROOT}", command)
	checkExecutable(t, mm[1])
	checkGeasCommand(t, mm[2])
	return mm[2]
}

func checkExecutable(t *testing.T, rel string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(repoRoot, rel))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "%s is a file", rel)
	if runtime.GOOS != "windows" {
		assert.NotZero(t, fi.Mode().Perm()&0o111, "%s must be executable", rel)
	}
}

// checkGeasCommand: the arguments name a command of this geas (a renamed subcommand fails here).
func checkGeasCommand(t *testing.T, args string) {
	t.Helper()
	root := newRootCmd(&globalOptions{})
	words := strings.Fields(args)
	c, rest, err := root.Find(words)
	require.NoError(t, err, "geas %s", args)
	assert.Empty(t, rest, "geas %s: every word is a command", args)
	assert.Equal(t, "geas "+args, c.CommandPath())
}

// TestPluginGateCommand: commands/gate.md is a flat command file with the frontmatter the skills
// reference documents, only a user may run it, and it runs the gate through the launcher.
func TestPluginGateCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "commands", "gate.md"))
	require.NoError(t, err)
	parts := bytes.SplitN(b, []byte("---\n"), 3)
	require.Len(t, parts, 3, "gate.md starts with --- frontmatter ---")
	require.Empty(t, parts[0])
	front := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(parts[1])), "\n") {
		k, v, ok := strings.Cut(line, ":")
		require.True(t, ok, "frontmatter line %q", line)
		front[k] = strings.TrimSpace(v)
	}
	for k := range front {
		assert.Contains(t, []string{"description", "argument-hint", "disable-model-invocation", "allowed-tools"}, k)
	}
	assert.NotEmpty(t, front["description"])
	assert.Equal(t, "true", front["disable-model-invocation"], "a recorded run spends retries: only a user runs /gate")
	assert.Contains(t, front["allowed-tools"], "Bash(geas-plugin gate:*)")
	assert.Contains(t, string(parts[2]), "`geas-plugin gate --task TASK`")
	assert.Contains(t, string(parts[2]), "$ARGUMENTS")
	checkGeasCommand(t, "gate")
}

// TestPluginLauncherSaysHowToInstall: the launcher is a POSIX sh script that runs geas and, when
// there is none, gives the install command.
func TestPluginLauncherSaysHowToInstall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "bin", "geas-plugin"))
	require.NoError(t, err)
	s := string(b)
	assert.True(t, strings.HasPrefix(s, "#!/bin/sh\n"))
	assert.Contains(t, s, "go install github.com/geas-dev/geas/cmd/geas@latest")
	assert.Contains(t, s, `exec "$geas" "$@"`)
}
