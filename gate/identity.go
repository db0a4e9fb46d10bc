package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/shellcmd"
)

// The identity guard binds who writes evidence, approvals, grants and history resets to who is
// running, where the harness says who is running. Claude Code's hooks reference ("Common input
// fields", code.claude.com/docs/en/hooks) gives every hook input, PreToolUse, Stop and
// SubagentStop included, two optional fields: agent_id, "present only when the hook fires from
// within a subagent", and agent_type, the agent's name ("general-purpose", "code-reviewer"),
// present in a subagent alongside agent_id and on the main thread of a session started with
// --agent; a plugin's agent is named "plugin:agent" ("geas:software-engineer"). The main
// session of a plain `claude` has neither: its calls are not checked (docs/reliability.md says
// what that leaves open and what closes it).

// CallerAgent is the geas agent name of a hook input's agent_type: the part after the last ":"
// (a plugin's agents come as "plugin:agent"), folded as identities are compared (foldName). It
// is "" for an agent_type that names nobody.
func CallerAgent(agentType string) string {
	if i := strings.LastIndexByte(agentType, ':'); i >= 0 {
		agentType = agentType[i+1:]
	}
	return foldName(agentType)
}

// IdentityCall is a tool call as the PreToolUse identity guard reads it.
type IdentityCall struct {
	// AgentType is the hook input's agent_type: who is calling ("" for the main session).
	AgentType string
	// Tool is tool_name and Input tool_input, as decoded (strings, numbers as json.Number,
	// objects, arrays).
	Tool  string
	Input map[string]any
	// Cwd is the directory relative paths are resolved against (the hook input's cwd).
	Cwd string
	// GeasDirs are the .geas directories whose evidence is guarded, symbolic links resolved.
	GeasDirs []string
}

// CheckIdentity returns why the call writes evidence, an approval, a grant or a history reset
// under another agent's name than its caller's, or "" when it does not, or when the input names
// no caller. Evidence is written as the caller or not at all: by geas evidence add with --agent
// the caller (and --name the caller's or no agent's), or by a file tool whose file and "agent"
// are the caller's; approvals, grants, resets and re-pins only --by the caller. A Bash command,
// or an MCP tool's command, that the guard cannot read with certainty (a computed program,
// flag or path; eval or sh -c of a computed string) is refused when it mentions any of these;
// a shell write into an evidence directory is refused whatever it writes, since its content
// cannot be read.
func CheckIdentity(c IdentityCall) string {
	caller := CallerAgent(c.AgentType)
	if caller == "" {
		return ""
	}
	k := &identityCheck{caller: caller, callerType: c.AgentType, geasDirs: c.GeasDirs, cwds: []string{c.Cwd}}
	switch {
	case c.Tool == "Bash":
		cmd, _ := c.Input["command"].(string)
		return k.shell(cmd, 0)
	case IsFileTool(c.Tool):
		return k.fileTool(c.Tool, c.Input)
	case strings.HasPrefix(c.Tool, "mcp__"):
		return k.mcp(c.Tool, c.Input)
	}
	return ""
}

// IsFileTool reports whether tool is one of Claude Code's file tools, which write the file their
// input names (hooks reference, "PreToolUse input": Write "creates or overwrites a file", Edit
// "replaces a string in an existing file", both by an absolute file_path; NotebookEdit by
// notebook_path; MultiEdit as older Claude Code versions name it).
func IsFileTool(tool string) bool {
	switch tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return true
	}
	return false
}

// ReadsIdentity reports whether CheckIdentity reads a call of tool by an input whose agent_type
// is agentType: one that names a caller, of a Bash command, a file tool or an MCP tool.
func ReadsIdentity(agentType, tool string) bool {
	return agentType != "" && (tool == "Bash" || IsFileTool(tool) || strings.HasPrefix(tool, "mcp__"))
}

type identityCheck struct {
	caller     string // CallerAgent
	callerType string // agent_type as given
	geasDirs   []string
	// cwds are the directories a relative path of a shell command may be relative to: the
	// call's, and every one a cd of the line went to. unknownCwd: a cd to a computed place.
	cwds       []string
	unknownCwd bool
}

// deny is the reason of a refusal, ending with what the caller may do.
func (k *identityCheck) deny(format string, args ...any) string {
	return fmt.Sprintf("geas: you run as %q (the hook input's agent_type), and ", k.callerType) + fmt.Sprintf(format, args...) +
		fmt.Sprintf(". Evidence, approvals, grants and history resets are written only under the name of the agent that runs: "+
			"write your own with geas evidence add --agent %s, with every flag spelled out (no variables, eval or scripts); "+
			"an authority approves as itself in its own session.", k.caller)
}

// sameAgent reports whether an agent name given in a call names the caller: equal once folded
// (letter case, underscores and unicode dashes, fullwidth letters, invisible characters).
func (k *identityCheck) sameAgent(name string) bool {
	return foldName(name) == k.caller
}

