package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

func newDecisionCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("decision", "Write decision records")
	c.AddCommand(newDecisionWriteCmd(g))
	return c
}

type decisionWriteOptions struct {
	mission, file, data string
}

func newDecisionWriteCmd(g *globalOptions) *cobra.Command {
	var o decisionWriteOptions
	c := &cobra.Command{
		Use:   "write [--mission M] (--data JSON | --file F)",
		Short: "Write a decision record, validated (unlike geas v1)",
		Long: `Write a decision record to .geas/missions/{mission}/decisions/{id}.json, or to
decisions/pending/{id}.json when its status is pending. version, artifact_type and
created_at are filled in when absent, and artifact_id is generated when absent. The record
is validated against the decision schema; an existing decision of the same id is never
overwritten.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runDecisionWrite(g, o) },
	}
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.file, "file", "", "JSON file holding the decision record (- for standard input)")
	c.Flags().StringVar(&o.data, "data", "", "the decision record as a JSON string")
	return c
}

func runDecisionWrite(g *globalOptions, o decisionWriteOptions) error {
	if o.mission != "" {
		if err := project.ValidateID("mission", o.mission); err != nil {
			return err
		}
	}
	payload, err := g.readPayload(o.file, o.data)
	if err != nil {
		return err
	}
	obj, err := gate.PayloadObject("decision", payload)
	if err != nil {
		return err
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	done, err := gate.WriteDecision(p, mission, obj)
	if err != nil {
		return err
	}
	out := map[string]string{"mission_id": mission, "artifact_id": done.ID, "file": ".geas/" + done.File}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "wrote .geas/%s\n", done.File)
	})
}
