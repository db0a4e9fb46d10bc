package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type taskBudgetGrantOptions struct {
	mission, task, by, reason string
	retries                   int
}

func newTaskBudgetCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("budget", "Manage a task's retry budget")
	var o taskBudgetGrantOptions
	grant := &cobra.Command{
		Use:   "grant --task T --retries N --by AGENT --reason TEXT",
		Short: "Add retries to a task's budget (authorities only; recorded in the gate history)",
		Long: `Add N retries to the task's retry budget. Only an authority (orchestration-authority,
product-authority or design-authority, or an agent named after one, such as
design-authority-review) may grant, 1..100 retries at a time, and never above a budget of
1000. A history that does not verify is not built on (see geas task history reset). The grant is a hash-chained budget_grant entry in
record.json's gate_history, so the next gate run starts from the raised budget. The task's
state is not changed: move an escalated task back with geas task transition.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskBudgetGrant(c, g, o) },
	}
	grant.Flags().StringVar(&o.task, "task", "", "task id")
	grant.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	grant.Flags().IntVar(&o.retries, "retries", 0, "retries to add, 1..100")
	grant.Flags().StringVar(&o.by, "by", "", "the authority granting them, e.g. product-authority")
	grant.Flags().StringVar(&o.reason, "reason", "", "why")
	c.AddCommand(grant)
	return c
}

func runTaskBudgetGrant(c *cobra.Command, g *globalOptions, o taskBudgetGrantOptions) error {
	switch {
	case o.retries < 1 || o.retries > gate.MaxGrant:
		return usagef("--retries must be 1..%d, not %d", gate.MaxGrant, o.retries)
	case strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required")
	}
	if err := checkAuthority(o.by, "grant retries"); err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	gr, err := gate.GrantRetries(c.Context(), t.ref(), gate.Grant{Retries: o.retries, By: o.by, Reason: o.reason})
	g.printNotes(t.task, gr.Notes)
	if err != nil {
		return err
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "retries": o.retries, "by": o.by,
		"retry_budget_before": gr.Before, "retry_budget_after": gr.After, "hash": gr.Hash}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: retry budget %d -> %d (granted by %s)\n", t.task, gr.Before, gr.After, o.by)
	})
}
