package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

func newHookClaudePreToolUseCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "claude-pre-tool-use",
		Short: "Claude Code PreToolUse guard: agents may not write the gate's files, or write as another agent",
		Long: `A Claude Code PreToolUse hook. It denies two kinds of tool call.

The gate's own files: a Write, Edit, MultiEdit or NotebookEdit of a file only geas writes in a task
directory (.geas/missions/M/tasks/T/...): its gate-history.jsonl, anything under its gate-logs/,
contract.pinned.json, record.lock, and the record.json.reset-* and gate-history.jsonl.reset-*
files that geas task history reset keeps aside. Paths are compared with letter case folded, after
resolving symbolic links, and as Windows opens them (a trailing dot or space, an NTFS stream after
a colon), so GATE-HISTORY.JSONL, gate-history.jsonl. or a link into .geas is refused too.

Another agent's name: when the hook input names the agent that calls (agent_type: a subagent, or
the main thread of claude --agent; "plugin:agent" reads as agent), a Bash command, an MCP tool's
command or a file tool that writes evidence, an approval (task approve, task revalidate --base), a
budget grant or a history reset under another agent's name is denied: --agent and --by must be the
caller (compared with letter case, underscores and dashes folded), --name the caller's or no
agent's, and an evidence file written by a file tool must be named as the caller's and name it as
its "agent". The command line is read through quotes, escapes, operators, subshells,
substitutions, sh -c, eval and here-documents; what it cannot read with certainty (a computed
program, flag or value, xargs) is denied when it mentions geas, evidence or an agent, and a shell
write into an evidence directory is denied whatever it writes (use geas evidence add). Text that
may be run later (a script a file tool writes, a string a command passes on such as python3 -c)
is denied when it holds such a geas command naming another geas agent type. Input
without agent_type (the main session) is not checked: a shell can always hide a name (a script
written earlier), and GEAS_GATE_KEY and separate OS users are the defences (docs/reliability.md).

A hook input over 1 MiB, which cannot be checked, is denied. A denial is
{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": ...}}, which Claude Code shows to the agent; any other call gets no
output, and the normal permission flow applies.

This is a courtesy, not the defence: the gate itself refuses a history or a pin it did not write
(the hash chain, the rules digest in every entry, and the signature when GEAS_GATE_KEY is set).

In .claude/settings.json:
  {"hooks": {"PreToolUse": [{"matcher": "^(Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*)$", "hooks": [{"type": "command",
    "command": "geas hook claude-pre-tool-use"}]}]}}`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return runHookClaudePreToolUse(g) },
	}
}

// preToolUseOutput is the guard's answer (hooks reference, "PreToolUse decision control").
type preToolUseOutput struct {
	HookSpecificOutput preToolUseDecision `json:"hookSpecificOutput"`
}

type preToolUseDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// preToolUseDeny is the guard's denial of a call, with the reason Claude Code shows the agent.
func preToolUseDeny(reason string) *preToolUseOutput {
	return &preToolUseOutput{preToolUseDecision{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

func runHookClaudePreToolUse(g *globalOptions) error {
	in, err := readHookInput(g.stdin)
	if err != nil {
		return err
	}
	if in.Oversize {
		// The path is unknown, so it may be one only the gate writes: deny, saying why.
		return writeJSON(g.stdout, preToolUseDeny("geas: the "+oversizeText()+", so what this call writes could not be checked "+
			"against the files only geas gate writes, or the agent it writes as. Write the file in smaller pieces (Write, then Edit)."))
	}
	identity := gate.ReadsIdentity(in.AgentType, in.ToolName)
	if !identity && (!gate.IsFileTool(in.ToolName) || len(in.ToolPaths) == 0) {
		return nil
	}
	// The project the hooks gate (pinHookProject); when it is refused there, a copy may have been
	// planted, so the gate's files of every .geas from there up are guarded.
	_ = g.pinHookProject(in)
	var geasDirs []string
	if p, err := g.openProject(); err == nil {
		geasDirs = append(geasDirs, gate.ResolveExisting(filepath.Join(p.Dir, ".geas")))
		p.Close()
	}
	start, _ := filepath.Abs(g.dir)
	for d := start; d != ""; d = filepath.Dir(d) {
		if isDirPath(filepath.Join(d, ".geas")) {
			geasDirs = append(geasDirs, gate.ResolveExisting(filepath.Join(d, ".geas")))
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, path := range in.ToolPaths {
		if !gate.IsFileTool(in.ToolName) {
			break
		}
		what := ""
		for _, geasDir := range geasDirs {
			if what = gate.OwnedFile(geasDir, absHookPath(path, in.Cwd)); what != "" {
				break
			}
		}
		if what != "" {
			return writeJSON(g.stdout, preToolUseDeny(fmt.Sprintf("geas: %s is %s, which only geas writes; an agent's write there is "+
				"refused (and the gate would refuse the result). Record evidence with geas evidence add, record sections "+
				"with geas task record add, and run geas gate for a verdict.", path, what)))
		}
	}
	if !identity {
		return nil
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = start
	}
	why := gate.CheckIdentity(gate.IdentityCall{AgentType: in.AgentType, Tool: in.ToolName, Input: in.ToolInput, Cwd: cwd, GeasDirs: geasDirs})
	if why == "" {
		return nil
	}
	return writeJSON(g.stdout, preToolUseDeny(why))
}

// absHookPath makes a tool's path absolute: as given when it is, else against the hook input's
// cwd (Claude's working directory), else the hook's own.
func absHookPath(path, cwd string) string {
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
