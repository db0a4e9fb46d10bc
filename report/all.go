package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/geas-dev/geas/tiers"
)

// All is the outcome of geas gate --all, and its --format json document.
type All struct {
	Tasks   []*AllTask `json:"tasks"`
	Ignored []string   `json:"ignored,omitempty"` // hidden regular files in tasks/ (e.g. .DS_Store)
	Overall Overall    `json:"overall"`
	Mission string     `json:"-"` // the mission's id, for the text heading and the github annotation
	DryRun  bool       `json:"-"` // --dry-run: nothing was written
}

// AllTask is one entry of the mission's tasks directory and its outcome: pass, fail, block or
// error for a task that was gated or re-checked (its result's fields inline), not_ready, cancelled,
// or error for an entry that cannot be read as a task (with a result naming why).
type AllTask struct {
	TaskID  string `json:"task_id"`
	Outcome string `json:"outcome"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
	*tiers.Result
	Ran bool `json:"-"` // Result is a gate run or a recheck, not a stand-in for an unreadable entry
}

// Overall is the mission-wide outcome of geas gate --all.
type Overall struct {
	Success     bool           `json:"success"`
	PassRate    float64        `json:"pass_rate"`
	MinPassRate float64        `json:"min_pass_rate,omitempty"` // 0: every counted task must pass
	Counts      map[string]int `json:"counts"`
	Counted     int            `json:"counted"` // every task that is not cancelled
	ExitCode    int            `json:"exit_code"`
	Reason      string         `json:"reason"`
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

func overallLine(ov Overall) string {
	word := "success"
	if !ov.Success {
		word = "FAILURE"
	}
	return fmt.Sprintf("overall: %s: %s (exit %d)", word, ov.Reason, ov.ExitCode)
}

// writeAllText prints the summary table: one row per entry of the tasks directory with its
// outcome, budget and causes (or why it was not gated), the ignored files, and the overall line.
func writeAllText(w io.Writer, a *All) {
	mission, tasks, ignored, ov := a.Mission, a.Tasks, a.Ignored, a.Overall
	mode := ""
	if a.DryRun {
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
