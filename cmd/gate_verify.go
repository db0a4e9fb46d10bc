package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/report"
	"github.com/geas-dev/geas/tiers"
)

type gateVerifyOptions struct {
	mission, task string
	all, apply    bool
}

func newGateVerifyCmd(g *globalOptions) *cobra.Command {
	var o gateVerifyOptions
	c := &cobra.Command{
		Use:   "verify (--task T | --all) [--mission M] [--apply]",
		Short: "Re-evaluate passed tasks against fresh evidence and check every task's history",
		Long: `Check the gate history of every task, whatever its state, and re-evaluate every task the
gate passed (state verified or passed), without writing anything:

  tampered  gate_history's hash chain does not verify (an entry was edited, inserted, removed
            or reordered), an entry's HMAC does not verify while GEAS_GATE_KEY is set, the
            budgets do not add up, record.json names another task, gate_result is not the
            chain's latest gate run (a hand-written gate_result, a dropped newest entry), a gate
            event of events.jsonl names an entry the history does not hold, or the task is
            verified or passed and its latest gate run is not a pass
  revoked   the records verify, but a fresh dry-run evaluation against today's evidence is
            not a pass (its causes are listed)
  intact    the records verify and the task still passes

One line per task; exit 1 if any task is revoked or tampered, else 0. With --all, tasks
that are not verified or passed and whose history verifies are listed as skipped.

--apply records each revocation (a revocation entry in gate_history, and revocation and
task_transition events) and moves a revoked verified task back to its profile's gate state:
implementation_change -> integrated, artifact_only and closure_ready -> reviewed. A passed
task is terminal: the revocation is recorded, its state is not changed. Tampered tasks are
never changed: their records are evidence to investigate.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runGateVerify(c.Context(), g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().BoolVar(&o.all, "all", false, "verify every task of the mission")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().BoolVar(&o.apply, "apply", false, "record revocations and move revoked tasks back to their gate state")
	return c
}

func runGateVerify(ctx context.Context, g *globalOptions, o gateVerifyOptions) error {
	switch {
	case o.all && o.task != "":
		return usagef("give --task or --all, not both")
	case !o.all && o.task == "":
		return usagef("--task or --all is required")
	}
	if o.task != "" {
		if err := project.ValidateID("task", o.task); err != nil {
			return err
		}
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	out := report.Verify{Tasks: []report.VerifiedTask{}, Skipped: []report.SkippedTask{}, Mission: mission, Apply: o.apply}
	var targets []verifyTarget
	if o.all {
		if targets, out.Skipped, err = verifyTargets(p, mission); err != nil {
			return err
		}
	} else {
		dir, err := p.Task(mission, o.task)
		if err != nil {
			return err
		}
		targets = []verifyTarget{{id: o.task, dir: dir}}
	}

	for _, tg := range targets {
		id, dir := tg.id, tg.dir
		if tg.problem != "" {
			out.Tampered++
			out.Tasks = append(out.Tasks, report.VerifiedTask{VerifyReport: unreadableReport(mission, tg)})
			continue
		}
		vt, err := verifyOne(ctx, p, mission, id, dir, o.apply)
		var np *tiers.NotPassedError
		switch {
		case errors.As(err, &np):
			out.Skipped = append(out.Skipped, report.SkippedTask{TaskID: id, Reason: skipReason(np)})
			continue
		case errors.Is(err, tiers.ErrInterrupted):
			return &exitError{code: 3, err: err}
		case err != nil:
			return fmt.Errorf("verify task %s: %w", id, err)
		}
		switch vt.Status {
		case tiers.VerifyIntact:
			out.Intact++
		case tiers.VerifyRevoked:
			out.Revoked++
		case tiers.VerifyTampered:
			out.Tampered++
		}
		out.Tasks = append(out.Tasks, vt)
	}

	if err := g.writeVerify(&out); err != nil {
		return err
	}
	if out.Revoked+out.Tampered > 0 {
		return &exitError{code: 1, silent: true}
	}
	return nil
}

// verifyTarget is one entry that geas gate verify --all (and the MCP verify tool) accounts for: a
// task to verify (dir set), or an entry of the tasks directory that cannot be read as a task
// (problem set).
type verifyTarget struct {
	id, dir, problem string
}

// verifyTargets lists every entry of the mission's tasks directory, so that no task is left out
// (SPEC §9: every task that has a history or a gate_result, whatever its state). A task directory
// with a contract is verified, and so is one whose contract is gone but whose record.json is there
// (deleted after a recorded run); an entry that cannot be a task (a symlink, a file, a bad name)
// is a problem, reported as tampered; a directory with neither file has nothing to verify.
func verifyTargets(p *project.Project, mission string) ([]verifyTarget, []report.SkippedTask, error) {
	entries, err := p.TaskEntries(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, usagef("no mission %q (no .geas/%s/tasks directory)", mission, project.MissionDir(mission))
	}
	if err != nil {
		return nil, nil, err
	}
	var targets []verifyTarget
	skipped := []report.SkippedTask{}
	for _, e := range entries {
		switch {
		case e.Ignored:
			continue
		case e.Problem != "":
			targets = append(targets, verifyTarget{id: e.Name, problem: e.Problem})
			continue
		}
		dir, err := p.Task(mission, e.Name)
		switch {
		case errors.Is(err, project.ErrNoTask):
			dir = project.TaskDir(mission, e.Name)
			_, serr := p.Geas.Lstat(dir + "/record.json")
			_, herr := p.Geas.Lstat(dir + "/" + record.HistoryFile)
			if serr != nil && herr != nil {
				skipped = append(skipped, report.SkippedTask{TaskID: e.Name, Reason: "no contract.json, no record.json and no " + record.HistoryFile})
				continue
			}
		case err != nil:
			targets = append(targets, verifyTarget{id: e.Name, problem: err.Error()})
			continue
		}
		targets = append(targets, verifyTarget{id: e.Name, dir: dir})
	}
	return targets, skipped, nil
}

// unreadableReport is the report of an entry that cannot be read as a task: it is counted as
// tampered (something that is not the gate's layout stands where a task would be), never skipped.
func unreadableReport(mission string, tg verifyTarget) *tiers.VerifyReport {
	return &tiers.VerifyReport{MissionID: mission, TaskID: tg.id, Status: tiers.VerifyTampered,
		Problems: []string{"cannot be read as a task, so its records cannot be verified: " + tg.problem}}
}

func skipReason(np *tiers.NotPassedError) string {
	reason := "state " + np.State + ", not verified or passed"
	if np.State == "" {
		reason = "contract.json cannot be read and the history holds no pass"
	}
	if np.History != "" {
		reason += "; its history verifies: " + np.History
	}
	return reason
}

// verifyOne verifies one task; with apply it holds the task lock across the verification and the
// writes, so what is recorded is what was verified.
func verifyOne(ctx context.Context, p *project.Project, mission, task, dir string, apply bool) (report.VerifiedTask, error) {
	if !apply {
		rep, err := tiers.VerifyTask(ctx, p, mission, task, dir)
		return report.VerifiedTask{VerifyReport: rep}, err
	}
	lock, err := record.LockTask(ctx, p.Geas, dir)
	if err != nil {
		return report.VerifiedTask{}, err
	}
	defer lock.Unlock()
	// SPEC §7.3: a revocation (or a run) cut short is completed before the task is verified again.
	if _, err := tiers.Complete(p.Geas, mission, task, dir, time.Now()); err != nil {
		return report.VerifiedTask{}, fmt.Errorf("task %s: complete the last recorded entry: %w", task, err)
	}
	rep, err := tiers.VerifyTask(ctx, p, mission, task, dir)
	if err != nil {
		return report.VerifiedTask{}, err
	}
	vt := report.VerifiedTask{VerifyReport: rep}
	switch rep.Status {
	case tiers.VerifyTampered:
		vt.Applied = &report.AppliedRevocation{Note: "tampered records are never changed by --apply: investigate them"}
	case tiers.VerifyRevoked:
		vt.Applied, err = applyRevocation(p, dir, rep, time.Now())
	}
	return vt, err
}

// applyRevocation records a revocation and moves a verified task back to its gate state. The
// caller holds the task lock. Writes go record, contract, events, each atomic, as a gate run's do.
func applyRevocation(p *project.Project, dir string, rep *tiers.VerifyReport, now time.Time) (*report.AppliedRevocation, error) {
	res := rep.Result
	recName := dir + "/record.json"
	rec, err := record.Load(p.Geas, recName)
	if err != nil {
		return nil, err
	}
	applied := &report.AppliedRevocation{}

	// A passed task stays passed, so a second --apply would record the same revocation again.
	hist := rec.History()
	if n := len(hist); n > 0 && hist[n-1].Kind == record.KindRevocation && hist[n-1].InputsSHA256 == res.InputsSHA256 && hist[n-1].Verdict == string(res.Verdict) {
		applied.Hash = hist[n-1].Hash
		applied.Note = fmt.Sprintf("revocation %s already recorded for these inputs", hist[n-1].RunID)
		return applied, nil
	}

	causes, err := json.Marshal(rep.Causes)
	if err != nil {
		return nil, err
	}
	revokes := ""
	for i := len(hist) - 1; i >= 0; i-- {
		if k := hist[i].Kind; (k == "" || k == record.KindGateRun) && hist[i].Verdict == "pass" {
			revokes = hist[i].RunID
			break
		}
	}
	entry := record.HistoryEntry{
		Kind: record.KindRevocation, RunID: res.RunID, Verdict: string(res.Verdict), Causes: causes,
		Head: res.Head, InputsSHA256: res.InputsSHA256, RulesSHA256: res.RulesSHA256, StartedAt: res.StartedAt,
		Extra: map[string]json.RawMessage{"state": jsonString(rep.State)},
	}
	if revokes != "" {
		entry.Extra["revokes"] = jsonString(revokes)
	}
	entry, err = rec.AppendHistory(entry, now)
	if err != nil {
		return nil, err
	}
	// The entry appended is the commit point (SPEC §7.3): what follows is derived from it, and
	// what fails after it is a note, completed by the next command on the task.
	if err := rec.Write(p.Geas, recName); err != nil && !rec.Recorded(entry.Hash) {
		return nil, fmt.Errorf("record the revocation: %w", err)
	}
	applied.Recorded, applied.Hash = true, entry.Hash
	var notes []string

	switch from := record.State(rep.State); from {
	case record.Verified:
		k, err := contract.Load(p.Geas, dir+"/contract.json")
		if err != nil {
			notes = append(notes, fmt.Sprintf("contract.json cannot be read (%v): the state is not changed", err))
			break
		}
		to := tiers.GateState(k.GateProfile)
		if err := record.CheckTransition(from, to, true); err != nil {
			return nil, err
		}
		updated, err := record.SetContractStatus(k.Raw, to, now)
		if err != nil {
			return nil, err
		}
		if err := fsutil.WriteFileAtomic(p.Geas, dir+"/contract.json", updated, 0o644); err != nil {
			notes = append(notes, fmt.Sprintf("the task was not moved %s -> %s (%v): the next command on the task completes it", from, to, err))
			break
		}
		applied.Transition = &tiers.Transition{From: string(from), To: string(to)}
	case record.Passed:
		notes = append(notes, "passed is terminal: the revocation is recorded, the state is not changed")
	default:
		notes = append(notes, "contract.json cannot be read: the revocation is recorded, the state is not changed")
	}

	ev, err := tiers.RevocationEvent(rep.MissionID, rep.TaskID, entry, rep.State)
	if err != nil {
		return nil, err
	}
	events := []record.Event{ev}
	if t := applied.Transition; t != nil {
		ev, err := tiers.RevocationTransitionEvent(rep.MissionID, rep.TaskID, res.RunID, t.From, t.To, entry.Hash)
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	for _, ev := range events {
		if err := record.AppendEvent(p.Geas, ev); err != nil {
			notes = append(notes, fmt.Sprintf("the %s event was not logged (%v): the next command on the task logs it", ev.EventType, err))
			break
		}
	}
	applied.Note = strings.Join(notes, "; ")
	return applied, nil
}
