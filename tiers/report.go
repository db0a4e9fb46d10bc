package tiers

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText writes the compact human report of a run: one line per tier, each check that did not
// pass with its evidence, then the verdict, the budget and the next action.
func WriteText(w io.Writer, res *Result) {
	mode := ""
	if res.DryRun {
		mode = " (dry run: nothing written)"
	}
	profile := string(res.GateProfile)
	if profile == "" {
		profile = "unknown"
	}
	fmt.Fprintf(w, "geas gate %s: task %s, mission %s, profile %s%s\n", res.RunID, res.TaskID, res.MissionID, profile, mode)
	for tier := 0; tier <= 2; tier++ {
		tr := res.TierResults[fmt.Sprintf("tier_%d", tier)]
		fmt.Fprintf(w, "  tier %d  %-7s %s\n", tier, tr.Status, tr.Details)
	}
	for _, c := range res.Checks {
		if c.Status == StatusPass || c.Status == StatusSkipped {
			continue
		}
		name := c.Name
		if c.Advisory {
			name += " (advisory)"
		}
		fmt.Fprintf(w, "  %-5s %s: %s\n", strings.ToUpper(string(c.Status)), name, c.Text)
		fmt.Fprintf(w, "        %s\n", terminalSafe(c.Evidence))
	}
	verdict := strings.ToUpper(string(res.Verdict))
	if len(res.Causes) > 0 {
		codes := make([]string, 0, len(res.Causes))
		seen := map[string]bool{}
		for _, c := range res.Causes {
			if !seen[string(c.Code)] {
				seen[string(c.Code)] = true
				codes = append(codes, string(c.Code))
			}
		}
		verdict += " (" + strings.Join(codes, ", ") + ")"
	}
	fmt.Fprintf(w, "verdict: %s\n", verdict)
	if len(res.AdvisoryCauses) > 0 {
		codes := make([]string, 0, len(res.AdvisoryCauses))
		for _, c := range res.AdvisoryCauses {
			if !slices.Contains(codes, string(c.Code)) {
				codes = append(codes, string(c.Code))
			}
		}
		fmt.Fprintf(w, "advisory (stages not reached, run by --keep-going; not counted): %s\n", strings.Join(codes, ", "))
	}
	if len(res.BlockingDimensions) > 0 {
		fmt.Fprintf(w, "blocking dimensions: %s\n", strings.Join(res.BlockingDimensions, ", "))
	}
	fmt.Fprintf(w, "retry budget: %s -> %s\n", BudgetText(res.RetryBudgetBefore), BudgetText(res.RetryBudgetAfter))
	if t := res.Transition; t != nil {
		verb := "moved"
		if res.DryRun {
			verb = "would move"
		}
		fmt.Fprintf(w, "task %s %s -> %s\n", verb, t.From, t.To)
	}
	if res.Escalation != "" {
		fmt.Fprintf(w, "escalation: %s\n", res.Escalation)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "next: %s\n", nextActionText(res))
}

func nextActionText(res *Result) string {
	switch res.NextAction {
	case NextProceed:
		return "proceed: the task is verified"
	case NextFix:
		return fmt.Sprintf("fix: address the causes above and run the gate again (%s left)", plural(derefInt(res.RetryBudgetAfter), "retry", "retries"))
	case NextEscalate:
		return "escalate: the retry budget is spent; an authority decides (see the pending decision)"
	case NextResolveBlock:
		return "resolve_block: supply what is missing, then run the gate again (no retry spent)"
	case NextInvestigateErr:
		return "investigate_error: the gate could not decide; fix the cause, then run it again (no retry spent)"
	}
	return res.NextAction
}

// terminalSafe keeps evidence on one line and drops control characters, so text that came from a
// command's output cannot break the report's layout or send escape sequences to the terminal.
func terminalSafe(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", " | ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
