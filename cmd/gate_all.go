package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/report"
	"github.com/geas-dev/geas/tiers"
)

// Outcomes of --all that are not verdicts.
const (
	outcomeNotReady  = "not_ready"
	outcomeCancelled = "cancelled"
)

// runGateAll accounts for every entry of the mission's tasks directory (SPEC §7.2): tasks in a
// gate-eligible state are gated and verified or passed ones re-checked, o.jobs at a time; a task
// whose contract.json cannot be parsed is gated too, so that it ends in an error verdict; cancelled
// tasks are listed and not counted; tasks in any other state are not_ready; an entry that is not a
// readable task directory is an error. Nothing is silently left out.
func runGateAll(c *cobra.Command, g *globalOptions, o gateOptions) error {
	switch {
	case o.task != "":
		return usagef("give --task or --all, not both")
	case o.jobs < 1:
		return usagef("--jobs must be 1 or more, not %d", o.jobs)
	case c.Flags().Changed("min-pass-rate") && !(o.minPassRate > 0 && o.minPassRate <= 1):
		return usagef("--min-pass-rate must be in (0, 1], not %v", o.minPassRate)
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	entries, err := p.TaskEntries(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return usagef("no mission %q (no .geas/%s/tasks directory)", mission, project.MissionDir(mission))
	} else if err != nil {
		return err
	}
	var (
		tasks   []*report.AllTask
		ignored []string
		refs    []*taskRef
		gated   []*report.AllTask // tasks[i] for refs[i]
	)
	for _, e := range entries {
		if e.Ignored {
			ignored = append(ignored, e.Name)
			continue
		}
		at := classify(p, mission, e)
		tasks = append(tasks, at)
		if at.Outcome == "" {
			refs = append(refs, &taskRef{p: p, mission: mission, task: e.Name, dir: project.TaskDir(mission, e.Name)})
			gated = append(gated, at)
		}
	}

	// Live output of one task's eval commands is useful; several tasks' interleaved is not.
	var progress tiers.Progress
	if o.jobs == 1 {
		progress = g.progress(o.quiet)
	}
	results, err := gateTasks(c.Context(), refs, o.jobs, o.dryRun, progress)
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	for i, res := range results {
		gated[i].Result, gated[i].Ran, gated[i].Outcome = res, true, string(res.Verdict)
	}

	ov := summarize(tasks, o.minPassRate)
	if err := g.writeAll(&report.All{Tasks: tasks, Ignored: ignored, Overall: ov, Mission: mission, DryRun: o.dryRun}); err != nil {
		return err
	}
	if ov.ExitCode == 0 {
		return nil
	}
	return &exitError{code: ov.ExitCode, silent: true}
}

// classify decides what --all does with one entry of the tasks directory. An entry left with an
// empty Outcome is to be gated (or re-checked, which gateTask decides under the task's lock).
func classify(p *project.Project, mission string, e project.TaskEntry) *report.AllTask {
	at := &report.AllTask{TaskID: e.Name}
	if e.Problem != "" {
		return unreadable(mission, at, e.Problem)
	}
	dir, err := p.Task(mission, e.Name)
	if errors.Is(err, project.ErrNoTask) {
		why := fmt.Sprintf("no .geas/%s/contract.json: a task without its contract cannot be judged", project.TaskDir(mission, e.Name))
		if _, serr := p.Geas.Stat(project.TaskDir(mission, e.Name) + "/record.json"); serr == nil {
			why += " (its record.json is there: the contract was removed after the task was recorded)"
		}
		return unreadable(mission, at, why)
	} else if err != nil {
		return unreadable(mission, at, err.Error())
	}
	k, err := contract.Load(p.Geas, dir+"/contract.json")
	if err != nil || k.TaskID != e.Name {
		return at // gated: the run reports the contract as invalid, an error verdict with its cause
	}
	at.State = k.Status
	switch {
	case k.Status == string(record.Cancelled):
		in := tiers.Gather(p, mission, e.Name, dir)
		ok, why := stateBacking(in, record.Cancelled)
		if !ok {
			return unreadable(mission, at, "state cancelled is not backed, so the task is counted: "+why)
		}
		at.Outcome, at.Reason = outcomeCancelled, "not counted: "+why
	case tiers.IsFinished(k.Status), slices.Contains(contract.EligibleStates(k.GateProfile), k.Status):
		// gated or re-checked
	default:
		at.Outcome = outcomeNotReady
		at.Reason = fmt.Sprintf("state %s; profile %s is gated from %s", k.Status, k.GateProfile, strings.Join(contract.EligibleStates(k.GateProfile), " or "))
	}
	return at
}

// unreadable makes at an error for a task the gate cannot read: a result with an error verdict
// and cause task_unreadable, never a pass, so every output format shows it.
func unreadable(mission string, at *report.AllTask, why string) *report.AllTask {
	at.Outcome, at.Reason = string(tiers.VerdictError), why
	at.Result = errorResult(mission, at.TaskID, tiers.CauseTaskUnreadable, "task_dir", why,
		"the task could not be read, so it was not gated; nothing was recorded")
	return at
}

// gateTasks gates tasks with a pool of jobs workers and returns the results in the order of tasks.
// A task whose run fails outright (a write error, a lock that cannot be taken) becomes an error
// result naming the failure, and the others go on; an interruption stops every run and is
// returned.
func gateTasks(ctx context.Context, tasks []*taskRef, jobs int, dryRun bool, progress tiers.Progress) ([]*tiers.Result, error) {
	results := make([]*tiers.Result, len(tasks))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(tasks)) {
		wg.Go(func() {
			for i := range next {
				res, err := gateTask(ctx, tasks[i], dryRun, labeled(progress, tasks[i].task))
				if err != nil {
					res = runFailed(tasks[i], err)
				}
				results[i] = res
			}
		})
	}
feed:
	for i := range tasks {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, tiers.ErrInterrupted
	}
	return results, nil
}

