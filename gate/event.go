package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// EventOptions are one event an agent logs (geas event log).
type EventOptions struct {
	Type, Mission, Task, Agent string
	// Data is the event's data: a JSON object, or empty.
	Data json.RawMessage
}

// CheckEvent refuses an event that would speak as the gate (SPEC §2.2, §9): agent geas-gate in
// any spelling, the gate's own event types, and a task_transition to verified.
func CheckEvent(o EventOptions) error {
	if len(o.Data) > 0 {
		if _, err := PayloadObject("--data", o.Data); err != nil {
			return err
		}
	}
	return refuseGateIdentity(o.Agent, o.Type, o.Data)
}

// LogEvent appends the event to .geas/state/events.jsonl, whole and under a lock, after
// CheckEvent.
func LogEvent(p *project.Project, o EventOptions) error {
	if err := CheckEvent(o); err != nil {
		return err
	}
	return record.AppendEvent(p.Geas, record.Event{EventType: o.Type, MissionID: o.Mission, TaskID: o.Task, Agent: o.Agent, Data: o.Data})
}

// gateEventTypes are written only by geas itself (record.GateEventTypes): the gate
// (gate_result, escalation, revocation), geas task budget grant, geas task history reset and
// geas task approve-rules. An agent logging one could forge a pass, or an entry the history
// cross-check would then look for. agent_stop is the stop hooks' record of which agent stopped
// (logAgentStop): an agent logging one would put words in another agent's mouth.
var gateEventTypes = append(record.GateEventTypes(), EventAgentStop)

// refuseGateIdentity refuses an event that would speak as the gate (SPEC §2.2, §9).
func refuseGateIdentity(agent, typ string, data json.RawMessage) error {
	if a := foldName(agent); a == "geas-gate" || strings.HasPrefix(a, "geas-gate-") {
		return fmt.Errorf("agent %q is the gate's own identity: only geas gate logs as geas-gate", agent)
	}
	t := foldName(typ)
	if slices.ContainsFunc(gateEventTypes, func(g string) bool { return foldName(g) == t }) {
		return fmt.Errorf("event type %q is written only by geas itself (%s)", typ, strings.Join(gateEventTypes, ", "))
	}
	if t == foldName(record.EventTaskTransition) && len(data) > 0 {
		members, err := objectMembers(data)
		if err != nil {
			return &InputError{Err: fmt.Errorf("--data: %w", err)}
		}
		for _, m := range members {
			if foldName(m.key) != "to" {
				continue
			}
			var to string
			if json.Unmarshal(m.value, &to) == nil && foldName(to) == string(vocab.Verified) {
				return fmt.Errorf("a task_transition to verified is written only by geas gate, on a pass")
			}
		}
	}
	return nil
}

// foldName is a name as compared for identity: fullwidth letters read as ASCII, format
// characters (zero-width space, joiners) and combining marks dropped, surrounding space trimmed, letters folded to lower case, and underscores and unicode
// dashes read as "-", so "Geas_Gate", " GEAS-GATE" and "geas\u2011gate" are all geas-gate.
func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0 // fullwidth forms read as their ASCII letters
		}
		switch {
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r):
			continue // zero-width and combining marks change nothing a reader sees
		case r == '_' || unicode.Is(unicode.Pd, r):
			r = '-'
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimSpace(b.String())
}

type rawMember struct {
	key   string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in order, duplicates kept, so that a second "to"
// cannot hide behind the first.
func objectMembers(raw json.RawMessage) ([]rawMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []rawMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, rawMember{key, v})
	}
	return out, nil
}
