package cmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/report"
	"github.com/geas-dev/geas/tiers"
)

// runGateAll is geas gate --all: every entry of the mission's tasks directory accounted for
// (gate.All), printed in the chosen format, and the mission's exit code.
func runGateAll(c *cobra.Command, g *globalOptions, o gateOptions) error {
	switch {
	case o.task != "":
		return usagef("give --task or --all, not both")
	case o.jobs < 1:
		return usagef("--jobs must be 1 or more, not %d", o.jobs)
	case c.Flags().Changed("min-pass-rate") && !(o.minPassRate > 0 && o.minPassRate <= 1):
		return usagef("--min-pass-rate must be in (0, 1], not %v", o.minPassRate)
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	defer tuneGCForAll()()
	// Live output of one task's eval commands is useful; several tasks' interleaved is not.
	var progress tiers.Progress
	if o.jobs == 1 {
		progress = g.progress(o.quiet)
	}
	m, err := gate.All(c.Context(), p, mission, gate.AllOptions{Jobs: o.jobs, DryRun: o.dryRun, MinPassRate: o.minPassRate,
		Progress: func(task string) tiers.Progress { return labeled(progress, task) }})
	if errors.Is(err, tiers.ErrInterrupted) {
		return &exitError{code: ExitError, err: err}
	} else if err != nil {
		return err
	}
	if err := g.writeAll(&report.All{Mission: m, ID: mission, DryRun: o.dryRun}); err != nil {
		return err
	}
	if m.Overall.ExitCode == 0 {
		return nil
	}
	return &exitError{code: m.Overall.ExitCode, silent: true}
}