// runFailed is the result shown for a task whose gate run could not complete: an error verdict,
// never a pass (fail closed). Nothing of it was recorded.
func runFailed(t *taskRef, err error) *tiers.Result {
	return errorResult(t.mission, t.task, tiers.CauseGateRunFailed, "gate", err.Error(),
		"the gate run did not complete; nothing of it was recorded")
}

// errorResult is an error result that no gate run produced, with one cause and the one tier-0
// check it comes from, so that every output format (junit and github included) shows an error.
func errorResult(mission, task, code, check, detail, note string) *tiers.Result {
	text := "the gate run completes"
	if code == tiers.CauseTaskUnreadable {
		text = "the task directory entry can be read as a task (a directory with a contract.json)"
	}
	return &tiers.Result{
		MissionID: mission, TaskID: task, Verdict: tiers.VerdictError,
		TierResults: map[string]tiers.TierResult{
			"tier_0": {Status: tiers.StatusError, Details: "0 of 1 checks passed"},
			"tier_1": {Status: tiers.StatusSkipped, Details: "not run: tier 0 did not pass"},
			"tier_2": {Status: tiers.StatusSkipped, Details: "not run: tier 0 did not pass"},
		},
		Checks:       []tiers.Check{{Name: check, Tier: 0, Text: text, Status: tiers.StatusError, Blocking: true, Evidence: detail, Code: code}},
		Causes:       []tiers.Cause{{Code: code, Check: check, Detail: detail}},
		RubricScores: []tiers.RubricScore{}, BlockingDimensions: []string{}, EvalRuns: []tiers.EvalRun{},
		NextAction: tiers.NextInvestigateErr,
		Notes:      []string{note},
	}
}

// summarize computes the overall outcome over every task that is not cancelled: success when each
// passes, or, with a minimum pass rate, when that share passes; never with no such task. The exit
// code is 0 on success, else the worst outcome's (error 3 > block and not_ready 2 > fail 1; a
// recheck that does not hold counts 1, as geas gate on it exits), 1 when only the rate failed, and
// 2 when there was nothing to count.
func summarize(tasks []*report.AllTask, minRate float64) report.Overall {
	ov := report.Overall{MinPassRate: minRate,
		Counts: map[string]int{"pass": 0, "fail": 0, "block": 0, "error": 0, outcomeNotReady: 0, outcomeCancelled: 0}}
	worst := 0
	for _, t := range tasks {
		ov.Counts[t.Outcome]++
		switch {
		case t.Outcome == outcomeCancelled:
			continue
		case t.Outcome == outcomeNotReady:
			worst = max(worst, 2)
		case t.Result != nil && !t.Verdict.IsPass():
			worst = max(worst, tiers.ExitCode(t.Result))
		}
		ov.Counted++
	}
	n, passed := ov.Counted, ov.Counts["pass"]
	if n > 0 {
		ov.PassRate = float64(passed) / float64(n)
	}
	switch {
	case n == 0:
		ov.ExitCode = 2
		ov.Reason = fmt.Sprintf("no task to count (%d cancelled): nothing was gated, which is not a success", ov.Counts[outcomeCancelled])
	case minRate == 0:
		ov.Success = passed == n
		ov.Reason = fmt.Sprintf("%d of %d tasks pass; every task must pass", passed, n)
	default:
		ov.Success = ov.PassRate >= minRate
		cmp := ">="
		if !ov.Success {
			cmp = "<"
		}
		ov.Reason = fmt.Sprintf("%d of %d tasks pass: pass rate %.3g %s --min-pass-rate %.3g", passed, n, ov.PassRate, cmp, minRate)
	}
	if c := ov.Counts[outcomeCancelled]; c > 0 && n > 0 {
		ov.Reason += fmt.Sprintf(" (%d cancelled, not counted)", c)
	}
	if !ov.Success && n > 0 {
		ov.ExitCode = max(worst, 1)
	}
	return ov
}
