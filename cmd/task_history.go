package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

type taskHistoryResetOptions struct {
	mission, task, by, reason string
	retries                   int
}

func newTaskHistoryCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("history", "Manage a task's gate history")
	var o taskHistoryResetOptions
	reset := &cobra.Command{
		Use:   "reset --task T --by AUTHORITY --reason TEXT [--retries N]",
		Short: "Start a new gate history after history_tampered (authorities only)",
		Long: `When a task's gate history does not verify (geas gate answers error history_tampered,
geas gate verify says tampered), the gate builds nothing on it: no run is recorded and no
budget is computed. An authority (orchestration-authority, product-authority or
design-authority, or an agent named after one) resets it:

  - the whole record.json as it was is kept aside, next to it, as
    record.json.reset-YYYYMMDDTHHMMSSZ (never overwritten), to be investigated;
  - gate_result is removed and gate_history starts over with one history_reset entry that
    records who reset it and why, what did not verify, the hashes of the discarded history
    (so the task's old events still cross-check), and the budget it grants: --retries N,
    0..100, default 0 (a task at 0 re-enters the gate only after geas task budget grant);
  - the entry carries the HMAC of GEAS_GATE_KEY when it is set.

A history that verifies is not reset (exit 1). The task's state is not changed.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskHistoryReset(c, g, o) },
	}
	reset.Flags().StringVar(&o.task, "task", "", "task id")
	reset.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	reset.Flags().StringVar(&o.by, "by", "", "the authority resetting it, e.g. orchestration-authority")
	reset.Flags().StringVar(&o.reason, "reason", "", "why")
	reset.Flags().IntVar(&o.retries, "retries", 0, "retries the new history starts with, 0..100")
	c.AddCommand(reset)
	return c
}

// checkAuthority refuses --by values that are not an authority (SPEC §9): a missing or invalid
// agent id is a usage error.
func checkAuthority(by, what string) error {
	if by == "" {
		return usagef("--by is required")
	}
	if err := project.ValidateID("agent", by); err != nil {
		return &usageError{err: err}
	}
	return gate.CheckAuthority(by, what)
}

func runTaskHistoryReset(c *cobra.Command, g *globalOptions, o taskHistoryResetOptions) error {
	switch {
	case o.task == "":
		return usagef("--task is required")
	case o.retries < 0 || o.retries > gate.MaxGrant:
		return usagef("--retries must be 0..%d, not %d", gate.MaxGrant, o.retries)
	case strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required")
	}
	if err := checkAuthority(o.by, "reset a gate history"); err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.ResetHistory(c.Context(), t.ref(), gate.Reset{By: o.by, Reason: o.reason, Retries: o.retries})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "by": o.by, "retries": o.retries,
		"kept_aside": done.KeptAside, "problems": done.Problems, "hash": done.Hash}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: gate history reset by %s with %d retries; the old record is kept as %s\n", t.task, o.by, o.retries, done.KeptAside)
		for _, p := range done.Problems {
			fmt.Fprintf(w, "  did not verify: %s\n", p)
		}
	})
}
