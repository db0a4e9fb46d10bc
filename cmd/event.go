package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
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
interleave. --data must be a JSON object.`,
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
