package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// allOutput is the --format json document of geas gate --all.
type allOutput struct {
	Tasks   []*allTask `json:"tasks"`
	Ignored []string   `json:"ignored,omitempty"` // hidden regular files in tasks/ (e.g. .DS_Store)
	Overall overall    `json:"overall"`
}

// allTask is one entry of the mission's tasks directory and its outcome: pass, fail, block or
// error for a task that was gated or re-checked (its result's fields inline), not_ready, cancelled,
// or error for an entry that cannot be read as a task (with a result naming why).
type allTask struct {
	TaskID  string `json:"task_id"`
	Outcome string `json:"outcome"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
	*tiers.Result
	ran bool // Result is a gate run or a recheck, not a stand-in for an unreadable entry
}

// Outcomes of --all that are not verdicts.
const (
	outcomeNotReady  = "not_ready"
	outcomeCancelled = "cancelled"
)

// overall is the mission-wide outcome of geas gate --all.
type overall struct {
	Success     bool           `json:"success"`
	PassRate    float64        `json:"pass_rate"`
	MinPassRate float64        `json:"min_pass_rate,omitempty"` // 0: every counted task must pass
	Counts      map[string]int `json:"counts"`
	Counted     int            `json:"counted"` // every task that is not cancelled
	ExitCode    int            `json:"exit_code"`
	Reason      string         `json:"reason"`
}

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
		tasks   []*allTask
		ignored []string
		refs    []*taskRef
		gated   []*allTask // tasks[i] for refs[i]
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
		gated[i].Result, gated[i].ran, gated[i].Outcome = res, true, string(res.Verdict)
	}

	ov := summarize(tasks, o.minPassRate)
	switch g.format {
	case formatJSON:
		if tasks == nil {
			tasks = []*allTask{}
		}
		if err := writeJSON(g.stdout, allOutput{Tasks: tasks, Ignored: ignored, Overall: ov}); err != nil {
			return err
		}
	case formatText:
		writeAllText(g.stdout, mission, tasks, ignored, ov, o.dryRun)
	default:
		var shown []*tiers.Result
		var others []string
		for _, t := range tasks {
			if t.Result != nil {
				shown = append(shown, t.Result)
			} else {
				others = append(others, fmt.Sprintf("%s %s: %s", t.TaskID, t.Outcome, t.Reason))
			}
		}
		if err := g.writeGate(shown); err != nil {
			return err
		}
		if g.format == formatJUnit {
			// stdout is one XML document: the other tasks and the overall line go to stderr.
			for _, l := range others {
				fmt.Fprintln(g.stderr, l)
			}
			fmt.Fprintln(g.stderr, overallLine(ov))
		} else {
			// Workflow commands, so that every task and the outcome show as annotations of the job.
			for _, t := range tasks {
				if t.Result == nil {
					fmt.Fprintf(g.stdout, "::warning title=%s/%s::%s\n", t.TaskID, t.Outcome, t.Reason)
				}
			}
			level := "notice"
			if !ov.Success {
				level = "error"
			}
			fmt.Fprintf(g.stdout, "::%s title=geas gate --all %s::%s\n", level, mission, overallLine(ov))
		}
	}
	if ov.ExitCode == 0 {
		return nil
	}
	return &exitError{code: ov.ExitCode, silent: true}
}

// classify decides what --all does with one entry of the tasks directory. An entry left with an
// empty Outcome is to be gated (or re-checked, which gateTask decides under the task's lock).
func classify(p *project.Project, mission string, e project.TaskEntry) *allTask {
	at := &allTask{TaskID: e.Name}
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
	at.State = string(k.Status)
	switch {
	case k.Status == vocab.Cancelled:
		in := tiers.Gather(p, mission, e.Name, dir)
		ok, why := stateBacking(in, vocab.Cancelled)
		if !ok {
			return unreadable(mission, at, "state cancelled is not backed, so the task is counted: "+why)
		}
		at.Outcome, at.Reason = outcomeCancelled, "not counted: "+why
	case k.Status.IsFinished(), slices.Contains(contract.EligibleStates(k.GateProfile), k.Status):
		// gated or re-checked
	default:
		at.Outcome = outcomeNotReady
		at.Reason = fmt.Sprintf("state %s; profile %s is gated from %s", k.Status, k.GateProfile, vocab.JoinStates(contract.EligibleStates(k.GateProfile), " or "))
	}
	return at
}

// unreadable makes at an error for a task the gate cannot read: a result with an error verdict
// and cause task_unreadable, never a pass, so every output format shows it.
func unreadable(mission string, at *allTask, why string) *allTask {
	at.Outcome, at.Reason = string(vocab.VerdictError), why
	at.Result = errorResult(mission, at.TaskID, vocab.CauseTaskUnreadable, "task_dir", why,
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
	return errorResult(t.mission, t.task, vocab.CauseGateRunFailed, "gate", err.Error(),
		"the gate run did not complete; nothing of it was recorded")
}

// errorResult is an error result that no gate run produced, with one cause and the one tier-0
// check it comes from, so that every output format (junit and github included) shows an error.
func errorResult(mission, task string, code vocab.CauseCode, check, detail, note string) *tiers.Result {
	text := "the gate run completes"
	if code == vocab.CauseTaskUnreadable {
		text = "the task directory entry can be read as a task (a directory with a contract.json)"
	}
	return &tiers.Result{
		MissionID: mission, TaskID: task, Verdict: vocab.VerdictError,
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
func summarize(tasks []*allTask, minRate float64) overall {
	ov := overall{MinPassRate: minRate,
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

func overallLine(ov overall) string {
	word := "success"
	if !ov.Success {
		word = "FAILURE"
	}
	return fmt.Sprintf("overall: %s: %s (exit %d)", word, ov.Reason, ov.ExitCode)
}

// writeAllText prints the summary table: one row per entry of the tasks directory with its
// outcome, budget and causes (or why it was not gated), the ignored files, and the overall line.
func writeAllText(w io.Writer, mission string, tasks []*allTask, ignored []string, ov overall, dryRun bool) {
	mode := ""
	if dryRun {
		mode = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "geas gate --all: mission %s, %d task(s), %d counted%s\n", mission, len(tasks), ov.Counted, mode)
	if len(tasks) > 0 {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tOUTCOME\tBUDGET\tCAUSES")
		for _, t := range tasks {
			outcome, budget, causes := t.Outcome, "-", terminalLine(t.Reason)
			if t.ran {
				budget = fmt.Sprintf("%s -> %s", tiers.BudgetText(t.RetryBudgetBefore), tiers.BudgetText(t.RetryBudgetAfter))
				if t.Recheck {
					outcome += " (recheck)"
				}
			}
			if t.Result != nil {
				var codes []string
				for _, c := range t.Causes {
					if !slices.Contains(codes, string(c.Code)) {
						codes = append(codes, string(c.Code))
					}
				}
				causes = strings.Join(codes, ", ")
				if !t.ran {
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
