package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/schemas"
)

// maxHookInputBytes bounds the hook input read from stdin; Claude Code sends a few hundred bytes.
const maxHookInputBytes = 1 << 20

// hookInput is what the hooks read of Claude Code's hook input (stdin, one JSON object). Claude
// Code's hooks reference lists the fields per event: every event has session_id, transcript_path,
// cwd and hook_event_name; Stop and SubagentStop add stop_hook_active ("true when Claude Code is
// already continuing as a result of a stop hook"), SubagentStop adds agent_id and agent_type;
// TaskCompleted adds task_id, task_subject and optionally task_description, teammate_name.
// Other fields are ignored. Keys are read exactly as written: "Stop_Hook_Active" is not
// stop_hook_active (encoding/json would match it case-insensitively).
type hookInput struct {
	Event          string // hook_event_name
	StopHookActive bool
	// TaskID is the task_id of a TaskCompleted input as given: a string, or a number's digits. It is
	// not checked here; TaskIDProblem says why a task_id of another JSON type was not read.
	TaskID        string
	TaskIDProblem string
	// AgentType and AgentID name the agent the hook fires in (every event's optional agent_type
	// and agent_id: gate.CallerAgent says which inputs carry them).
	AgentType string
	AgentID   string
	// Cwd, ToolName and ToolPaths are what the PreToolUse guard reads: the cwd field, tool_name,
	// and the paths a file tool writes (tool_input's file_path and notebook_path).
	// ToolInput is tool_input as decoded, which the identity guard reads (gate.CheckIdentity).
	Cwd       string
	ToolName  string
	ToolPaths []string
	ToolInput map[string]any
	// Oversize says the input was longer than maxHookInputBytes and was not read: every field is
	// unknown. The agent controls the input's size (a task's description, a Write's content), so
	// each hook fails closed on it rather than exiting with a usage error, which Claude Code takes
	// as a non-blocking hook error and goes on.
	Oversize bool
}

// oversizeText says why an oversize hook input was not read.
func oversizeText() string {
	return fmt.Sprintf("hook input exceeds %d bytes and was not read", maxHookInputBytes)
}

// readHookInput decodes the hook input. Empty input (or a terminal) reads as a first stop with no
// fields. Input that is not one JSON object, or that repeats a key, is a usage error: Claude Code
// writes stdin, so no agent can cause it by writing files. Input over maxHookInputBytes, which an
// agent can cause, is not an error: it reads as Oversize, with no fields.
func readHookInput(r io.Reader) (hookInput, error) {
	var in hookInput
	b, oversize, err := readHookBytes(r)
	if err != nil {
		return in, err
	}
	if oversize {
		in.Oversize = true
		return in, nil
	}
	obj, err := decodeHookObject(b, "Claude Code")
	if err != nil {
		return in, err
	}
	in.Event, _ = obj["hook_event_name"].(string)
	in.AgentType, _ = obj["agent_type"].(string)
	in.AgentID, _ = obj["agent_id"].(string)
	in.StopHookActive = lenientBool(obj["stop_hook_active"])
	in.Cwd, _ = obj["cwd"].(string)
	in.ToolName, _ = obj["tool_name"].(string)
	if ti, ok := obj["tool_input"].(map[string]any); ok {
		in.ToolInput = ti
		for _, k := range []string{"file_path", "notebook_path"} {
			if p, ok := ti[k].(string); ok && p != "" {
				in.ToolPaths = append(in.ToolPaths, p)
			}
		}
	}
	switch v := obj["task_id"].(type) {
	case nil:
	case string:
		in.TaskID = v
	case json.Number:
		in.TaskID = v.String()
	default:
		in.TaskIDProblem = fmt.Sprintf("the hook input's task_id is a JSON %s, not a task id", jsonKind(v))
	}
	return in, nil
}

// readHookBytes reads a hook input of at most maxHookInputBytes: a terminal reads as empty input,
// and longer input is not read (oversize), which the agent can cause and so is not an error.
func readHookBytes(r io.Reader) ([]byte, bool, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, false, nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, maxHookInputBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxHookInputBytes {
		return nil, true, nil
	}
	return b, false, nil
}

// decodeHookObject decodes a hook input read by readHookBytes: empty input is no fields, and input
// that is not one JSON object (or repeats a key) is a usage error, since the harness (named in the
// message) writes stdin and no agent can cause it by writing files.
func decodeHookObject(b []byte, harness string) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	doc, err := schemas.Decode("hook input", b)
	if err != nil {
		return nil, usagef("hook input is not a %s hook's JSON object: %v", harness, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, usagef("hook input is not a %s hook's JSON object: it is a JSON %s", harness, jsonKind(doc))
	}
	return obj, nil
}

// lenientBool reads stop_hook_active the way Claude Code may send it: a boolean, the strings
// "true"/"false" (any case, surrounding space ignored), "1"/"0", "yes"/"no", "on"/"off", a
// number (0 is false), or null or missing (false). A value it cannot read counts as true: the
// flag only ever relaxes the hook (a block or an unrunnable gate holds the first stop only), so
// reading it as true can never make the hook loop, and a fail or an error still holds every stop.
func lenientBool(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "false", "0", "no", "off", "":
			return false
		}
		return true
	}
	return true
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// hookStopAgent is the agent a Stop or SubagentStop input names as stopping (agent_type and
// agent_id; none for the main session), which the hook records (gate.StopAgent).
func hookStopAgent(in hookInput) gate.StopAgent {
	return gate.StopAgent{Event: in.Event, Type: in.AgentType, ID: in.AgentID}
}
