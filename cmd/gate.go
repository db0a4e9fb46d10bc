package cmd

import (
	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type gateOptions struct {
	mission, task string
	dryRun        bool
	quiet         bool
	all           bool
	jobs          int
	minPassRate   float64
	keepGoing     bool
	list          bool
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

The run is recorded by a hash-chained entry appended to the task's gate-history.jsonl (the commit
point), then gate_result in record.json and the events in .geas/state/events.jsonl; --dry-run
computes the same verdict and writes nothing.
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
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "do not stream eval command output to stderr (in GitHub Actions it still goes in a collapsed group of the log)")
	c.Flags().BoolVar(&o.all, "all", false, "gate every gate-eligible task of the mission")
	c.Flags().IntVar(&o.jobs, "jobs", 1, "with --all: tasks gated at once")
	c.Flags().BoolVar(&o.list, "list", false, "with --all: list every task and what --all would do with it (gate, recheck, not_ready, cancelled, error), and run nothing")
	c.Flags().BoolVar(&o.keepGoing, "keep-going", false, "run the stages a failing stage stops anyway and list their findings as advisory (they never change the verdict or the budget)")
	c.Flags().Float64Var(&o.minPassRate, "min-pass-rate", 0, "with --all: overall success when this share of tasks (0..1] passes; default: every task must pass")
	c.AddCommand(newGateVerifyCmd(g))
	return c
}

func runGate(c *cobra.Command, g *globalOptions, o gateOptions) error {
	if o.task == "" {
		return usagef("--task or --all is required")
	}
	if c.Flags().Changed("jobs") || c.Flags().Changed("min-pass-rate") || o.list {
		return usagef("--jobs, --min-pass-rate and --list go with --all")
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		if exitCode(err) == ExitUsage {
			return err
		}
		// The task exists but cannot be opened (a symlink out of .geas, a permission): the gate
		// could not decide, which is exit 3, never the exit code of a fail verdict.
		return &exitError{code: ExitError, err: err}
	}
	defer t.Close()
	res, err := gate.Run(c.Context(), t.ref(), gate.Options{DryRun: o.dryRun, Progress: g.progress(o.quiet), KeepGoing: o.keepGoing})
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	if err := g.writeGate([]*gate.Result{res}); err != nil {
		return err
	}
	return &exitError{code: gate.ExitCode(res), silent: true}
}
