package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Verification is what Verify found over a mission, or one task of it: the --format json document
// of geas gate verify.
type Verification struct {
	Tasks    []Verified `json:"tasks"`
	Intact   int        `json:"intact"`
	Revoked  int        `json:"revoked"`
	Tampered int        `json:"tampered"`
	Skipped  []Skipped  `json:"skipped"`
}

// Verified is a task's report, with what Revoke did about it.
type Verified struct {
	*VerifyReport
	Applied *Revocation `json:"applied,omitempty"`
}

// Revocation is what Revoke did for one task.
type Revocation struct {
	Recorded   bool              `json:"recorded"`             // a revocation entry was appended
	Hash       string            `json:"hash,omitempty"`       // its hash
	Transition *tiers.Transition `json:"transition,omitempty"` // the move back, if any
	Note       string            `json:"note,omitempty"`       // why less was done
}

// Skipped is a task verify did not apply to.
type Skipped struct {
	TaskID string `json:"task_id"`
	Reason string `json:"reason"`
}

// UnknownMissionError is a mission that has no tasks directory.
type UnknownMissionError struct{ Mission string }

func (e *UnknownMissionError) Error() string {
	return fmt.Sprintf("no mission %q (no .geas/%s/tasks directory)", e.Mission, project.MissionDir(e.Mission))
}

// Verify re-checks the task named task of the mission, or every task of it when task is "" (SPEC
// §2.5, §9: the history of every task, a fresh dry-run evaluation of every task the gate passed).
// With apply, each revoked task's revocation is recorded (Revoke). Tasks the gate has not passed
// and whose history verifies are skipped. The error is tiers.ErrInterrupted, an unknown mission
// (*UnknownMissionError) or a task that could not be verified at all.
func Verify(ctx context.Context, p *project.Project, mission, task string, apply bool) (*Verification, error) {
	out := &Verification{Tasks: []Verified{}, Skipped: []Skipped{}}
	var targets []target
	if task == "" {
		var err error
		if targets, out.Skipped, err = listTargets(p, mission); err != nil {
			return nil, err
		}
	} else {
		dir, err := p.Task(mission, task)
		if err != nil {
			return nil, p.ListTasks(err)
		}
		targets = []target{{id: task, dir: dir}}
	}
	// One index of the event log for every task's history checks; --apply appends revocations to
	// the log, so it is then never answered from the log's metadata (record.EventIndex).
	events := &record.EventIndex{Exact: apply}
	defer events.Close()
	for _, tg := range targets {
		if tg.problem != "" {
			out.Tampered++
			out.Tasks = append(out.Tasks, Verified{VerifyReport: unreadableReport(mission, tg)})
			continue
		}
		vt, err := verifyOne(ctx, Task{Project: p, Mission: mission, ID: tg.id, Dir: tg.dir}, apply, events)
		var np *NotPassedError
		switch {
		case errors.As(err, &np):
			out.Skipped = append(out.Skipped, Skipped{tg.id, skipReason(np)})
			continue
		case errors.Is(err, tiers.ErrInterrupted):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("verify task %s: %w", tg.id, err)
		}
		switch vt.Status {
		case VerifyIntact:
			out.Intact++
		case VerifyRevoked:
			out.Revoked++
		case VerifyTampered:
			out.Tampered++
		}
		out.Tasks = append(out.Tasks, vt)
	}
	return out, nil
}

// target is one entry that Verify accounts for: a task to verify (dir set), or an entry of the
// tasks directory that cannot be read as a task (problem set).
type target struct {
	id, dir, problem string
}

// listTargets lists every entry of the mission's tasks directory, so that no task is left out
// (SPEC §9: every task that has a history or a gate_result, whatever its state). A task directory
// with a contract is verified, and so is one whose contract is gone but whose record.json is there
// (deleted after a recorded run); an entry that cannot be a task (a symlink, a file, a bad name)
// is a problem, reported as tampered; a directory with neither file has nothing to verify.
func listTargets(p *project.Project, mission string) ([]target, []Skipped, error) {
	entries, err := p.TaskEntries(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &UnknownMissionError{Mission: mission}
	}
	if err != nil {
		return nil, nil, err
	}
	var targets []target
	skipped := []Skipped{}
	for _, e := range entries {
		switch {
		case e.Ignored:
			continue
		case e.Problem != "":
			targets = append(targets, target{id: e.Name, problem: e.Problem})
			continue
		}
		dir, err := p.Task(mission, e.Name)
		switch {
		case errors.Is(err, project.ErrNoTask):
			dir = project.TaskDir(mission, e.Name)
			_, serr := p.Geas.Lstat(dir + "/" + record.RecordFile)
			_, herr := p.Geas.Lstat(dir + "/" + record.HistoryFile)
			if serr != nil && herr != nil {
				skipped = append(skipped, Skipped{e.Name, "no contract.json, no record.json and no " + record.HistoryFile})
				continue
			}
		case err != nil:
			targets = append(targets, target{id: e.Name, problem: err.Error()})
			continue
		}
		targets = append(targets, target{id: e.Name, dir: dir})
	}
	return targets, skipped, nil
}