// ownName reports whether an evidence file name (without .json) may be written by the caller:
// the caller's name, the caller's name and a "-suffix" (geas names files by step:
// design-authority-review), or a name no agent type reads as its own.
func (k *identityCheck) ownName(name string) bool {
	n := foldName(name)
	return n == k.caller || strings.HasPrefix(n, k.caller+"-") || evidence.AgentType(n, evidence.GeasAgentTypes) == ""
}

// EvidencePath reports whether path (absolute) is in, or is, a task's evidence directory under
// geasDir: the task and the file's name (without ".json", "" for the directory itself or a
// path below a subdirectory). Names are compared with their letter case folded, after
// resolving symbolic links, and as Windows opens them, as OwnedFile does.
func EvidencePath(geasDir, path string) (task, name string, ok bool) {
	parts, ok := taskPathParts(geasDir, path)
	if !ok || parts[4] != "evidence" {
		return "", "", false
	}
	if len(parts) == 6 {
		name = strings.TrimSuffix(parts[5], ".json")
	}
	return parts[3], name, true
}

// evidencePath is EvidencePath over every guarded .geas; p is made absolute against dir.
func (k *identityCheck) evidencePath(p, dir string) (task, name string, ok bool) {
	if p == "" || strings.ContainsAny(p, "\x00\n") || !filepath.IsAbs(p) && dir == "" {
		return "", "", false
	}
	p = absPath(p, dir)
	for _, g := range k.geasDirs {
		if task, name, ok = EvidencePath(g, p); ok {
			return task, name, true
		}
	}
	return "", "", false
}

// fileTool checks a Write, Edit, MultiEdit or NotebookEdit: a file in an evidence directory
// must be named as the caller's (ownName) and, once written, name the caller as its agent.
func (k *identityCheck) fileTool(tool string, in map[string]any) string {
	for _, key := range []string{"file_path", "notebook_path"} {
		p, _ := in[key].(string)
		if why := k.scriptWrite(tool, p, in); why != "" {
			return why
		}
		task, name, ok := k.evidencePath(p, k.cwds[0])
		if !ok {
			continue
		}
		if name == "" {
			return k.deny("%s writes %s, in task %s's evidence directory but not one of its files, which the guard cannot check", tool, p, task)
		}
		if !k.ownName(name) {
			return k.deny("%s writes %s, which is %s's evidence file of task %s by its name", tool, p, evidence.AgentType(foldName(name), evidence.GeasAgentTypes), task)
		}
		var content string
		switch tool {
		case "Write":
			content, _ = in["content"].(string)
		case "Edit", "MultiEdit":
			var why string
			if content, why = editedContent(ResolveExisting(absPath(p, k.cwds[0])), in); why != "" {
				return k.deny("%s changes %s, task %s's evidence, and %s, so the agent it names could not be checked", tool, p, task, why)
			}
		default:
			return k.deny("%s writes %s, task %s's evidence, which is JSON, not a notebook", tool, p, task)
		}
		agents, err := contentAgents(content)
		if err != nil {
			return k.deny("%s writes %s, task %s's evidence, with content that is not one JSON object the guard can read (%v), so the agent it names could not be checked", tool, p, task, err)
		}
		for _, a := range agents {
			if !k.sameAgent(a) {
				return k.deny("%s writes %s, task %s's evidence, with \"agent\": %q: evidence under another agent's name", tool, p, task, a)
			}
		}
	}
	return ""
}

// docExtensions are the files whose text is read, not run: a geas command written in them is an
// example, not a script.
var docExtensions = []string{".md", ".markdown", ".rst", ".txt", ".adoc", ".html", ".htm"}

// scriptWrite checks what a file tool writes to a file that may be run later (a script, a git
// hook, a Makefile, a Python program): a geas command in it that writes under another agent's
// name is refused (embedded).
func (k *identityCheck) scriptWrite(tool, p string, in map[string]any) string {
	if p == "" || slices.Contains(docExtensions, strings.ToLower(filepath.Ext(p))) {
		return ""
	}
	texts := []any{in["content"], in["new_string"], in["new_source"]}
	if edits, ok := in["edits"].([]any); ok {
		for _, e := range edits {
			if m, ok := e.(map[string]any); ok {
				texts = append(texts, m["new_string"])
			}
		}
	}
	for _, t := range texts {
		if s, ok := t.(string); ok {
			if why := k.embedded(s); why != "" {
				return strings.Replace(why, "the command holds", tool+" of "+p+" holds", 1)
			}
		}
	}
	return ""
}

