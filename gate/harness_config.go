package gate

import (
	"encoding/json"

	"github.com/geas-dev/geas/internal/jsonobj"
)

// The agent harnesses geas init --harness installs the gate's hooks for.
const (
	HarnessClaude  = "claude"
	HarnessCodex   = "codex"
	HarnessCopilot = "copilot"
	HarnessCursor  = "cursor"
)

// Harnesses lists the harness names InstallHooks knows, in the order it installs them.
func Harnesses() []string {
	return []string{HarnessClaude, HarnessCodex, HarnessCopilot, HarnessCursor}
}

// HookTimeoutSeconds is the timeout every stop hook is registered with (each harness counts it in
// seconds): the Claude Code plugin's own (hooks/hooks.json), and Codex's default when none is set.
// A gate run that runs eval commands needs minutes; Copilot's default (30 s) would cut it short.
const HookTimeoutSeconds = 600

// GuardTimeoutSeconds is the PreToolUse guard's timeout, as the plugin registers it: the guard
// reads no evidence and runs no command.
const GuardTimeoutSeconds = 30

// CursorLoopLimit is the loop_limit of the Cursor stop hook: how many follow-up messages in a row
// Cursor lets the hook send before it lets the agent stop. Cursor's default is 5 and null means
// no limit. geas uses 8, the cap SPEC §9 sets for every harness (Claude Code's own limit of
// consecutive stop blocks, and the count after which the Codex hook lets an unchanged attempt
// stop), so an agent gets the same number of tries under every harness; never null, since a block
// the agent cannot lift would then loop forever.
const CursorLoopLimit = 8

// subagentMatcher is the plugin's SubagentStop matcher (hooks/hooks.json): the builder agents,
// whose finishing is gated; a reviewer subagent that finishes is not.
const subagentMatcher = "(^|:)(software-engineer|platform-engineer|research-engineer|technical-writer|research-writer)$"

// toolGuardMatcher is the plugin's PreToolUse matcher (hooks/hooks.json): the tools that write
// files, whose writes of the gate's own files the guard denies, and Bash and every MCP tool,
// which the identity guard reads (CheckIdentity). Anchored, so TodoWrite and BashOutput stay out.
const toolGuardMatcher = "^(Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*)$"

// harnessSpec is what one harness's hook configuration file is and what geas adds to it.
type harnessSpec struct {
	name string
	// file is the configuration file, slash-separated, relative to the project root.
	file string
	// version is a top-level "version": 1 the file must carry (Cursor and Copilot).
	version bool
	// nested: an event holds matcher groups, each with a "hooks" array of handlers (Claude Code,
	// Codex); otherwise an event holds handlers directly (Cursor, Copilot).
	nested bool
	// commandKeys are the handler fields that hold the command line.
	commandKeys []string
	// otherFiles: the harness reads every *.json in file's directory, so an entry of ours in
	// another file there counts as present (Copilot's .github/hooks/).
	otherFiles bool
	// timeoutKeys are the handler fields of its timeout in seconds, the first present counting;
	// defaultTimeout is the harness's when none is (0: not documented).
	timeoutKeys    []string
	defaultTimeout int
	entries        []hookEntry
	notes          []string
}

// hookEntry is one entry geas adds under event: the group (nested) or the handler (flat) that
// runs `geas hook sub`.
type hookEntry struct {
	event   string
	sub     string
	timeout int // the timeout of entry, in seconds
	entry   json.RawMessage
}

// geasHook is the command line every installed hook runs: geas from PATH.
func geasHook(sub string) string { return "geas hook " + sub }

// harnessSpecs returns the specification of the named harness (one of Harnesses).
func harnessSpecs(name string) harnessSpec {
	switch name {
	case HarnessClaude:
		return claudeSpec()
	case HarnessCodex:
		return codexSpec()
	case HarnessCopilot:
		return copilotSpec()
	default:
		return cursorSpec()
	}
}

// claudeSpec is Claude Code's project settings, .claude/settings.json: "hooks" maps an event to
// matcher groups {"matcher", "hooks": [{"type": "command", "command", "timeout" (seconds),
// "statusMessage"}]} (https://code.claude.com/docs/en/hooks; the schema Claude Code's settings
// name, https://json.schemastore.org/claude-code-settings.json). The entries mirror the plugin's
// hooks/hooks.json (events, matchers, timeouts, messages), with geas from PATH instead of the
// plugin's launcher.
func claudeSpec() harnessSpec {
	return harnessSpec{
		name: HarnessClaude, file: ".claude/settings.json", nested: true, commandKeys: []string{"command"},
		timeoutKeys: []string{"timeout"}, defaultTimeout: 600,
		entries: []hookEntry{
			{"Stop", "claude-stop", HookTimeoutSeconds, commandGroup("", "claude-stop", HookTimeoutSeconds, "geas gate: checking the task before the agent stops")},
			{"SubagentStop", "claude-stop", HookTimeoutSeconds, commandGroup(subagentMatcher, "claude-stop", HookTimeoutSeconds, "geas gate: checking the task before the subagent finishes")},
			{"TaskCompleted", "claude-task-completed", HookTimeoutSeconds, commandGroup("", "claude-task-completed", HookTimeoutSeconds, "geas gate: checking the task before it is marked completed")},
			{"PreToolUse", "claude-pre-tool-use", GuardTimeoutSeconds, commandGroup(toolGuardMatcher, "claude-pre-tool-use", GuardTimeoutSeconds, "")},
		},
		notes: []string{"Claude Code runs `geas` from PATH; do not also enable the geas-gate plugin in this project, or every hook runs twice"},
	}
}

