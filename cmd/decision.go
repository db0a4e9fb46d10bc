package cmd

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
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
	obj, err := payloadObject("decision", payload)
	if err != nil {
		return err
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	now := time.Now()
	defaults := map[string]any{
		"version":       "1.0",
		"artifact_type": "decision_record",
		"created_at":    record.Timestamp(now),
		"artifact_id":   newDecisionID(now),
	}
	for k, v := range defaults {
		if _, ok := obj[k]; !ok {
			obj[k], _ = json.Marshal(v)
		}
	}
	b, err := marshalOrdered(obj, []string{"version", "artifact_type", "artifact_id", "producer_type"})
	if err != nil {
		return err
	}
	name, err := record.WriteDecision(p.Geas, mission, b)
	if err != nil {
		return err
	}
	var id string
	_ = json.Unmarshal(obj["artifact_id"], &id)
	out := map[string]string{"mission_id": mission, "artifact_id": id, "file": ".geas/" + name}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "wrote .geas/%s\n", name)
	})
}

func newDecisionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "dec-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