// absPath makes p absolute against dir.
func absPath(p, dir string) string {
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// maxEditedBytes bounds the evidence file an Edit's result is computed from.
const maxEditedBytes = 4 << 20

// editedContent is the file at path as an Edit or MultiEdit would leave it (old_string replaced
// by new_string, once or with replace_all every time; a MultiEdit's edits in order), or why it
// could not be computed.
func editedContent(path string, in map[string]any) (string, string) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Sprintf("the file could not be read (%v)", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEditedBytes+1))
	if err != nil || len(b) > maxEditedBytes {
		return "", fmt.Sprintf("the file could not be read whole (over %d bytes, or %v)", maxEditedBytes, err)
	}
	s := string(b)
	edits := []any{in}
	if e, ok := in["edits"].([]any); ok {
		edits = e
	}
	for _, e := range edits {
		m, _ := e.(map[string]any)
		old, ok1 := m["old_string"].(string)
		repl, ok2 := m["new_string"].(string)
		if !ok1 || !ok2 || old == "" {
			return "", "an edit has no old_string and new_string"
		}
		if all, _ := m["replace_all"].(bool); all {
			s = strings.ReplaceAll(s, old, repl)
		} else {
			s = strings.Replace(s, old, repl, 1)
		}
	}
	return s, ""
}

// contentAgents are the values of every top-level "agent" member of a JSON object (duplicates
// and keys in another letter case included); an error when content is not one JSON object.
func contentAgents(content string) ([]string, error) {
	members, err := objectMembers(json.RawMessage(content))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range members {
		if foldName(m.key) != "agent" {
			continue
		}
		var s string
		if json.Unmarshal(m.value, &s) != nil {
			s = string(m.value)
		}
		out = append(out, s)
	}
	return out, nil
}

// mcpCommandKeys are the tool_input keys whose string an MCP tool may run as a command line.
var mcpCommandKeys = []string{"command", "cmd", "script", "shell", "bash", "command-line", "commandline"}

// mcpArgKeys are the tool_input keys whose array of strings an MCP tool may run as a program's
// arguments (after a command or program key).
var mcpArgKeys = []string{"args", "argv", "arguments"}

// mcpWriteVerbs are parts of an MCP tool's name that say it may write a file it is given.
var mcpWriteVerbs = []string{"write", "edit", "create", "move", "rename", "copy", "delete", "remove", "append", "patch", "put", "save", "upload", "insert", "replace", "mkdir", "touch", "apply"}

// mcp checks an MCP tool call (mcp__server__tool). geas's own MCP server only reads (gate
// evaluate, verify, task status), so what is checked is another server's: a command it runs
// (a command-line string, or a program and its arguments), and a path into an evidence
// directory given to a tool whose name says it writes.
func (k *identityCheck) mcp(tool string, in map[string]any) string {
	name := strings.ToLower(tool)
	writes := slices.ContainsFunc(mcpWriteVerbs, func(v string) bool { return strings.Contains(name, v) })
	var why string
	var walk func(v any, key string, depth int)
	walk = func(v any, key string, depth int) {
		if why != "" || depth > 8 {
			return
		}
		switch v := v.(type) {
		case string:
			if slices.Contains(mcpCommandKeys, foldName(key)) {
				if why = k.shell(v, 0); why != "" {
					return
				}
			}
			if why = k.embedded(v); why != "" {
				return
			}
			if task, _, ok := k.evidencePath(v, k.cwds[0]); ok && writes {
				why = k.deny("MCP tool %s is given %s, in task %s's evidence directory, and its name says it writes: evidence is written with geas evidence add", tool, v, task)
			}
		case map[string]any:
			if why = k.mcpArgv(tool, v); why != "" {
				return
			}
			keys := make([]string, 0, len(v))
			for key := range v {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			for _, key := range keys {
				walk(v[key], key, depth+1)
			}
		case []any:
			if slices.Contains(mcpCommandKeys, foldName(key)) {
				// {"command": ["geas", "evidence", "add", ...]}: a program and its arguments.
				if why = k.mcpArgv(tool, map[string]any{"args": v}); why != "" {
					return
				}
			}
			for _, e := range v {
				walk(e, key, depth+1)
			}
		}
	}
	walk(in, "", 0)
	return why
}

// mcpArgv checks an object that names a program and its arguments ({"command": "geas", "args":
// ["evidence", "add", ...]}) as one shell command of literal words.
func (k *identityCheck) mcpArgv(tool string, m map[string]any) string {
	for key, v := range m {
		if !slices.Contains(mcpArgKeys, foldName(key)) {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			continue
		}
		var words []shellcmd.Word
		for _, pk := range []string{"command", "cmd", "program", "executable", "file"} {
			if s, ok := m[pk].(string); ok {
				words = append(words, shellcmd.LiteralWord(s))
				break
			}
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				s = fmt.Sprint(a)
			}
			words = append(words, shellcmd.LiteralWord(s))
		}
		if why := k.command(shellcmd.Command{Words: words}, 0); why != "" {
			return why
		}
	}
	return ""
}
