package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/geas-dev/geas/project"
)

// The environment a hook reads when no flag names the task or the mission. Claude Code runs hooks
// "in the current directory with Claude Code's environment" (hooks reference), so these are set
// where Claude Code is started, not by the agent.
const (
	envHookTask    = "GEAS_TASK"
	envHookMission = "GEAS_MISSION"
)

// Where a hook's task came from, as its messages name it.
const (
	sourceTaskFlag   = "--task"
	sourceHookTaskID = "the hook input's task_id"
	sourceEnvTask    = envHookTask
	sourceRunJSON    = ".geas/state/run.json current_task_id"
)

// hookTarget is the task a hook gates, or why it gates none.
type hookTarget struct {
	mission string // --mission, else GEAS_MISSION, else "" (the project's default mission)
	task    string // "" when no task was found (why says why) or it could not be read (err)
	source  string
	// notes say what was looked at and not used (a task_id that names no geas task).
	notes []string
	// err: the task could not be chosen because run.json, which agents write, cannot be read or
	// names an invalid id: the gate cannot run, and the hook holds the first stop.
	err error
	// why, when task and err are empty: what was looked at, for the message that allows the stop.
	why string
}

// label names the target in messages: "task t1", or where the task was to come from.
func (t hookTarget) label() string {
	if t.task != "" {
		return "task " + t.task
	}
	return "the task named by " + t.source
}

// selectHookTask picks the task a hook gates: --task if given; else, when useTaskID (the
// TaskCompleted hook), the hook input's task_id if it is a valid id that names a task of the
// mission; else GEAS_TASK; else the current_task_id of .geas/state/run.json; else none, and the
// hook allows the stop or the completion saying that the gate did not run. The mission is
// --mission, else GEAS_MISSION, else the project's default (run.json's mission_id).
//
// Hook input is never a path: a task_id that is not a valid id (../x, "t1\n") is not a task, and
// the hook says so and goes on with the next source. A --task, GEAS_TASK or GEAS_MISSION that is
// not a valid id is a mistake in the hook's configuration: a usage error (exit 64).
func (g *globalOptions) selectHookTask(o hookOptions, in hookInput, useTaskID bool) (hookTarget, error) {
	t := hookTarget{mission: o.mission}
	if t.mission == "" {
		t.mission = os.Getenv(envHookMission)
		if t.mission != "" {
			if err := project.ValidateID("mission", t.mission); err != nil {
				return t, usagef("%s: %v", envHookMission, err)
			}
		}
	} else if err := project.ValidateID("mission", t.mission); err != nil {
		return t, err
	}
	if o.task != "" {
		t.task, t.source = o.task, sourceTaskFlag
		return t, project.ValidateID("task", o.task)
	}
	looked := []string{"no --task"}
	if useTaskID {
		if id, ok := g.hookTaskID(&t, in); ok {
			t.task, t.source = id, sourceHookTaskID
			return t, nil
		}
		looked = append(looked, "no usable task_id in the hook input")
	}
	if env := os.Getenv(envHookTask); env != "" {
		t.task, t.source = env, sourceEnvTask
		if err := project.ValidateID("task", env); err != nil {
			return t, usagef("%s: %v", envHookTask, err)
		}
		return t, nil
	}
	looked = append(looked, envHookTask+" is not set")
	p, err := g.openProject()
	if err != nil {
		t.why = fmt.Sprintf("%s, and %v", strings.Join(looked, ", "), err)
		return t, nil
	}
	defer p.Close()
	t.source = sourceRunJSON
	if t.task, t.err = p.CurrentTask(); t.err != nil || t.task != "" {
		return t, nil
	}
	t.why = strings.Join(append(looked, ".geas/state/run.json names no current_task_id"), ", ")
	return t, nil
}

// hookTaskID returns the hook input's task_id when it is a valid id naming a task of the mission;
// otherwise it adds a note saying why it was not used.
func (g *globalOptions) hookTaskID(t *hookTarget, in hookInput) (string, bool) {
	switch {
	case in.TaskIDProblem != "":
		t.notes = append(t.notes, in.TaskIDProblem+", so it was not used")
		return "", false
	case in.TaskID == "":
		return "", false
	case !project.IsID(in.TaskID):
		t.notes = append(t.notes, fmt.Sprintf("the hook input's task_id %q is not a geas task id (ids match ^[A-Za-z0-9_-]+$), "+
			"so it names no task under .geas and was not used", in.TaskID))
		return "", false
	}
	p, mission, err := g.openMission(t.mission)
	if err != nil {
		t.notes = append(t.notes, fmt.Sprintf("the hook input's task_id %q was not looked up: %v", in.TaskID, err))
		return "", false
	}
	defer p.Close()
	// Anything at the task's path makes task_id the geas task, even without a contract.json: the
	// gate then says why it cannot run, so deleting a contract never turns a gated task into none.
	if _, err := p.Geas.Lstat(project.TaskDir(mission, in.TaskID)); errors.Is(err, fs.ErrNotExist) {
		t.notes = append(t.notes, fmt.Sprintf("the hook input's task_id %q names no geas task of mission %s (no .geas/%s), so it was not used",
			in.TaskID, mission, project.TaskDir(mission, in.TaskID)))
		return "", false
	}
	t.mission = mission
	return in.TaskID, true
}
