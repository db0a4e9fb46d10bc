package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

func newEventCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("event", "Append to the mission event log (.geas/state/events.jsonl)")
	c.AddCommand(newEventLogCmd(g))
	return c
}

type eventLogOptions struct {
	typ, mission, task, agent, data string
}

func newEventLogCmd(g *globalOptions) *cobra.Command {
	var o eventLogOptions
	c := &cobra.Command{
		Use:   "log --type TYPE [--task T] [--mission M] [--agent A] [--data JSON]",
		Short: "Append one validated event to .geas/state/events.jsonl",
		Long: `Append one event line to .geas/state/events.jsonl. The event is validated against the
event schema; the line is written whole, under a lock, so lines from many processes never
interleave. --data must be a JSON object.

Only the gate speaks for the gate: agent geas-gate (in any letter case, with any surrounding
space) and the gate's own event types (gate_result, escalation, revocation, budget_grant,
history_reset, and a task_transition to verified) are refused.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runEventLog(g, o) },
	}
	c.Flags().StringVar(&o.typ, "type", "", "event type, e.g. task_started")
	c.Flags().StringVar(&o.task, "task", "", "task id the event is about")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json, when set)")
	c.Flags().StringVar(&o.agent, "agent", "", "agent that logs the event")
	c.Flags().StringVar(&o.data, "data", "", "event data as a JSON object")
	return c
}

func runEventLog(g *globalOptions, o eventLogOptions) error {
	if o.typ == "" {
		return usagef("--type is required")
	}
	var data json.RawMessage
	if o.data != "" {
		if _, err := payloadObject("--data", []byte(o.data)); err != nil {
			return err
		}
		data = json.RawMessage(o.data)
	}
	if err := refuseGateIdentity(o.agent, o.typ, data); err != nil {
		return err
	}
	mission := o.mission
	var p *project.Project
	var err error
	if o.task != "" {
		t, err := g.openTask(o.mission, o.task)
		if err != nil {
			return err
		}
		p, mission = t.p, t.mission
	} else {
		if mission != "" {
			if err := project.ValidateID("mission", mission); err != nil {
				return err
			}
		}
		if p, err = g.openProject(); err != nil {
			return err
		}
		if mission == "" {
			mission, err = p.DefaultMission()
			if errors.Is(err, project.ErrNoMission) {
				err = nil
			}
			if err != nil {
				p.Close()
				return err
			}
		}
	}
	defer p.Close()
	ev := record.Event{EventType: o.typ, MissionID: mission, TaskID: o.task, Agent: o.agent, Data: data}
	if err := record.AppendEvent(p.Geas, ev); err != nil {
		return err
	}
	out := map[string]string{"event_type": o.typ, "mission_id": mission, "task_id": o.task, "log": ".geas/state/events.jsonl"}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "logged %s to .geas/state/events.jsonl\n", o.typ)
	})
}

// gateEventTypes are written only by geas itself: the gate (gate_result, escalation,
// revocation), geas task budget grant and geas task history reset. An agent logging one could
// forge a pass, or an entry the history cross-check would then look for.
var gateEventTypes = []string{"gate_result", "escalation", "revocation", "budget_grant", record.KindHistoryReset}

// refuseGateIdentity refuses an event that would speak as the gate (SPEC §2.2, §9).
func refuseGateIdentity(agent, typ string, data json.RawMessage) error {
	if a := foldName(agent); a == "geas-gate" || strings.HasPrefix(a, "geas-gate-") {
		return fmt.Errorf("agent %q is the gate's own identity: only geas gate logs as geas-gate", agent)
	}
	t := foldName(typ)
	if slices.ContainsFunc(gateEventTypes, func(g string) bool { return foldName(g) == t }) {
		return fmt.Errorf("event type %q is written only by geas itself (%s)", typ, strings.Join(gateEventTypes, ", "))
	}
	if t == foldName("task_transition") && len(data) > 0 {
		members, err := objectMembers(data)
		if err != nil {
			return &usageError{err: fmt.Errorf("--data: %w", err)}
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
