package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/geas-dev/geas/gate"
)

// harnessStopInput is what the stop hooks of Codex CLI, GitHub Copilot and Cursor read of their
// hook input (stdin, one JSON object). Keys are read exactly as each harness writes them
// (encoding/json would match "Stop_Hook_Active" to stop_hook_active); every other field is
// ignored. Which fields each harness sends, and where that is documented, is said at each
// harness's reader (readCodexStop, readCopilotStop, readCursorStop).
type harnessStopInput struct {
	Event    string // the stop event as the input names it, or the harness's main stop event
	Subagent bool   // a subagent's stop (same decisions, the event only named in messages)
	// Active is the harness's "already continuing" signal when ActiveKnown; its name in messages
	// is ActiveName.
	Active      bool
	ActiveKnown bool
	ActiveName  string
	// Stops is the harness's number of this stop among the stops it continued (Cursor:
	// loop_count + 1); 0 when the harness sends none.
	Stops int
	// Aborted: the user stopped the agent (Cursor's status "aborted"): nothing to gate.
	Aborted bool
	Cwd     string // the session's directory: cwd, or Cursor's first workspace root
	Session string // the harness's session id, which the loop cap counts stops in
	// Agent is the agent that stops, where the input names it (Codex's and Copilot's subagent
	// stops: agent_type/agentType and agent_id/agentId), which the hook records (gate.StopAgent).
	Agent gate.StopAgent
	// Oversize: the input was longer than maxHookInputBytes and was not read; every field is
	// unknown, so the stop is a first stop (the agent controls the input's size through what it
	// writes, and a hook that exits with an error lets it go).
	Oversize bool
}

// readHarnessObject reads a hook input as readHookInput does: bounded, empty input (or a terminal)
// is no fields, input that is not one JSON object (or repeats a key) is a usage error (the harness
// writes stdin: no agent can cause it by writing files), and input over maxHookInputBytes is
// oversize, not an error.
func readHarnessObject(r io.Reader, harness string) (map[string]any, bool, error) {
	b, oversize, err := readHookBytes(r)
	if err != nil {
		return nil, false, err
	}
	if oversize {
		return map[string]any{}, true, nil
	}
	// Cursor has been seen to start its hook input with a UTF-8 byte-order mark.
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	obj, err := decodeHookObject(b, harness)
	return obj, false, err
}

// readStopEvent reads hook_event_name: one of the harness's stop events (subagent says which are a
// subagent's), or the main one when the input names none. Another event is a usage error: the hook
// is configured on an event it does not answer.
func readStopEvent(obj map[string]any, harness, main string, events map[string]bool) (string, bool, error) {
	raw, present := obj["hook_event_name"]
	if !present {
		return main, false, nil
	}
	ev, _ := raw.(string)
	sub, ok := events[ev]
	if !ok {
		return "", false, usagef("hook input names event %q, which is not a %s stop event (the hook answers %s): configure it on those events only",
			ev, harness, strings.Join(slices.Sorted(maps.Keys(events)), ", "))
	}
	return ev, sub, nil
}

// readCodexStop reads a Codex CLI Stop or SubagentStop input. Source: the hooks documentation at
// https://developers.openai.com/codex/hooks and the schemas it is generated with,
// openai/codex codex-rs/hooks/schema/generated/stop.command.input.schema.json and
// subagent-stop.command.input.schema.json: session_id, turn_id, cwd, hook_event_name ("Stop" or
// "SubagentStop"), model, permission_mode, transcript_path, last_assistant_message and
// stop_hook_active ("true when ... already continuing because an earlier stop-like hook blocked
// completion"); SubagentStop adds agent_id, agent_type and agent_transcript_path. Read: hook_event_name,
// stop_hook_active (leniently, as for Claude Code), cwd, session_id, agent_type and agent_id (the
// agent that stops, recorded).
func readCodexStop(obj map[string]any) (harnessStopInput, error) {
	in := harnessStopInput{ActiveName: "stop_hook_active"}
	var err error
	if in.Event, in.Subagent, err = readStopEvent(obj, "Codex CLI", "Stop", map[string]bool{"Stop": false, "SubagentStop": true}); err != nil {
		return in, err
	}
	in.Active, in.ActiveKnown = lenientBool(obj["stop_hook_active"]), true
	in.Cwd, _ = obj["cwd"].(string)
	in.Session, _ = obj["session_id"].(string)
	in.Agent = readStopAgent(obj, in.Event)
	return in, nil
}

