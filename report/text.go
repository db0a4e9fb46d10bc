package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// textFormat writes reports for people.
type textFormat struct{}

// Gate writes the text report of each result, one after the other.
func (textFormat) Gate(w io.Writer, results []*tiers.Result) error {
	for _, res := range results {
		writeText(w, res)
	}
	return nil
}

// All writes the summary table of geas gate --all.
func (textFormat) All(w, _ io.Writer, a *All) error {
	writeAllText(w, a)
	return nil
}

// Verify writes the listing of geas gate verify.
func (textFormat) Verify(w io.Writer, v *Verify) error {
	writeVerifyText(w, v)
	return nil
}

// writeText writes the compact human report of a run: one line per tier, each check that did not
// pass with its evidence, then the verdict, the budget and the next action.
func writeText(w io.Writer, res *tiers.Result) {
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
		if c.Status == tiers.StatusPass || c.Status == tiers.StatusSkipped {
			continue
		}
		name := c.Name
		if c.Advisory {
			name += " (advisory)"
		}
		fmt.Fprintf(w, "  %-5s %s: %s\n", strings.ToUpper(string(c.Status)), name, c.Text)
		for _, line := range evidenceLines(c) {
			fmt.Fprintf(w, "        %s\n", terminalSafe(line))
		}
	}
	fmt.Fprintf(w, "verdict: %s\n", verdictLine(res))
	if len(res.AdvisoryCauses) > 0 {
		fmt.Fprintf(w, "advisory (stages not reached, run by --keep-going; not counted): %s\n", strings.Join(causeCodes(res.AdvisoryCauses), ", "))
	}
	if len(res.BlockingDimensions) > 0 {
		fmt.Fprintf(w, "blocking dimensions: %s\n", strings.Join(res.BlockingDimensions, ", "))
	}
	fmt.Fprintf(w, "retry budget: %s -> %s\n", record.BudgetText(res.RetryBudgetBefore), record.BudgetText(res.RetryBudgetAfter))
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

// evidenceLines are the lines a check's evidence is printed on: the problems of a file that does
// not match its schema (contract, record, policy, evidence) one a line, as geas validate prints
// them; any other evidence (a command's output among it) on one line, so that it cannot shape
// the report.
func evidenceLines(c tiers.Check) []string {
	switch c.Code {
	case vocab.CauseContractInvalid, vocab.CauseRecordInvalid, vocab.CausePolicyInvalid, vocab.CauseEvidenceInvalid:
		var lines []string
		for l := range strings.SplitSeq(strings.ReplaceAll(c.Evidence, "\r\n", "\n"), "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			return lines
		}
	}
	return []string{c.Evidence}
}

// verdictLine is the verdict in capitals followed by its distinct cause codes.
func verdictLine(res *tiers.Result) string {
	v := strings.ToUpper(string(res.Verdict))
	if len(res.Causes) == 0 {
		return v
	}
	return v + " (" + strings.Join(causeCodes(res.Causes), ", ") + ")"
}

// causeCodes are the distinct codes of causes, in the order they first appear.
func causeCodes(causes []tiers.Cause) []string {
	var codes []string
	for _, c := range causes {
		if !slices.Contains(codes, string(c.Code)) {
			codes = append(codes, string(c.Code))
		}
	}
	return codes
}

func nextActionText(res *tiers.Result) string {
	switch res.NextAction {
	case tiers.NextProceed:
		return "proceed: the task is verified"
	case tiers.NextFix:
		if res.RepeatOf != "" {
			return fmt.Sprintf("fix: same attempt as %s: nothing changed since; nothing run, no retry spent (%s left); change the work, the evidence or the rules, then run the gate again", res.RepeatOf, plural(derefInt(res.RetryBudgetAfter), "retry", "retries"))
		}
		return fmt.Sprintf("fix: address the causes above and run the gate again (%s left)", plural(derefInt(res.RetryBudgetAfter), "retry", "retries"))
	case tiers.NextEscalate:
		return "escalate: the retry budget is spent; an authority decides (see the pending decision)"
	case tiers.NextResolveBlock:
		return "resolve_block: supply what is missing, then run the gate again (no retry spent)"
	case tiers.NextInvestigateErr:
		if res.NextCommand != "" {
			return "investigate_error: the task is not in a state the gate judges; run " + res.NextCommand + ", then run the gate again (no retry spent)"
		}
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