// unreadableReport is the report of an entry that cannot be read as a task: it is counted as
// tampered (something that is not the gate's layout stands where a task would be), never skipped.
func unreadableReport(mission string, tg target) *VerifyReport {
	return &VerifyReport{MissionID: mission, TaskID: tg.id, Status: VerifyTampered,
		Problems: []string{"cannot be read as a task, so its records cannot be verified: " + tg.problem}}
}

func skipReason(np *NotPassedError) string {
	reason := "state " + np.State + ", not verified or passed"
	if np.State == "" {
		reason = "contract.json cannot be read and the history holds no pass"
	}
	if np.History != "" {
		reason += "; its history verifies: " + np.History
	}
	return reason
}

// verifyOne verifies one task, reading the event log through events; with apply it is Revoke.
func verifyOne(ctx context.Context, t Task, apply bool, events *record.EventIndex) (Verified, error) {
	if apply {
		return revoke(ctx, t, events)
	}
	rep, err := verifyTask(ctx, t.Project, t.Mission, t.ID, t.Dir, events)
	return Verified{VerifyReport: rep}, err
}

// Revoke verifies one task and, when its pass no longer holds, records the revocation (geas gate
// verify --apply): it holds the task lock across the verification and the writes, so what is
// recorded is what was verified. Tampered records are never changed. An error wrapping
// ErrNotPassed means the task has no pass to revoke.
func Revoke(ctx context.Context, t Task) (Verified, error) {
	return revoke(ctx, t, nil)
}

// revoke is Revoke with the event log read through events (nil: read by each check).
func revoke(ctx context.Context, t Task, events *record.EventIndex) (Verified, error) {
	lock, _, err := Lock(ctx, t) // SPEC §7.3: a revocation (or a run) cut short is completed first
	if err != nil {
		return Verified{}, err
	}
	defer lock.Unlock()
	rep, err := verifyTask(ctx, t.Project, t.Mission, t.ID, t.Dir, events)
	if err != nil {
		return Verified{}, err
	}
	vt := Verified{VerifyReport: rep}
	switch rep.Status {
	case VerifyTampered:
		vt.Applied = &Revocation{Note: "tampered records are never changed by --apply: investigate them"}
	case VerifyRevoked:
		vt.Applied, err = applyRevocation(t, rep, time.Now(), lock.Held)
	}
	return vt, err
}

// applyRevocation records a revocation and moves a verified task back to its gate state. The
// caller holds the task lock. Writes go record, contract, events, each atomic, as a gate run's do
// (tiers.Apply): the entry appended is the commit point (SPEC §7.3), and what fails after it is a
// note, completed by the next command on the task (Complete). held says whether the lock is still
// held (nil: not checked); nothing is written once it fails.
func applyRevocation(t Task, rep *VerifyReport, now time.Time, held func() error) (*Revocation, error) {
	res := rep.Result
	recName := t.Dir + "/" + record.RecordFile
	rec, err := record.Load(t.Project.Geas, recName)
	if err != nil {
		return nil, err
	}
	rec.Guard(held) // nil: not checked
	// A passed task stays passed, so a second --apply would record the same revocation again.
	hist := rec.History()
	if n := len(hist); n > 0 && hist[n-1].Kind == record.KindRevocation && hist[n-1].InputsSHA256 == res.InputsSHA256 && hist[n-1].Verdict == string(res.Verdict) {
		return &Revocation{Hash: hist[n-1].Hash, Note: fmt.Sprintf("revocation %s already recorded for these inputs", hist[n-1].RunID)}, nil
	}
	entry, err := revocationEntry(hist, rep)
	if err != nil {
		return nil, err
	}
	if entry, err = rec.AppendHistory(entry, now); err != nil {
		return nil, err
	}
	if err := rec.Write(t.Project.Geas, recName); err != nil && !rec.Recorded(entry.Hash) {
		return nil, fmt.Errorf("record the revocation: %w", err)
	}
	applied := &Revocation{Recorded: true, Hash: entry.Hash}
	var notes []string
	if applied.Transition, notes, err = afterRevocation(t, rep, entry, now, held); err != nil {
		return nil, err
	}
	applied.Note = strings.Join(notes, "; ")
	return applied, nil
}

// revocationEntry is the history entry of a revocation: the fresh run's verdict, causes and
// inputs, the state revoked, and the run id of the pass it revokes.
func revocationEntry(hist []record.HistoryEntry, rep *VerifyReport) (record.HistoryEntry, error) {
	res := rep.Result
	causes, err := json.Marshal(rep.Causes)
	if err != nil {
		return record.HistoryEntry{}, err
	}
	revokes := ""
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].IsGateRun() && tiers.RecordsPass(hist[i]) {
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
	return entry, nil
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
