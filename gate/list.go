package gate

import (
	"errors"
	"io/fs"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

// Listing is what geas gate --all --list prints: every entry of the mission's tasks directory
// and what geas gate --all would do with it, without running anything. A CI engine that gates
// one task per job plans from it: Eligible are the tasks to give a job each, and Counted the
// tasks whose pass the mission's success needs (every task that is not cancelled), so a task
// that gets no job (not ready, unreadable) or whose job never reports still fails the mission.
type Listing struct {
	MissionID string         `json:"mission_id"`
	Tasks     []*ListedTask  `json:"tasks"`
	Ignored   []string       `json:"ignored,omitempty"`
	Eligible  []string       `json:"eligible"`
	Counted   []string       `json:"counted"`
	Counts    map[string]int `json:"counts"` // by action
}

// ListedTask is one entry of the tasks directory and what geas gate --all would do with it.
type ListedTask struct {
	TaskID string `json:"task_id"`
	State  string `json:"state,omitempty"`
	// Action is gate (a gate-eligible state, or a contract that does not parse: the run reports
	// it), recheck (verified or passed), not_ready, cancelled, or error (an entry that cannot be
	// read as a task).
	Action   string `json:"action"`
	Eligible bool   `json:"eligible"` // gate or recheck: geas gate --task on it decides
	Counted  bool   `json:"counted"`  // not cancelled: the mission succeeds only if it passes
	Reason   string `json:"reason,omitempty"`
}

// Actions of a listed task besides the outcomes not_ready and cancelled.
const (
	ActionGate    = "gate"
	ActionRecheck = "recheck"
	ActionError   = "error"
)

// List says, for every entry of the mission's tasks directory, what All would do with it, as All
// decides it (the same classification), and runs nothing. The error is an unknown mission
// (*UnknownMissionError) or a tasks directory that cannot be read.
func List(p *project.Project, mission string) (*Listing, error) {
	entries, err := p.TaskEntries(mission)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &UnknownMissionError{Mission: mission}
	} else if err != nil {
		return nil, err
	}
	l := &Listing{MissionID: mission, Tasks: []*ListedTask{}, Eligible: []string{}, Counted: []string{},
		Counts: map[string]int{ActionGate: 0, ActionRecheck: 0, OutcomeNotReady: 0, OutcomeCancelled: 0, ActionError: 0}}
	tasks := fsutil.OpenSubdir(p.Geas, project.MissionDir(mission)+"/tasks") // opened once
	defer tasks.Close()
	for _, e := range entries {
		if e.Ignored {
			l.Ignored = append(l.Ignored, e.Name)
			continue
		}
		at, k := classify(p, tasks, mission, e)
		if k != nil {
			k.Dir.Close()
		}
		t := &ListedTask{TaskID: e.Name, State: at.State, Action: at.Outcome, Reason: at.Reason}
		switch {
		case at.Outcome != "" && at.Outcome != OutcomeNotReady && at.Outcome != OutcomeCancelled:
			t.Action = ActionError // unreadable: All shows it as an error result
		case at.Outcome != "":
		case vocab.State(at.State).IsFinished():
			t.Action, t.Eligible = ActionRecheck, true
		default:
			t.Action, t.Eligible = ActionGate, true
		}
		t.Counted = t.Action != OutcomeCancelled
		if t.Eligible {
			l.Eligible = append(l.Eligible, t.TaskID)
		}
		if t.Counted {
			l.Counted = append(l.Counted, t.TaskID)
		}
		l.Counts[t.Action]++
		l.Tasks = append(l.Tasks, t)
	}
	return l, nil
}
