package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// writeGitHub writes results as GitHub Actions workflow commands: an ::error for each check that
// failed, blocked or errored, a ::warning for each warning, then a ::notice with the verdict of
// each result. A check that points at files (scope violations, confirmed stubs) gets one
// annotation per location, with file= and line=, so GitHub shows it on the file; paths are
// relative to the repository's top (a project in a subdirectory: its locations joined to it).
func writeGitHub(w io.Writer, results []*tiers.Result) error {
	var b strings.Builder
	for _, res := range results {
		checkAnnotations(&b, res)
		msg := fmt.Sprintf("verdict %s; retry budget %s -> %s; next: %s",
			verdictLine(res), record.BudgetText(res.RetryBudgetBefore), record.BudgetText(res.RetryBudgetAfter), nextActionText(res))
		ghCommand(&b, "notice", msg, "title", fmt.Sprintf("geas gate %s/%s", res.MissionID, res.TaskID))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// checkAnnotations writes an annotation for each check of res that did not pass: ::error for a
// check that failed, blocked or errored, ::warning for a warning or an advisory finding, one per
// place when the check points at files.
func checkAnnotations(b *strings.Builder, res *tiers.Result) {
	for _, c := range res.Checks {
		level := ""
		switch c.Status {
		case tiers.StatusPass, tiers.StatusSkipped:
			continue
		case tiers.StatusWarn:
			level = "warning"
		default: // fail, block, error, or a status the gate does not know: fail closed
			level = "error"
		}
		title := fmt.Sprintf("%s/%s: %s", res.TaskID, c.Name, c.Status)
		if c.Advisory { // --keep-going: a stage the run did not reach; never counted (SPEC §5)
			level = "warning"
			title += " (advisory)"
		}
		if c.Code != "" {
			title += " (" + string(c.Code) + ")"
		}
		msg := checkSentence(c)
		if len(c.Locations) == 0 {
			ghCommand(b, level, msg, "title", title)
			continue
		}
		for _, l := range c.Locations {
			props := []string{"title", title, "file", repoPath(res.ProjectPath, l.Path)}
			if l.Line > 0 {
				props = append(props, "line", fmt.Sprint(l.Line))
			}
			ghCommand(b, level, msg, props...)
		}
	}
}

// ghCommand writes ::level k=v,k=v::message. Properties and message are escaped as the runner
// unescapes them, so a newline in evidence cannot start a workflow command of its own.
func ghCommand(b *strings.Builder, level, msg string, props ...string) {
	b.WriteString("::" + level)
	for i := 0; i+1 < len(props); i += 2 {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(",")
		}
		b.WriteString(props[i] + "=" + ghProperty(props[i+1]))
	}
	b.WriteString("::" + ghData(msg) + "\n")
}

var (
	ghDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func ghData(s string) string { return ghDataEscaper.Replace(s) }

// GitHubCommandData escapes s as the data of a GitHub workflow command (`::group::DATA`), as
// the runner unescapes it.
func GitHubCommandData(s string) string { return ghData(s) }
func ghProperty(s string) string        { return ghPropertyEscaper.Replace(s) }

// WriteGitHubSummary writes results as the Markdown of a GitHub job summary
// ($GITHUB_STEP_SUMMARY): for each result the verdict, a table of the tiers, the checks that did
// not pass with their evidence, the warnings, the retry budget and the next action.
func WriteGitHubSummary(w io.Writer, results []*tiers.Result) error {
	var b strings.Builder
	for _, res := range results {
		fmt.Fprintf(&b, "## geas gate %s: %s %s\n\n", mdText(res.TaskID), verdictIcon(res), mdText(verdictLine(res)))
		profile := string(res.GateProfile)
		if profile == "" {
			profile = "unknown"
		}
		mode := ""
		if res.DryRun {
			mode = " · dry run: nothing written"
		}
		fmt.Fprintf(&b, "mission %s · run %s · profile %s · %s%s\n\n", mdText(res.MissionID), mdText(res.RunID), mdText(profile), durationText(res.DurationMS), mode)
		b.WriteString("| tier | status | details |\n|---|---|---|\n")
		for tier := 0; tier <= 2; tier++ {
			tr := res.TierResults[fmt.Sprintf("tier_%d", tier)]
			fmt.Fprintf(&b, "| %d | %s | %s |\n", tier, mdText(string(tr.Status)), mdText(tr.Details))
		}
		var bad, warns []tiers.Check
		for _, c := range res.Checks {
			switch c.Status {
			case tiers.StatusPass, tiers.StatusSkipped:
			case tiers.StatusWarn:
				warns = append(warns, c)
			default:
				bad = append(bad, c)
			}
		}
		if len(bad) > 0 {
			b.WriteString("\n**Checks that did not pass**\n\n| check | status | cause | evidence |\n|---|---|---|---|\n")
			for _, c := range bad {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(c.Name), mdText(string(c.Status)), mdText(string(c.Code)), mdText(junitBody(c)))
			}
		}
		if len(warns) > 0 {
			b.WriteString("\n**Warnings**\n\n")
			for _, c := range warns {
				fmt.Fprintf(&b, "- %s: %s\n", mdText(c.Name), mdText(c.Evidence))
			}
		}
		fmt.Fprintf(&b, "\n**Retry budget:** %s → %s", record.BudgetText(res.RetryBudgetBefore), record.BudgetText(res.RetryBudgetAfter))
		if t := res.Transition; t != nil {
			verb := "moved"
			if res.DryRun {
				verb = "would move"
			}
			fmt.Fprintf(&b, " · task %s %s → %s", verb, mdText(string(t.From)), mdText(string(t.To)))
		}
		fmt.Fprintf(&b, "\n\n**Next:** %s\n\n", mdText(nextActionText(res)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteGitHubVerifySummary writes what geas gate verify found as the Markdown of a GitHub job
// summary: the summary line, then a table of the tasks (status, state, and the causes or
// problems), and the skipped tasks.
func WriteGitHubVerifySummary(w io.Writer, v *Verify) error {
	var b strings.Builder
	icon := "✅"
	if v.Verification == nil || v.Revoked+v.Tampered > 0 {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## geas gate verify %s: %s\n\n", mdText(v.ID), icon)
	if v.Verification != nil {
		fmt.Fprintf(&b, "%s\n\n", mdText(verifyLine(v)))
		if len(v.Tasks) > 0 {
			b.WriteString("| task | status | state | why |\n|---|---|---|---|\n")
			for _, t := range v.Tasks {
				if t.VerifyReport == nil {
					continue
				}
				why := causesText(t.Causes)
				if len(t.Problems) > 0 {
					why = strings.Join(t.Problems, "; ")
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(t.TaskID), mdText(string(t.Status)), mdText(t.State), mdText(why))
			}
		}
		for _, s := range v.Skipped {
			fmt.Fprintf(&b, "\n- skipped %s: %s", mdText(s.TaskID), mdText(s.Reason))
		}
		if len(v.Skipped) > 0 {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictIcon(res *tiers.Result) string {
	switch {
	case res.Verdict.IsPass():
		return "✅"
	case res.Verdict == vocab.VerdictFail:
		return "❌"
	case res.Verdict == vocab.VerdictBlock:
		return "⛔"
	}
	return "⚠️"
}

// mdText makes text safe inside a Markdown table cell or list item: no HTML, no cell breaks, no
// line breaks that would end the row.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|",
	"\r\n", "<br>", "\n", "<br>", "\r", "<br>",
)

func mdText(s string) string { return mdEscaper.Replace(s) }

// durationText is a duration for people: 350ms, 1.2s, 2m3s.
func durationText(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 59_950: // rounds to at most 59.9s
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	}
	return fmt.Sprintf("%dm%ds", ms/60_000, ms%60_000/1000)
}

// githubFormat writes GitHub Actions workflow commands.
type githubFormat struct{}

// Gate writes the results as workflow commands.
func (githubFormat) Gate(w io.Writer, results []*tiers.Result) error {
	return writeGitHub(w, results)
}

// All writes the results of the tasks that have one as workflow commands, then a ::warning for
// each task that was not gated and the overall outcome (a ::notice, or an ::error when it is not a
// success), so that every task and the outcome show as annotations of the job.
func (githubFormat) All(w, _ io.Writer, a *All) error {
	if err := writeGitHub(w, a.Results()); err != nil {
		return err
	}
	for _, t := range a.Tasks {
		if t.Result == nil {
			fmt.Fprintf(w, "::warning title=%s::%s\n", ghProperty(t.TaskID+"/"+t.Outcome), ghData(t.Reason))
		}
	}
	level := "notice"
	if !a.Overall.Success {
		level = "error"
	}
	fmt.Fprintf(w, "::%s title=%s::%s\n", level, ghProperty("geas gate --all "+a.ID), ghData(overallLine(a.Overall)))
	return nil
}

// Verify writes what geas gate verify found as workflow commands: for a revoked task the
// annotations of the fresh evaluation's checks that did not pass (on their files, as for a gate
// run) and an ::error naming its causes; for a tampered task an ::error listing the problems;
// a ::notice for each intact task and each skipped one; then the summary line, an ::error when
// anything is revoked or tampered.
func (githubFormat) Verify(w io.Writer, v *Verify) error {
	var b strings.Builder
	var line string
	if v.Verification != nil {
		for _, t := range v.Tasks {
			if t.VerifyReport == nil {
				continue
			}
			title := fmt.Sprintf("geas gate verify %s/%s: %s", t.MissionID, t.TaskID, t.Status)
			switch t.Status {
			case gate.VerifyIntact:
				ghCommand(&b, "notice", "the records verify and the task still passes", "title", title)
			case gate.VerifyRevoked:
				if t.Result != nil {
					checkAnnotations(&b, t.Result)
				}
				ghCommand(&b, "error", "the pass no longer holds: "+causesText(t.Causes), "title", title)
			default: // tampered, or a status verify does not know: fail closed
				ghCommand(&b, "error", strings.Join(t.Problems, "; "), "title", title)
			}
			if a := t.Applied; a != nil && a.Note != "" {
				ghCommand(&b, "notice", "applied: "+a.Note, "title", title)
			}
		}
		for _, s := range v.Skipped {
			ghCommand(&b, "notice", s.Reason, "title", fmt.Sprintf("geas gate verify %s/%s: skipped", v.ID, s.TaskID))
		}
		line = verifyLine(v)
	}
	level := "notice"
	if v.Verification == nil || v.Revoked+v.Tampered > 0 {
		level = "error"
	}
	ghCommand(&b, level, line, "title", "geas gate verify "+v.ID)
	_, err := io.WriteString(w, b.String())
	return err
}
