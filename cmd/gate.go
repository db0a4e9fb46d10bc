package cmd

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

type gateOptions struct {
	mission, task string
	dryRun        bool
}

func newGateCmd(g *globalOptions) *cobra.Command {
	var o gateOptions
	c := &cobra.Command{
		Use:   "gate --task T [--mission M] [--dry-run]",
		Short: "Decide whether a task is done: pass, fail, block or error",
		Long: `Run the gate on one task: tier 0 (precheck), tier 1 (the contract's eval commands),
tier 2 (acceptance criteria, scope, known risks, rubric), then the verdict:

  pass   every blocking check passed           exit 0   task -> verified
  fail   the work does not meet the contract   exit 1   spends one retry; the last one escalates
  block  something required is missing        exit 2   no retry spent
  error  the gate could not decide             exit 3   no retry spent; 3 in a row -> blocked

The run is recorded in record.json (gate_result and a hash-chained gate_history entry) and in
.geas/state/events.jsonl; --dry-run computes the same verdict and writes nothing.
SIGINT/SIGTERM kill the eval commands, write nothing, and exit 3.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runGate(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "compute the verdict without writing anything")
	return c
}

func runGate(c *cobra.Command, g *globalOptions, o gateOptions) error {
	ctx := c.Context()
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	if !o.dryRun {
		lock, err := record.LockTask(ctx, t.p.Geas, t.dir)
		if err != nil {
			return &exitError{code: 3, err: err}
		}
		defer lock.Unlock()
	}
	start := time.Now()
	in := tiers.Gather(t.p, t.mission, t.task, t.dir)
	opts := tiers.Options{RunID: tiers.NextRunID(in.Record), DryRun: o.dryRun, Now: start}
	logDir := t.dir + "/gate-logs/" + opts.RunID
	if !o.dryRun {
		if in.Record == nil {
			opts.RunID = "gate-" + start.UTC().Format("20060102T150405")
			logDir = t.dir + "/gate-logs/" + opts.RunID
		}
		// Create the log directory through the root, so a planted symlink cannot send logs outside.
		if err := t.p.Geas.MkdirAll(logDir, 0o755); err != nil {
			return &exitError{code: 3, err: fmt.Errorf("create %s: %w", logDir, err)}
		}
		opts.LogDir = filepath.Join(t.p.Dir, ".geas", filepath.FromSlash(logDir))
		opts.LogDirName = ".geas/" + logDir
	}
	res, err := tiers.Evaluate(ctx, in, opts)
	if errors.Is(err, tiers.ErrInterrupted) {
		if !o.dryRun {
			_ = t.p.Geas.RemoveAll(logDir)
		}
		return &exitError{code: 3, err: err}
	}
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	escalate := tiers.Budget(in, res)
	if !o.dryRun {
		if ctx.Err() != nil {
			_ = t.p.Geas.RemoveAll(logDir)
			return &exitError{code: 3, err: tiers.ErrInterrupted}
		}
		if err := tiers.Apply(in, res, escalate, time.Now()); err != nil {
			return &exitError{code: 3, err: err}
		}
	}
	if err := g.output(res, func(w io.Writer) { tiers.WriteText(w, res) }); err != nil {
		return err
	}
	return &exitError{code: res.Verdict.ExitCode(), silent: true}
}
