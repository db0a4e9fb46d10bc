package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type taskApproveOptions struct {
	mission, task, by, reason string
}

func newTaskApproveCmd(g *globalOptions) *cobra.Command {
	var o taskApproveOptions
	c := &cobra.Command{
		Use:   "approve --task T --by AUTHORITY --reason TEXT",
		Short: "Pin (or re-pin) a task's rules: its contract and gate policy (authorities only)",
		Long: `Pin the task's rules: every contract field except status and the envelope timestamps,
plus the effective gate policy. Their digest (rules_sha256) is recorded in an approval entry of
the gate history and the rules are copied to contract.pinned.json beside the contract. Every
gate run compares the rules it reads with the pin: rules that differ block the run
(rules_changed, naming each changed field) until an authority approves them again.

Without an approval, the task's first recorded gate run pins what it read. Only an authority
(orchestration-authority, product-authority or design-authority, or an agent named after one)
may approve. With GEAS_GATE_KEY set the approval carries the key's MAC, so an agent without the
key cannot approve; without a key the approval is recorded and attributed, not authenticated.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskApprove(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.by, "by", "", "the authority approving the rules, e.g. product-authority")
	c.Flags().StringVar(&o.reason, "reason", "", "why the rules are (re)pinned")
	return c
}

func runTaskApprove(c *cobra.Command, g *globalOptions, o taskApproveOptions) error {
	switch {
	case o.task == "":
		return usagef("--task is required")
	case strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required")
	}
	if err := checkAuthority(o.by, "approve a task's rules"); err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.Approve(c.Context(), t.ref(), gate.Approval{By: o.by, Reason: o.reason})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "by": o.by, "reason": o.reason,
		"rules_sha256": done.RulesSHA256, "pinned": ".geas/" + done.Pinned, "hash": done.Hash}
	if done.HadPin {
		out["previous_rules_sha256"] = done.Previous
	}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: rules pinned at rules_sha256 %s (approved by %s)\n", t.task, done.RulesSHA256, o.by)
		if done.HadPin && done.Previous != done.RulesSHA256 {
			fmt.Fprintf(w, "  replaces the pin %s (%s)\n", done.Previous, done.PreviousBy)
		}
	})
}