// codexSpec is OpenAI Codex's project hooks, .codex/hooks.json: {"hooks": {event: [{"matcher"?,
// "hooks": [{"type": "command", "command", "timeout" (seconds, 600 when omitted),
// "statusMessage"}]}]}}, with Stop and SubagentStop among the events
// (https://developers.openai.com/codex/hooks; schema https://www.schemastore.org/codex-hooks.json).
// Codex ignores a matcher on Stop; on SubagentStop none matches every subagent.
func codexSpec() harnessSpec {
	group := func(status string) json.RawMessage {
		return commandGroup("", "codex-stop", HookTimeoutSeconds, status)
	}
	return harnessSpec{
		name: HarnessCodex, file: ".codex/hooks.json", nested: true, commandKeys: []string{"command", "commandWindows"},
		timeoutKeys: []string{"timeout"}, defaultTimeout: 600,
		entries: []hookEntry{
			{"Stop", "codex-stop", HookTimeoutSeconds, group("geas gate: checking the task before the agent stops")},
			{"SubagentStop", "codex-stop", HookTimeoutSeconds, group("geas gate: checking the task before the subagent finishes")},
		},
		notes: []string{"Codex loads project hooks only in a trusted project, and runs a new or changed hook only after you review it with /hooks"},
	}
}

// copilotSpec is GitHub Copilot's repository hooks: every .github/hooks/*.json is read, each
// {"version": 1, "hooks": {event: [{"type": "command", "bash", "powershell", "cwd", "env",
// "timeoutSec"}]}} (https://docs.github.com/en/copilot/reference/hooks-reference, "Hook
// configuration format"; timeoutSec defaults to 30). geas writes one file of its own,
// .github/hooks/geas.json, with agentStop and subagentStop; camelCase event names select the
// camelCase input payload.
func copilotSpec() harnessSpec {
	handler := jsonobj.Compact([]jsonobj.Member{
		{Key: "type", Value: jsonobj.String("command")},
		{Key: "bash", Value: jsonobj.String(geasHook("copilot-stop"))},
		{Key: "powershell", Value: jsonobj.String(geasHook("copilot-stop"))},
		{Key: "timeoutSec", Value: intJSON(HookTimeoutSeconds)},
	})
	return harnessSpec{
		name: HarnessCopilot, file: ".github/hooks/geas.json", version: true, otherFiles: true,
		commandKeys: []string{"bash", "powershell", "command"},
		timeoutKeys: []string{"timeoutSec", "timeout"}, defaultTimeout: 30,
		entries: []hookEntry{
			{"agentStop", "copilot-stop", HookTimeoutSeconds, handler},
			{"subagentStop", "copilot-stop", HookTimeoutSeconds, handler},
		},
		notes: []string{"Copilot's cloud agent reads .github/hooks/ from the default branch: commit and push it; Copilot CLI reads it from the working directory"},
	}
}

// cursorSpec is Cursor's project hooks, .cursor/hooks.json: {"version": 1, "hooks": {event:
// [{"command", "type", "timeout" (seconds), "loop_limit" (stop and subagentStop: follow-ups in a
// row, default 5, null for none), "matcher"}]}}; project hooks run from the project root
// (https://cursor.com/docs/agent/hooks, "Configuration").
func cursorSpec() harnessSpec {
	handler := jsonobj.Compact([]jsonobj.Member{
		{Key: "command", Value: jsonobj.String(geasHook("cursor-stop"))},
		{Key: "timeout", Value: intJSON(HookTimeoutSeconds)},
		{Key: "loop_limit", Value: intJSON(CursorLoopLimit)},
	})
	return harnessSpec{
		name: HarnessCursor, file: ".cursor/hooks.json", version: true, commandKeys: []string{"command"},
		timeoutKeys: []string{"timeout"},
		entries:     []hookEntry{{"stop", "cursor-stop", HookTimeoutSeconds, handler}},
		notes:       []string{"Cursor runs project hooks in a trusted workspace; loop_limit 8 caps the follow-ups in a row"},
	}
}

// commandGroup is a matcher group of Claude Code and Codex, which share its shape: the matcher
// (none when ""), and one command handler that runs `geas hook sub` with timeout (seconds) and
// the status message (none when "").
func commandGroup(matcher, sub string, timeout int, status string) json.RawMessage {
	h := []jsonobj.Member{
		{Key: "type", Value: jsonobj.String("command")},
		{Key: "command", Value: jsonobj.String(geasHook(sub))},
		{Key: "timeout", Value: intJSON(timeout)},
	}
	if status != "" {
		h = append(h, jsonobj.Member{Key: "statusMessage", Value: jsonobj.String(status)})
	}
	var g []jsonobj.Member
	if matcher != "" {
		g = append(g, jsonobj.Member{Key: "matcher", Value: jsonobj.String(matcher)})
	}
	g = append(g, jsonobj.Member{Key: "hooks", Value: arrayJSON(jsonobj.Compact(h))})
	return jsonobj.Compact(g)
}

func intJSON(n int) json.RawMessage {
	b, _ := json.Marshal(n)
	return b
}

func arrayJSON(elems ...json.RawMessage) json.RawMessage {
	out := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return append(out, ']')
}
