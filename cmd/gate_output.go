package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/report"
)

// renderer is the report renderer of --format (checkFormats has refused what is not one).
func (g *globalOptions) renderer() (report.Renderer, error) {
	r := report.For(g.format)
	if r == nil {
		return nil, usagef("--format %q: want %s", g.format, formatList(reportFormats))
	}
	return r, nil
}

// writeGate prints gate results in the chosen format: text (the compact report of each), json (the
// result document; one object for one task), junit, github or sarif, and writes each -o file. With
// github, when $GITHUB_STEP_SUMMARY is set, a Markdown report is also appended to that file.
func (g *globalOptions) writeGate(results []*gate.Result) error {
	r, err := g.renderer()
	if err != nil {
		return err
	}
	g.writeOutputs(func(r report.Renderer, w, _ io.Writer) error { return r.Gate(w, results) })
	if err := r.Gate(g.stdout, results); err != nil {
		return err
	}
	g.stepSummary(results)
	return nil
}

// writeAll prints the outcome of geas gate --all in the chosen format, and with github the job
// summary of the tasks that were gated.
func (g *globalOptions) writeAll(a *report.All) error {
	r, err := g.renderer()
	if err != nil {
		return err
	}
	g.writeOutputs(func(r report.Renderer, w, diag io.Writer) error { return r.All(w, diag, a) })
	if err := r.All(g.stdout, g.stderr, a); err != nil {
		return err
	}
	g.stepSummary(a.Results())
	return nil
}

// writeVerify prints the outcome of geas gate verify in the chosen format.
func (g *globalOptions) writeVerify(v *report.Verify) error {
	r, err := g.renderer()
	if err != nil {
		return err
	}
	g.writeOutputs(func(r report.Renderer, w, _ io.Writer) error { return r.Verify(w, v) })
	if err := r.Verify(g.stdout, v); err != nil {
		return err
	}
	g.verifySummary(v)
	return nil
}

// stepSummaryEnv names the file GitHub Actions renders as the job summary.
const stepSummaryEnv = "GITHUB_STEP_SUMMARY"

// stepSummary appends the Markdown job summary of results to $GITHUB_STEP_SUMMARY with
// --format github when that is set (the runner gives each step its own file).
func (g *globalOptions) stepSummary(results []*gate.Result) {
	g.appendSummary(func(w io.Writer) error { return report.WriteGitHubSummary(w, results) })
}

// verifySummary is stepSummary for geas gate verify.
func (g *globalOptions) verifySummary(v *report.Verify) {
	g.appendSummary(func(w io.Writer) error { return report.WriteGitHubVerifySummary(w, v) })
}

func (g *globalOptions) appendSummary(render func(io.Writer) error) {
	path := os.Getenv(stepSummaryEnv)
	if g.format != formatGitHub || path == "" {
		return
	}
	if err := appendStepSummary(path, render); err != nil {
		// The verdict is already printed and recorded: a summary that cannot be written is
		// reported, not turned into a different exit code.
		fmt.Fprintf(g.stderr, "geas: %v\n", err)
	}
}

func appendStepSummary(path string, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
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
