package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/report"
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
	if o.list {
		return runGateList(c, g, o)
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	defer tuneGCForAll()()
	// Live output of one task's eval commands is useful; several tasks' interleaved is not.
	var progress gate.Progress
	if o.jobs == 1 {
		progress = g.progress(o.quiet)
	}
	m, err := gate.All(c.Context(), p, mission, gate.AllOptions{Jobs: o.jobs, DryRun: o.dryRun, MinPassRate: o.minPassRate,
		Progress: func(task string) gate.Progress { return labeled(progress, task) }})
	if errors.As(err, new(*gate.UnknownMissionError)) {
		return err // a usage error
	} else if err != nil {
		// Interrupted, or the tasks could not be listed: the gate could not decide, which is an
		// error (3), never the 1 of a refusal, which a caller of geas gate reads as fail.
		return &exitError{code: ExitError, err: err}
	}
	if err := g.writeAll(&report.All{Mission: m, ID: mission, DryRun: o.dryRun}); err != nil {
		return err
	}
	if m.Overall.ExitCode == 0 {
		return nil
	}
	return &exitError{code: m.Overall.ExitCode, silent: true}
}

// runGateList is geas gate --all --list: what --all would do with each task, and nothing run.
func runGateList(c *cobra.Command, g *globalOptions, o gateOptions) error {
	switch {
	case c.Flags().Changed("jobs") || c.Flags().Changed("min-pass-rate") || o.keepGoing || o.dryRun:
		return usagef("--list runs nothing: --jobs, --min-pass-rate, --keep-going and --dry-run do not go with it")
	case g.format != formatText && g.format != formatJSON:
		return usagef("--list prints text or json, not %s", g.format)
	case len(g.outFiles) > 0:
		return usagef("--list prints on standard output only; -o does not go with it")
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	l, err := gate.List(p, mission)
	if err != nil {
		return err
	}
	return g.output(l, func(w io.Writer) {
		fmt.Fprintf(w, "geas gate --all --list: mission %s, %d task(s): %d eligible, %d counted\n", mission, len(l.Tasks), len(l.Eligible), len(l.Counted))
		if len(l.Tasks) > 0 {
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "TASK\tSTATE\tACTION\tREASON")
			for _, t := range l.Tasks {
				state, reason := t.State, t.Reason
				if state == "" {
					state = "-"
				}
				if reason == "" {
					reason = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", listText(t.TaskID), state, t.Action, listText(reason))
			}
			tw.Flush()
		}
		if len(l.Ignored) > 0 {
			fmt.Fprintf(w, "ignored (hidden files, not task directories): %s\n", listText(strings.Join(l.Ignored, ", ")))
		}
	})
}

// listText keeps names and reasons that came from the file system on one line and free of
// control characters.
func listText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
