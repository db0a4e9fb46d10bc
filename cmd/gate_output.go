package cmd

import (
	"bytes"
	"fmt"
	"os"

	"github.com/geas-dev/geas/tiers"
)

// writeGate prints gate results in the chosen format: text (the compact report of each), json (the
// result document; one object for one task), junit or github.
func (g *globalOptions) writeGate(results []*tiers.Result) error {
	switch g.format {
	case formatJSON:
		if len(results) == 1 {
			return writeJSON(g.stdout, results[0])
		}
		return writeJSON(g.stdout, results)
	case formatText:
		for _, res := range results {
			tiers.WriteText(g.stdout, res)
		}
		return nil
	}
	return writeGateFormat(g, results)
}

// stepSummaryEnv names the file GitHub Actions renders as the job summary.
const stepSummaryEnv = "GITHUB_STEP_SUMMARY"

// writeGateFormat renders the junit and github formats. With github, when $GITHUB_STEP_SUMMARY is
// set, a Markdown report is also appended to that file (the runner gives each step its own).
func writeGateFormat(g *globalOptions, results []*tiers.Result) error {
	switch g.format {
	case formatJUnit:
		return tiers.WriteJUnit(g.stdout, results)
	case formatGitHub:
		if err := tiers.WriteGitHub(g.stdout, results); err != nil {
			return err
		}
		path := os.Getenv(stepSummaryEnv)
		if path == "" {
			return nil
		}
		if err := appendStepSummary(path, results); err != nil {
			// The verdict is already printed and recorded: a summary that cannot be written is
			// reported, not turned into a different exit code.
			fmt.Fprintf(g.stderr, "geas: %v\n", err)
		}
		return nil
	}
	return usagef("--format must be text, json, junit or github, not %q", g.format)
}

func appendStepSummary(path string, results []*tiers.Result) error {
	var buf bytes.Buffer
	if err := tiers.WriteGitHubSummary(&buf, results); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", stepSummaryEnv, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", stepSummaryEnv, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", stepSummaryEnv, err)
	}
	return nil
}
