package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// All is what geas gate --all prints: the mission's outcome (gate.All), whose JSON is the --format
// json document, and how it was reached.
type All struct {
	*gate.Mission
	ID     string `json:"-"` // the mission's id, for the text heading and the github annotation
	DryRun bool   `json:"-"` // --dry-run: nothing was written
}

// Results are the results of the tasks that have one, in the order of the tasks: what the junit
// and github formats show, and what goes into a GitHub job summary.
func (a *All) Results() []*tiers.Result {
	var shown []*tiers.Result
	for _, t := range a.Tasks {
		if t.Result != nil {
			shown = append(shown, t.Result)
		}
	}
	return shown
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
func writeAllText(w io.Writer, a *All) {
	mission, tasks, ignored, ov := a.ID, a.Tasks, a.Ignored, a.Overall
	mode := ""
	if a.DryRun {
		mode = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "geas gate --all: mission %s, %d task(s), %d counted%s\n", mission, len(tasks), ov.Counted, mode)
	if len(tasks) > 0 {
		// tabwriter writes every cell on its own: buffered, the table is a few writes, not eight
		// a task (each a system call on a terminal or a pipe).
		bw := bufio.NewWriter(w)
		defer bw.Flush()
		tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tOUTCOME\tBUDGET\tCAUSES")
		for _, t := range tasks {
			outcome, budget, causes := t.Outcome, "-", terminalLine(t.Reason)
			if t.Ran {
				budget = fmt.Sprintf("%s -> %s", record.BudgetText(t.RetryBudgetBefore), record.BudgetText(t.RetryBudgetAfter))
				if t.Recheck {
					outcome += " (recheck)"
				}
			}
			if t.Result != nil {
				causes = strings.Join(causeCodes(t.Causes), ", ")
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
		bw.Flush()
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
