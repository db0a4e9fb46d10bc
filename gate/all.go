package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// AllOptions are the choices of All.
type AllOptions struct {
	Jobs        int     // tasks gated at once, 1 or more
	DryRun      bool    // compute the verdicts and write nothing
	MinPassRate float64 // 0: every counted task must pass; else the share (0..1] that must
	// Progress gives the Progress of a task's run (its eval output, labeled); nil for none.
	Progress func(task string) tiers.Progress
}

// Mission is the outcome of All: the --format json document of geas gate --all.
type Mission struct {
	Tasks   []*MissionTask `json:"tasks"`
	Ignored []string       `json:"ignored,omitempty"` // hidden regular files in tasks/ (e.g. .DS_Store)
	Overall Overall        `json:"overall"`
}

// MissionTask is one entry of the mission's tasks directory and its outcome: pass, fail, block or
// error for a task that was gated or re-checked (its result's fields inline), not_ready, cancelled,
// or error for an entry that cannot be read as a task (with a result naming why).
type MissionTask struct {
	TaskID  string `json:"task_id"`
	Outcome string `json:"outcome"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
	*tiers.Result
	Ran bool `json:"-"` // Result is a gate run or a recheck, not a stand-in for an unreadable entry
}

// Outcomes of All that are not verdicts.
const (
	OutcomeNotReady  = "not_ready"
	OutcomeCancelled = "cancelled"
)

// Overall is the mission-wide outcome of All.
type Overall struct {
	Success     bool           `json:"success"`
	PassRate    float64        `json:"pass_rate"`
	MinPassRate float64        `json:"min_pass_rate,omitempty"` // 0: every counted task must pass
	Counts      map[string]int `json:"counts"`
	Counted     int            `json:"counted"` // every task that is not cancelled
	ExitCode    int            `json:"exit_code"`
	Reason      string         `json:"reason"`
}

// All accounts for every entry of the mission's tasks directory (SPEC §7.2): tasks in a
// gate-eligible state are gated and verified or passed ones re-checked, o.Jobs at a time (a
// recorded run gates a task after the tasks whose work its head builds on: gateInOrder); a task
// whose contract.json cannot be parsed is gated too, so that it ends in an error verdict;
// cancelled tasks are listed and not counted; tasks in any other state are not_ready; an entry
// that is not a readable task directory is an error. Nothing is silently left out. The error is
// an unknown mission (*UnknownMissionError), a tasks directory that cannot be read, or
// tiers.ErrInterrupted.
func All(ctx context.Context, p *project.Project, mission string, o AllOptions) (*Mission, error) {
	entries, err := p.TaskEntries(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &UnknownMissionError{Mission: mission}
	} else if err != nil {
		return nil, err
	}
	m := &Mission{}
	var todo []project.TaskEntry
	for _, e := range entries {
		if e.Ignored {
			m.Ignored = append(m.Ignored, e.Name)
			continue
		}
		todo = append(todo, e)
	}
	// Each worker triages an entry and gates it: the triage reads the contract too, so done
	// before the pool it was a serial share of every run that kept --jobs 2 from scaling.
	m.Tasks = make([]*MissionTask, len(todo))
	tasks := fsutil.OpenSubdir(p.Geas, project.MissionDir(mission)+"/tasks") // opened once
	defer tasks.Close()
	// The history checks read the event log through one index, which parses each line once a run;
	// a run that appends to the log never takes its metadata for its content (Exact).
	// The policy and the debt register are read through one handle each for all tasks (tiers.Shared).
	shared := tiers.NewShared(!o.DryRun)
	defer shared.Close()
	// A recorded run gates a task after the tasks whose work its head builds on (allorder.go):
	// the triage defers the tasks that judge a head, and they run once every entry is triaged.
	deferred := make([]*tiers.Loaded, len(todo))
	defer func() {
		for _, k := range deferred {
			if k != nil {
				k.Dir.Close()
				k.Held.Close()
			}
		}
	}()
	err = forEachAfter(ctx, len(todo), o.Jobs, nil, func(i int) {
		at, k := classify(p, tasks, mission, todo[i])
		if !o.DryRun && ordered(at, k) {
			m.Tasks[i], deferred[i] = at, k
			return
		}
		m.Tasks[i] = gateEntry(ctx, p, shared, mission, at, k, o)
	})
	if err == nil {
		err = gateInOrder(ctx, p, shared, mission, m.Tasks, deferred, o)
	}
	if err != nil {
		return nil, err
	}
	m.Overall = summarize(m.Tasks, o.MinPassRate)
	return m, nil
}

// classify decides what All does with one entry of the tasks directory. An entry left with an
// empty Outcome is to be gated (or re-checked, which Run decides under the task's lock); the
// contract as classify read it comes with it (nil when it did not read one), with the task
// directory it read it from (Loaded.Dir), which the caller closes. tasks is the mission's tasks
// directory (fsutil.Dir: its answers are those of .geas).
func classify(p *project.Project, tasks *fsutil.Dir, mission string, e project.TaskEntry) (*MissionTask, *tiers.Loaded) {
	at := &MissionTask{TaskID: e.Name}
	if e.Problem != "" {
		return unreadable(mission, at, e.Problem), nil
	}
	dir, err := p.TaskFrom(tasks, mission, e.Name)
	if errors.Is(err, project.ErrNoTask) {
		why := fmt.Sprintf("no .geas/%s/contract.json: a task without its contract cannot be judged", project.TaskDir(mission, e.Name))
		if _, serr := p.Geas.Stat(project.TaskDir(mission, e.Name) + "/record.json"); serr == nil {
			why += " (its record.json is there: the contract was removed after the task was recorded)"
		}
		return unreadable(mission, at, why), nil
	} else if err != nil {
		return unreadable(mission, at, err.Error()), nil
	}
	td := tasks.Subdir(e.Name)
	// Read through a handle kept open, so that the run, once it holds the task's lock, confirms
	// this read without opening the file again (sameContract).
	name := dir + "/" + record.ContractFile
	held, data, err := fsutil.Hold(p.Geas, name, contract.MaxBytes)
	var k *contract.Contract
	if err == nil {
		k, err = contract.Parse(name, data)
	} else {
		k, err = contract.LoadFrom(td, name) // the read's error, as contract.Load words it
	}
	loaded := &tiers.Loaded{Contract: k, Err: err, Dir: td, Held: held}
	if err != nil || k.TaskID != e.Name {
		return at, loaded // gated: the run reports the contract as invalid, an error verdict with its cause
	}
	at.State = string(k.Status)
	switch {
	case k.Status == vocab.Cancelled:
		in := tiers.GatherOwn(p, mission, e.Name, dir)
		ok, why := StateBacking(in, vocab.Cancelled)
		if !ok {
			td.Close()
			held.Close()
			return unreadable(mission, at, "state cancelled is not backed, so the task is counted: "+why), nil
		}
		at.Outcome, at.Reason = OutcomeCancelled, "not counted: "+why
	case k.Status.IsFinished(), slices.Contains(contract.EligibleStates(k.GateProfile), k.Status):
		// gated or re-checked
	default:
		at.Outcome = OutcomeNotReady
		at.Reason = fmt.Sprintf("state %s; profile %s is gated from %s", k.Status, k.GateProfile, vocab.JoinStates(contract.EligibleStates(k.GateProfile), " or "))
	}
	return at, loaded
}

// unreadable makes at an error for a task the gate cannot read: a result with an error verdict
// and cause task_unreadable, never a pass, so every output format shows it.
func unreadable(mission string, at *MissionTask, why string) *MissionTask {
	at.Outcome, at.Reason = string(vocab.VerdictError), why
	at.Result = tiers.ErrorResult(mission, at.TaskID, tiers.Check{Name: "task_dir", Tier: 0,
		Text:   "the task directory entry can be read as a task (a directory with a contract.json)",
		Status: tiers.StatusError, Blocking: true, Evidence: why, Code: vocab.CauseTaskUnreadable},
		"the task could not be read, so it was not gated; nothing was recorded")
	return at
}

// runFailed is the result shown for a task whose gate run could not complete: an error verdict,
// never a pass (fail closed). Nothing of it was recorded.
func runFailed(t Task, err error) *tiers.Result {
	return tiers.ErrorResult(t.Mission, t.ID, tiers.Check{Name: "gate", Tier: 0, Text: "the gate run completes",
		Status: tiers.StatusError, Blocking: true, Evidence: err.Error(), Code: vocab.CauseGateRunFailed},
		"the gate run did not complete; nothing of it was recorded")
}

// gateEntry runs the gate on an entry classify left to be gated (at with no Outcome; k as
// classify returned it, closed here), and returns at: an entry with an Outcome as it is. A task
// whose run fails outright (a write error, a lock that cannot be taken) becomes an error result
// naming the failure, and the others go on. shared is what the tasks share (tiers.Shared).
func gateEntry(ctx context.Context, p *project.Project, shared *tiers.Shared, mission string, at *MissionTask, k *tiers.Loaded, o AllOptions) *MissionTask {
	if k != nil {
		defer k.Dir.Close()
		defer k.Held.Close()
	}
	if at.Outcome != "" {
		return at
	}
	t := Task{Project: p, Mission: mission, ID: at.TaskID, Dir: project.TaskDir(mission, at.TaskID)}
	ro := Options{DryRun: o.DryRun, shared: shared}
	if o.Progress != nil {
		ro.Progress = o.Progress(t.ID)
	}
	// The triage's read of the contract, and its task directory, are the run's: as they are for
	// a dry run (which takes no lock); under the lock, once the run confirmed the contract.
	ro.contract = k
	res, err := runRecovered(ctx, t, ro)
	if err != nil {
		res = runFailed(t, err)
	}
	at.Result, at.Ran, at.Outcome = res, true, string(res.Verdict)
	return at
}

// runRecovered is Run with a panic turned into an error, so that a bug met on one task of --all
// makes that task an error result instead of ending the process (a panicking Go program exits 2,
// which reads as block). Run's deferred releases (the task lock) have run by then.
func runRecovered(ctx context.Context, t Task, o Options) (res *tiers.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("internal error (a bug in geas): %v", r)
		}
	}()
	if testPanic != nil {
		testPanic(t)
	}
	return Run(ctx, t, o)
}

// testPanic, when a test sets it, is called before each --all run (it may panic).
var testPanic func(Task)

// summarize computes the overall outcome over every task that is not cancelled: success when each
// passes, or, with a minimum pass rate, when that share passes; never with no such task. The exit
// code is 0 on success, else the worst outcome's (error 3 > block and not_ready 2 > fail 1; a
// recheck that does not hold counts 1, as geas gate on it exits), 1 when only the rate failed, and
// 2 when there was nothing to count.
func summarize(tasks []*MissionTask, minRate float64) Overall {
	ov := Overall{MinPassRate: minRate,
		Counts: map[string]int{"pass": 0, "fail": 0, "block": 0, "error": 0, OutcomeNotReady: 0, OutcomeCancelled: 0}}
	worst := 0
	for _, t := range tasks {
		ov.Counts[t.Outcome]++
		switch {
		case t.Outcome == OutcomeCancelled:
			continue
		case t.Outcome == OutcomeNotReady:
			worst = max(worst, vocab.VerdictBlock.ExitCode())
		case t.Result != nil && !t.Verdict.IsPass():
			worst = max(worst, ExitCode(t.Result))
		}
		ov.Counted++
	}
	n, passed := ov.Counted, ov.Counts["pass"]
	if n > 0 {
		ov.PassRate = float64(passed) / float64(n)
	}
	switch {
	case n == 0:
		ov.ExitCode = vocab.VerdictBlock.ExitCode()
		ov.Reason = fmt.Sprintf("no task to count (%d cancelled): nothing was gated, which is not a success", ov.Counts[OutcomeCancelled])
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
	if c := ov.Counts[OutcomeCancelled]; c > 0 && n > 0 {
		ov.Reason += fmt.Sprintf(" (%d cancelled, not counted)", c)
	}
	if !ov.Success && n > 0 {
		ov.ExitCode = max(worst, vocab.VerdictFail.ExitCode())
	}
	return ov
}
