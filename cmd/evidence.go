package cmd

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

func newEvidenceCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("evidence", "Write evidence files for a task")
	c.AddCommand(newEvidenceAddCmd(g), newEvidenceTemplateCmd(g))
	return c
}

type evidenceAddOptions struct {
	mission, task, agent, role, name, file, data string
	strict                                       bool
}

func newEvidenceAddCmd(g *globalOptions) *cobra.Command {
	var o evidenceAddOptions
	c := &cobra.Command{
		Use:   "add --task T --agent A --role R (--file F | --data JSON)",
		Short: "Write an agent's evidence file, validated",
		Long: `Write tasks/{task}/evidence/{name}.json (name defaults to the agent). agent, task_id and
role come from the flags; a payload that names different values is refused. version "1.0"
and created_at are filled in when absent. The file is validated against the evidence schema
before it is written atomically under the task's lock; an existing file of that name is replaced.

Entries that count for nothing the contract names are warned about, with a "did you mean": a
criteria_results entry that binds to no criterion (an id or index the contract does not have, a
text that is no criterion's) or binds to two, one that binds to a criterion an earlier entry
already binds to, and a rubric_scores entry whose dimension is not one of the contract's. The
gate never counts them; with --strict the file is refused (exit 64) instead of written.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runEvidenceAdd(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.agent, "agent", "", "agent that wrote the evidence, e.g. qa-engineer")
	c.Flags().StringVar(&o.role, "role", "", "implementer, reviewer, tester or authority")
	c.Flags().StringVar(&o.name, "name", "", "file name without .json (default: the agent)")
	c.Flags().StringVar(&o.file, "file", "", "JSON file holding the evidence (- for standard input)")
	c.Flags().StringVar(&o.data, "data", "", "the evidence as a JSON string")
	c.Flags().BoolVar(&o.strict, "strict", false, "refuse entries that match no criterion or dimension of the contract instead of warning")
	return c
}

var roles = []vocab.Role{vocab.Implementer, vocab.Reviewer, vocab.Tester, vocab.Authority}

func runEvidenceAdd(c *cobra.Command, g *globalOptions, o evidenceAddOptions) error {
	if o.agent == "" || o.role == "" {
		return usagef("--agent and --role are required")
	}
	if err := project.ValidateID("agent", o.agent); err != nil {
		return &usageError{err: err}
	}
	if !slices.Contains(roles, vocab.Role(o.role)) {
		return usagef("--role must be one of %v, not %q", roles, o.role)
	}
	if o.name == "" {
		o.name = o.agent
	}
	if err := project.ValidateID("evidence name", o.name); err != nil {
		return &usageError{err: err}
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
	done, err := gate.AddEvidence(c.Context(), t.ref(), gate.EvidenceOptions{Agent: o.agent, Role: o.role, Name: o.name, Payload: payload, Strict: o.strict})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	for _, w := range done.Warnings {
		fmt.Fprintf(g.stderr, "geas: warning: %s\n", w)
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "agent": o.agent, "role": o.role, "file": ".geas/" + done.File,
		"warnings": append([]string{}, done.Warnings...)}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "wrote .geas/%s\n", done.File)
	})
}
