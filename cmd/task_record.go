package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type taskRecordAddOptions struct {
	mission, task, section, file, data string
}

func newTaskRecordAddCmd(g *globalOptions) *cobra.Command {
	var o taskRecordAddOptions
	c := &cobra.Command{
		Use:   "add --task T --section S (--file F | --data JSON)",
		Short: "Write one section of record.json, validated (gate_result and gate_history are refused)",
		Long: `Write one section of the task's record.json. The whole record is validated against the
record schema before anything is written, and the write is atomic under the task's lock.
The sections gate_result and gate_history are written only by geas gate and are refused.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskRecordAdd(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.section, "section", "", "section name, e.g. self_check, implementation_contract, integration")
	c.Flags().StringVar(&o.file, "file", "", "JSON file holding the section (- for standard input)")
	c.Flags().StringVar(&o.data, "data", "", "the section as a JSON string")
	return c
}

func runTaskRecordAdd(c *cobra.Command, g *globalOptions, o taskRecordAddOptions) error {
	if o.section == "" {
		return usagef("--section is required")
	}
	payload, err := g.readPayload(o.file, o.data)
	if err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.SetSection(c.Context(), t.ref(), gate.Section{Name: o.section, Payload: payload})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	out := map[string]string{"mission_id": t.mission, "task_id": t.task, "section": o.section, "record": ".geas/" + done.Record}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "wrote section %s of .geas/%s\n", o.section, done.Record)
	})
}