// readStopAgent reads the agent a stop input names: agent_type (or agentType) and agent_id (or
// agentId), as given; the zero value when it names none (the main agent).
func readStopAgent(obj map[string]any, event string) gate.StopAgent {
	a := gate.StopAgent{Event: event, Type: firstString(obj, "agent_type", "agentType"), ID: firstString(obj, "agent_id", "agentId")}
	if a.Type == "" && a.ID == "" {
		return gate.StopAgent{}
	}
	return a
}

// firstString is the first non-empty string among obj's values of keys (the spellings of one
// field), or "".
func firstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, _ := obj[k].(string); v != "" {
			return v
		}
	}
	return ""
}

// readCopilotStop reads a GitHub Copilot agentStop or subagentStop input. Source: the Copilot hooks
// reference, https://docs.github.com/en/copilot/reference/hooks-reference (github/docs
// content/copilot/reference/hooks-reference.md). Two shapes: the camelCase one of the events
// configured as agentStop/subagentStop (sessionId, timestamp, cwd, transcriptPath, stopReason,
// stop_hook_active; subagentStop has agentId, agentType, agentName, response and no
// stop_hook_active, and neither names its event), and the VS Code compatible one of Stop/
// SubagentStop (hook_event_name, session_id, cwd, stop_hook_active; agent_id, agent_type,
// agent_name for a subagent). Read: hook_event_name, stop_hook_active (known only when present: a
// subagentStop sends none), cwd, sessionId/session_id, and agentName/agentType/agentId to tell a
// subagent's stop (agentType/agent_type and agentId/agent_id are recorded as the agent that stops).
func readCopilotStop(obj map[string]any) (harnessStopInput, error) {
	in := harnessStopInput{ActiveName: "stop_hook_active"}
	var err error
	events := map[string]bool{"Stop": false, "agentStop": false, "SubagentStop": true, "subagentStop": true}
	if in.Event, in.Subagent, err = readStopEvent(obj, "GitHub Copilot", "agentStop", events); err != nil {
		return in, err
	}
	if _, named := obj["hook_event_name"]; !named {
		for _, k := range []string{"agentName", "agentType", "agentId"} {
			if _, ok := obj[k]; ok {
				in.Event, in.Subagent = "subagentStop", true
			}
		}
	}
	if v, ok := obj["stop_hook_active"]; ok {
		in.Active, in.ActiveKnown = lenientBool(v), true
	}
	in.Cwd, _ = obj["cwd"].(string)
	in.Session = firstString(obj, "sessionId", "session_id")
	in.Agent = readStopAgent(obj, in.Event)
	return in, nil
}

// readCursorStop reads a Cursor stop or subagentStop input. Source: Cursor's hooks documentation,
// https://cursor.com/docs/agent/hooks: every hook gets conversation_id, generation_id, model,
// hook_event_name, cursor_version, workspace_roots, user_email and transcript_path; stop adds
// status ("completed", "aborted" or "error") and loop_count (how many times a stop hook's
// followup_message already continued this conversation; Cursor stops continuing at the hook's
// loop_limit, 5 unless configured, null for none). Read: hook_event_name, status, loop_count,
// workspace_roots[0], conversation_id. A loop_count it cannot read counts as continuing (it only relaxes the hook)
// with no count of Cursor's, so the hook's own count caps the loop.
func readCursorStop(obj map[string]any) (harnessStopInput, error) {
	in := harnessStopInput{ActiveName: "loop_count"}
	var err error
	if in.Event, in.Subagent, err = readStopEvent(obj, "Cursor", "stop", map[string]bool{"stop": false, "subagentStop": true}); err != nil {
		return in, err
	}
	status, _ := obj["status"].(string)
	in.Aborted = status == "aborted"
	switch v := obj["loop_count"].(type) {
	case nil:
		// A stop without loop_count (an older Cursor, a subagentStop that sends none): no signal,
		// and the hook's own count stands in.
	case json.Number:
		n, err := strconv.ParseInt(v.String(), 10, 32)
		if err != nil || n < 0 {
			in.Active, in.ActiveKnown = true, true
			break
		}
		in.Active, in.ActiveKnown, in.Stops = n > 0, true, int(n)+1
	default:
		in.Active, in.ActiveKnown = lenientBool(v), true
	}
	if roots, ok := obj["workspace_roots"].([]any); ok && len(roots) > 0 {
		in.Cwd, _ = roots[0].(string)
	}
	in.Session, _ = obj["conversation_id"].(string)
	return in, nil
}
