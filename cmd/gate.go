package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

type gateOptions struct {
	mission, task string
	dryRun        bool
	quiet         bool
	all           bool
	jobs          int
	minPassRate   float64
	keepGoing     bool
}

func newGateCmd(g *globalOptions) *cobra.Command {
	var o gateOptions
	c := &cobra.Command{
		Use:   "gate (--task T | --all) [--mission M] [--dry-run] [--keep-going]",
		Short: "Decide whether a task is done: pass, fail, block or error",
		Long: `Run the gate on one task: tier 0 (precheck), tier 1 (the contract's eval commands),
tier 2 (acceptance criteria, scope, known risks, rubric), then the verdict:

  pass   every blocking check passed           exit 0   task -> verified
  fail   the work does not meet the contract   exit 1   spends one retry; the last one escalates
  block  something required is missing        exit 2   no retry spent
  error  the gate could not decide             exit 3   no retry spent; 3 in a row -> blocked

Stages stop where the seed stops: a tier-0 check that does not pass stops the run after tier 0, a
tier-1 failure after tier 1, and a part-A (criteria) check that does not pass stops tier 2 before
scope, risks and rubric. --keep-going runs the stages not reached anyway and lists their findings
as advisory; they never change the verdict, the budget or the transition.

The rules (the contract without its status and timestamps, plus the gate policy) are pinned by
geas task approve or by the task's first recorded run; rules that differ later block the run
(rules_changed) until an authority approves them.

The run is recorded in record.json (gate_result and a hash-chained gate_history entry) and in
.geas/state/events.jsonl; --dry-run computes the same verdict and writes nothing.
SIGINT/SIGTERM kill the eval commands, write nothing, and exit 3.

A task that is already verified or passed is re-checked, as geas gate verify does, and nothing
is written or counted: the fresh verdict is printed with "recheck": true, exit 0 while the pass
holds and 1 when it would be revoked (geas gate verify --apply records that), so CI jobs that
re-run after success stay green and never move a finished task to blocked.

--all lists every task directory of the mission, --jobs at a time: gate-eligible tasks are gated,
verified and passed tasks re-checked, cancelled tasks listed and not counted, tasks in any other
state are not_ready, and an entry that cannot be read as a task (no contract.json, a symlink, a
file) is an error for that task. The mission succeeds only if every task that is not cancelled
passes (or --min-pass-rate of them do).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.all {
				return runGateAll(c, g, o)
			}
			return runGate(c, g, o)
		},
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "compute the verdict without writing anything")
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "do not stream eval command output to stderr")
	c.Flags().BoolVar(&o.all, "all", false, "gate every gate-eligible task of the mission")
	c.Flags().IntVar(&o.jobs, "jobs", 1, "with --all: tasks gated at once")
	c.Flags().BoolVar(&o.keepGoing, "keep-going", false, "run the stages a failing stage stops anyway and list their findings as advisory (they never change the verdict or the budget)")
	c.Flags().Float64Var(&o.minPassRate, "min-pass-rate", 0, "with --all: overall success when this share of tasks (0..1] passes; default: every task must pass")
	c.AddCommand(newGateVerifyCmd(g))
	return c
}

func runGate(c *cobra.Command, g *globalOptions, o gateOptions) error {
	if o.task == "" {
		return usagef("--task or --all is required")
	}
	if c.Flags().Changed("jobs") || c.Flags().Changed("min-pass-rate") {
		return usagef("--jobs and --min-pass-rate go with --all")
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		if exitCode(err) == ExitUsage {
			return err
		}
		// The task exists but cannot be opened (a symlink out of .geas, a permission): the gate
		// could not decide, which is exit 3, never the exit code of a fail verdict.
		return &exitError{code: 3, err: err}
	}
	defer t.Close()
	res, err := gateTaskOpts(c.Context(), t, o.dryRun, g.progress(o.quiet), o.keepGoing)
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	if err := g.writeGate([]*tiers.Result{res}); err != nil {
		return err
	}
	return &exitError{code: tiers.ExitCode(res), silent: true}
}

// gateTask runs the gate once on an opened task: under the task lock unless dryRun, evaluation,
// budget, and (unless dryRun) the writes of SPEC §7. A task whose state is verified or passed is
// re-checked instead (tiers.Recheck, still under the lock), which writes nothing whatever dryRun
// says. An error means the gate could not run at all (exit 3), for instance tiers.ErrInterrupted;
// verdicts, even error, come back as results.
func gateTask(ctx context.Context, t *taskRef, dryRun bool, progress tiers.Progress) (*tiers.Result, error) {
	return gateTaskOpts(ctx, t, dryRun, progress, false)
}

// gateTaskOpts is gateTask with --keep-going (SPEC §5): the stages not reached run anyway and
// what they find is advisory.
func gateTaskOpts(ctx context.Context, t *taskRef, dryRun bool, progress tiers.Progress, keepGoing bool) (*tiers.Result, error) {
	var completed []string
	if !dryRun {
		lock, err := record.LockTask(ctx, t.p.Geas, t.dir)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		// SPEC §7.3: what the latest recorded entry implies is written before anything else.
		if completed, err = tiers.Complete(t.p.Geas, t.mission, t.task, t.dir, time.Now()); err != nil {
			return nil, fmt.Errorf("complete the task's last recorded entry: %w", err)
		}
	}
	withNotes := func(res *tiers.Result, err error) (*tiers.Result, error) {
		if res != nil && len(completed) > 0 {
			res.Notes = append(slices.Clone(completed), res.Notes...)
		}
		return res, err
	}
	if k, err := contract.Load(t.p.Geas, t.dir+"/contract.json"); err == nil && k.TaskID == t.task && k.Status.IsFinished() {
		return withNotes(tiers.Recheck(ctx, t.p, t.mission, t.task, t.dir)) // SPEC §7.2: writes nothing
	}
	start := time.Now()
	in := tiers.Gather(t.p, t.mission, t.task, t.dir)
	opts := tiers.Options{RunID: tiers.NextRunID(in.Record), DryRun: dryRun, Now: start, Progress: progress, KeepGoing: keepGoing}
	logDir := ""
	if !dryRun {
		if in.Record == nil {
			opts.RunID = "gate-" + start.UTC().Format("20060102T150405")
		}
		logDir = t.dir + "/gate-logs/" + opts.RunID
		logRoot, err := openLogDir(t.p.Geas, logDir)
		if err != nil {
			return nil, err
		}
		defer logRoot.Close()
		opts.LogRoot = logRoot
		opts.LogDirName = ".geas/" + logDir
	}
	discard := func() {
		if logDir != "" {
			_ = t.p.Geas.RemoveAll(logDir)
		}
	}
	res, err := tiers.Evaluate(ctx, in, opts)
	if err != nil {
		discard()
		return nil, err
	}
	escalate := tiers.Budget(in, res)
	if dryRun {
		return res, nil
	}
	if ctx.Err() != nil {
		discard()
		return nil, tiers.ErrInterrupted
	}
	if err := tiers.Apply(in, res, escalate, time.Now()); err != nil {
		return nil, err
	}
	return withNotes(res, nil)
}

// openLogDir creates a run's log directory through the .geas root and opens it, before any eval
// command runs, as the root every log of the run is created in (SPEC §3: no path the gate opens
// escapes .geas). gate-logs and the run's directory must be real directories, not symlinks (a
// link planted there would take the logs elsewhere in .geas); once opened, a command that
// replaces the directory by a symlink cannot redirect the logs that follow, since the root holds
// the directory itself, and each log is created with O_EXCL. A log directory that cannot be
// made safely is an error of the run (exit 3): the gate does not run commands it cannot log.
func openLogDir(geas *os.Root, logDir string) (*os.Root, error) {
	if err := geas.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", logDir, err)
	}
	parent := path.Dir(logDir)
	for _, d := range []string{parent, logDir} {
		fi, err := geas.Lstat(d)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", logDir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("create %s: .geas/%s is a %s, not a directory: the gate writes logs only into directories it can trust", logDir, d, fi.Mode().Type())
		}
	}
	// Anything but a regular file already in the run's directory was planted before the run (the
	// gate creates only regular files there): refuse to run rather than guess what it is for.
	entries, err := fs.ReadDir(geas.FS(), logDir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", logDir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf(".geas/%s/%s is a %s, not a log the gate wrote: it was planted before the run, and the gate writes no log through it (remove it and run again)", logDir, e.Name(), describeType(e.Type()))
		}
	}
	if len(entries) > 0 {
		// Logs of a run that was never recorded (killed before its history entry), or of a run
		// whose entry was dropped from the history: kept, under another name, and never
		// overwritten (a file there may be a hard link planted to be truncated).
		aside := ""
		for i := 1; i <= 100 && aside == ""; i++ {
			name := fmt.Sprintf("%s.stale-%d", logDir, i)
			if _, err := geas.Lstat(name); errors.Is(err, fs.ErrNotExist) {
				aside = name
			}
		}
		if aside == "" {
			return nil, fmt.Errorf("create %s: it holds logs of an unrecorded run, and %s.stale-1..100 all exist", logDir, logDir)
		}
		if err := geas.Rename(logDir, aside); err != nil {
			return nil, fmt.Errorf("move the unrecorded logs of %s aside: %w", logDir, err)
		}
		if err := geas.Mkdir(logDir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", logDir, err)
		}
	}
	want, err := geas.Lstat(logDir)
	if err != nil {
		return nil, err
	}
	root, err := geas.OpenRoot(logDir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logDir, err)
	}
	if got, err := root.Stat("."); err != nil || !os.SameFile(want, got) {
		root.Close()
		return nil, fmt.Errorf("open %s: the directory changed while it was opened", logDir)
	}
	return root, nil
}

func describeType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	}
	return "special file"
}
