package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/report"
)

type gateVerifyOptions struct {
	mission, task string
	all, apply    bool
}

func newGateVerifyCmd(g *globalOptions) *cobra.Command {
	var o gateVerifyOptions
	c := &cobra.Command{
		Use:   "verify (--task T | --all) [--mission M] [--apply]",
		Short: "Re-evaluate passed tasks against fresh evidence and check every task's history",
		Long: `Check the gate history of every task, whatever its state, and re-evaluate every task the
gate passed (state verified or passed), without writing anything:

  tampered  gate_history's hash chain does not verify (an entry was edited, inserted, removed
            or reordered), an entry's HMAC does not verify while GEAS_GATE_KEY is set, the
            budgets do not add up, record.json names another task, gate_result is not the
            chain's latest gate run (a hand-written gate_result, a dropped newest entry), a gate
            event of events.jsonl names an entry the history does not hold, or the task is
            verified or passed and its latest gate run is not a pass
  revoked   the records verify, but a fresh dry-run evaluation against today's evidence is
            not a pass (its causes are listed)
  intact    the records verify and the task still passes

One line per task; exit 1 if any task is revoked or tampered, else 0. With --all, tasks
that are not verified or passed and whose history verifies are listed as skipped.

--apply records each revocation (a revocation entry in gate_history, and revocation and
task_transition events) and moves a revoked verified task back to its profile's gate state:
implementation_change -> integrated, artifact_only and closure_ready -> reviewed. A passed
task is terminal: the revocation is recorded, its state is not changed. Tampered tasks are
never changed: their records are evidence to investigate.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runGateVerify(c.Context(), g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().BoolVar(&o.all, "all", false, "verify every task of the mission")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().BoolVar(&o.apply, "apply", false, "record revocations and move revoked tasks back to their gate state")
	return c
}

func runGateVerify(ctx context.Context, g *globalOptions, o gateVerifyOptions) error {
	switch {
	case o.all && o.task != "":
		return usagef("give --task or --all, not both")
	case !o.all && o.task == "":
		return usagef("--task or --all is required")
	}
	if o.task != "" {
		if err := project.ValidateID("task", o.task); err != nil {
			return err
		}
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	out, err := gate.Verify(ctx, p, mission, o.task, o.apply)
	if errors.Is(err, gate.ErrInterrupted) || errors.As(err, new(*gate.RefusedError)) {
		return &exitError{code: ExitError, err: err}
	} else if err != nil {
		return err
	}
	if err := g.writeVerify(&report.Verify{Verification: out, ID: mission, Apply: o.apply}); err != nil {
		return err
	}
	if out.Revoked+out.Tampered > 0 {
		return &exitError{code: ExitFail, silent: true}
	}
	return nil
}
