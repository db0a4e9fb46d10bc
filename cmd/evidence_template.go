package cmd

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

type evidenceTemplateOptions struct {
	mission, task, agent, role string
}

func newEvidenceTemplateCmd(g *globalOptions) *cobra.Command {
	var o evidenceTemplateOptions
	c := &cobra.Command{
		Use:   "template --task T --agent A [--role R]",
		Short: "Print an evidence skeleton for an agent, ready to fill",
		Long: `Print an evidence file for the agent to fill and write with geas evidence add: agent, task_id
and role set; for a tester, a criteria_results entry for every acceptance criterion judged by
evidence (those without a check), under the id the gate binds it by (AC<n> for a criterion
without an id; any other independent agent may add entries of the same form); a
rubric_scores entry for every dimension whose scores by this agent the gate counts (the
dimension's evaluators in the contract, else in .geas/gate-policy.json or the default table; a
dimension naming none takes any independent evaluator; the implementer's own scores never
count); and the fields the role requires. The role defaults to implementer for the contract's
primary worker, tester for a qa-engineer, reviewer for any other agent.

The skeleton is valid evidence as printed, and its placeholders count against the work until
they are filled: every criterion "passed": false, every score 1, a verdict that refuses (fail,
changes_requested). The same JSON is printed whatever --format says; in text format a line on
standard error says what it holds.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runEvidenceTemplate(g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.agent, "agent", "", "agent that will write the evidence, e.g. qa-engineer")
	c.Flags().StringVar(&o.role, "role", "", "implementer, reviewer, tester or authority (default: from the contract)")
	return c
}

func runEvidenceTemplate(g *globalOptions, o evidenceTemplateOptions) error {
	if o.agent == "" {
		return usagef("--agent is required")
	}
	if err := project.ValidateID("agent", o.agent); err != nil {
		return &usageError{err: err}
	}
	if o.role != "" && !slices.Contains(roles, vocab.Role(o.role)) {
		return usagef("--role must be one of %v, not %q", roles, o.role)
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	sk, err := gate.EvidenceTemplate(t.ref(), gate.TemplateOptions{Agent: o.agent, Role: vocab.Role(o.role)})
	if err != nil {
		return err
	}
	if g.format != formatJSON {
		fmt.Fprintf(g.stderr, "geas: evidence template of %s as %s for task %s: criteria %s; dimensions %s; fill in every placeholder, then geas evidence add --task %s --agent %s --role %s --file FILE\n",
			o.agent, sk.Role, t.task, orNone(sk.Criteria), orNone(sk.Dimensions), t.task, o.agent, sk.Role)
	}
	_, err = g.stdout.Write(sk.File)
	return err
}
