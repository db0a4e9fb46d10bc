package cmd

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
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
	if err := g.writeAll(mission, m, o.dryRun); err != nil {
		return err
	}
	if m.Overall.ExitCode == 0 {
		return nil
	}
	return &exitError{code: m.Overall.ExitCode, silent: true}
}

// writeAll prints the outcome of geas gate --all in the --format chosen.
func (g *globalOptions) writeAll(mission string, m *gate.Mission, dryRun bool) error {
	tasks, ov := m.Tasks, m.Overall
	switch g.format {
	case formatJSON:
		if m.Tasks == nil {
			m.Tasks = []*gate.MissionTask{}
		}
		return writeJSON(g.stdout, m)
	case formatText:
		writeAllText(g.stdout, mission, tasks, m.Ignored, ov, dryRun)
	default:
		var shown []*tiers.Result
		var others []string
		for _, t := range tasks {
			if t.Result != nil {
				shown = append(shown, t.Result)
			} else {
				others = append(others, fmt.Sprintf("%s %s: %s", t.TaskID, t.Outcome, t.Reason))
			}
		}
		if err := g.writeGate(shown); err != nil {
			return err
		}
		if g.format == formatJUnit {
			// stdout is one XML document: the other tasks and the overall line go to stderr.
			for _, l := range others {
				fmt.Fprintln(g.stderr, l)
			}
			fmt.Fprintln(g.stderr, overallLine(ov))
		} else {
			// Workflow commands, so that every task and the outcome show as annotations of the job.
			for _, t := range tasks {
				if t.Result == nil {
					fmt.Fprintf(g.stdout, "::warning title=%s/%s::%s\n", t.TaskID, t.Outcome, t.Reason)
				}
			}
			level := "notice"
			if !ov.Success {
				level = "error"
			}
			fmt.Fprintf(g.stdout, "::%s title=geas gate --all %s::%s\n", level, mission, overallLine(ov))
		}
	}
	return nil
}

func overallLine(ov gate.Overall) string {
	word := "success"
	if !ov.Success {
		word = "FAILURE"
	}
	return fmt.Sprintf("overall: %s: %s (exit %d)", word, ov.Reason, ov.ExitCode)
}

// writeAllText prints the summary table: one row per entry of the tasks directory with its
// outcome, budget and causes (or why it was not gated), the ignored files, and the overall line.
func writeAllText(w io.Writer, mission string, tasks []*gate.MissionTask, ignored []string, ov gate.Overall, dryRun bool) {
	mode := ""
	if dryRun {
		mode = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "geas gate --all: mission %s, %d task(s), %d counted%s\n", mission, len(tasks), ov.Counted, mode)
	if len(tasks) > 0 {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tOUTCOME\tBUDGET\tCAUSES")
		for _, t := range tasks {
			outcome, budget, causes := t.Outcome, "-", terminalLine(t.Reason)
			if t.Ran {
				budget = fmt.Sprintf("%s -> %s", tiers.BudgetText(t.RetryBudgetBefore), tiers.BudgetText(t.RetryBudgetAfter))
				if t.Recheck {
					outcome += " (recheck)"
				}
			}
			if t.Result != nil {
				var codes []string
				for _, c := range t.Causes {
					if !slices.Contains(codes, c.Code) {
						codes = append(codes, c.Code)
					}
				}
				causes = strings.Join(codes, ", ")
				if !t.Ran {
					causes += ": " + terminalLine(t.Reason)
				}
			}
			if causes == "" {
				causes = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", terminalLine(t.TaskID), outcome, budget, causes)
		}
		tw.Flush()
	}
	if len(ignored) > 0 {
		fmt.Fprintf(w, "ignored (hidden files, not task directories): %s\n", terminalLine(strings.Join(ignored, ", ")))
	}
	fmt.Fprintln(w, overallLine(ov))
}

// terminalLine keeps text that came from the file system (names, symlink targets) on one line and
// free of control characters.
func terminalLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
