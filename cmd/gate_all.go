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
)

// allOutput is the --format json document of geas gate --all.
type allOutput struct {
	Tasks   []*tiers.Result `json:"tasks"`
	Overall overall         `json:"overall"`
}

// overall is the mission-wide outcome of geas gate --all.
type overall struct {
	Success     bool           `json:"success"`
	PassRate    float64        `json:"pass_rate"`
	MinPassRate float64        `json:"min_pass_rate,omitempty"` // 0: every eligible task must pass
	Counts      map[string]int `json:"counts"`
	Eligible    int            `json:"eligible"`
	Skipped     []string       `json:"skipped"`
	ExitCode    int            `json:"exit_code"`
	Reason      string         `json:"reason"`
}

// runGateAll gates every gate-eligible task of the mission, o.jobs at a time, and reports the
// mission-wide outcome. A task is eligible when its state is one its profile is gated from
// (contract.EligibleStates); a task whose contract.json cannot be read is gated too, so that it
// ends in an error verdict rather than in silence.
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
	ids, err := missionTasks(p, mission)
	if err != nil {
		return err
	}
	var eligible []*taskRef
	skipped := []string{}
	var why []string // "id (reason)", for the text output
	for _, id := range ids {
		dir, err := p.Task(mission, id)
		if errors.Is(err, project.ErrNoTask) {
			skipped, why = append(skipped, id), append(why, id+" (no contract.json)")
			continue
		} else if err != nil {
			return err
		}
		if k, err := contract.Load(p.Geas, dir+"/contract.json"); err == nil && !slices.Contains(contract.EligibleStates(k.GateProfile), k.Status) {
			skipped, why = append(skipped, id), append(why, id+" ("+k.Status+")")
			continue
		}
		eligible = append(eligible, &taskRef{p: p, mission: mission, task: id, dir: dir})
	}

	// Live output of one task's eval commands is useful; several tasks' interleaved is not.
	var progress tiers.Progress
	if o.jobs == 1 {
		progress = g.progress(o.quiet)
	}
	results, err := gateTasks(c.Context(), eligible, o.jobs, o.dryRun, progress)
	if err != nil {
		return &exitError{code: 3, err: err}
	}

	ov := summarize(results, skipped, o.minPassRate)
	switch g.format {
	case formatJSON:
		if err := writeJSON(g.stdout, allOutput{Tasks: results, Overall: ov}); err != nil {
			return err
		}
	case formatText:
		writeAllText(g.stdout, mission, results, ov, why, o.dryRun)
	default:
		if err := g.writeGate(results); err != nil {
			return err
		}
		if g.format == formatJUnit {
			// stdout is one XML document: the overall line goes to stderr.
			fmt.Fprintln(g.stderr, overallLine(ov))
		} else {
			// A workflow command, so that the outcome shows as an annotation of the job.
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

// missionTasks lists the mission's tasks in task-id order; a mission without a tasks directory is
// a usage error.
func missionTasks(p *project.Project, mission string) ([]string, error) {
	ids, err := p.Tasks(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("no mission %q (no .geas/%s/tasks directory)", mission, project.MissionDir(mission))
	}
	// Sorted here as well: the order is part of the output, whatever order the directory lists.
	slices.Sort(ids)
	return ids, err
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
	return &tiers.Result{
		MissionID: t.mission, TaskID: t.task, Verdict: tiers.VerdictError,
		TierResults: map[string]tiers.TierResult{}, Checks: []tiers.Check{},
		Causes:       []tiers.Cause{{Code: "gate_run_failed", Check: "gate", Detail: err.Error()}},
		RubricScores: []tiers.RubricScore{}, BlockingDimensions: []string{}, EvalRuns: []tiers.EvalRun{},
		NextAction: tiers.NextInvestigateErr,
		Notes:      []string{"the gate run did not complete; nothing of it was recorded"},
	}
}

// summarize computes the overall outcome: success when every eligible task passes, or, with a
// minimum pass rate, when that share passes; never with no eligible task. The exit code is 0 on
// success, else the worst verdict's (error 3 > block 2 > fail 1), 1 when only the rate failed,
// and 2 (block) when there was nothing to gate.
func summarize(results []*tiers.Result, skipped []string, minRate float64) overall {
	ov := overall{MinPassRate: minRate, Eligible: len(results), Skipped: skipped,
		Counts: map[string]int{"pass": 0, "fail": 0, "block": 0, "error": 0}}
	worst := 0
	for _, r := range results {
		if r.Verdict.IsPass() {
			ov.Counts["pass"]++
			continue
		}
		ov.Counts[string(r.Verdict)]++
		worst = max(worst, r.Verdict.ExitCode())
	}
	n, passed := len(results), ov.Counts["pass"]
	if n > 0 {
		ov.PassRate = float64(passed) / float64(n)
	}
	switch {
	case n == 0:
		ov.ExitCode = 2
		ov.Reason = fmt.Sprintf("no gate-eligible task (%d skipped): nothing was gated, which is not a success", len(skipped))
	case minRate == 0:
		ov.Success = passed == n
		ov.Reason = fmt.Sprintf("%d of %d eligible tasks pass; every task must pass", passed, n)
	default:
		ov.Success = ov.PassRate >= minRate
		cmp := ">="
		if !ov.Success {
			cmp = "<"
		}
		ov.Reason = fmt.Sprintf("%d of %d eligible tasks pass: pass rate %.3g %s --min-pass-rate %.3g", passed, n, ov.PassRate, cmp, minRate)
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

// writeAllText prints the summary table: one row per eligible task with its verdict, budget and
// causes, the skipped tasks, and the overall line.
func writeAllText(w io.Writer, mission string, results []*tiers.Result, ov overall, skipped []string, dryRun bool) {
	mode := ""
	if dryRun {
		mode = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "geas gate --all: mission %s, %d eligible task(s)%s\n", mission, len(results), mode)
	if len(results) > 0 {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tVERDICT\tBUDGET\tCAUSES")
		for _, r := range results {
			var codes []string
			for _, c := range r.Causes {
				if !slices.Contains(codes, c.Code) {
					codes = append(codes, c.Code)
				}
			}
			causes := strings.Join(codes, ", ")
			if causes == "" {
				causes = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s -> %s\t%s\n", r.TaskID, r.Verdict, tiers.BudgetText(r.RetryBudgetBefore), tiers.BudgetText(r.RetryBudgetAfter), causes)
		}
		tw.Flush()
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped, not gate-eligible: %s\n", strings.Join(skipped, ", "))
	}
	fmt.Fprintln(w, overallLine(ov))
}
