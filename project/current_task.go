package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
)

// CurrentTask returns the current_task_id of .geas/state/run.json, the task geas v1's
// orchestrator is working on (its run-state schema: a string or null). It returns "" with a nil
// error when there is no run.json or it names no current task (the field is missing, null or
// ""), and an error when run.json cannot be read, is not one JSON object, holds a key that
// differs from current_task_id only by letter case (SPEC §2 invariant 8), or names an id that is
// not valid: run.json is written by agents, so its value is checked like any other id.
func (p *Project) CurrentTask() (string, error) {
	var run struct {
		CurrentTaskID *string `json:"current_task_id"`
	}
	if exists, err := p.readRun(&run); !exists || err != nil {
		return "", err
	}
	if run.CurrentTaskID == nil || *run.CurrentTaskID == "" {
		return "", nil
	}
	if err := ValidateID("task", *run.CurrentTaskID); err != nil {
		return "", fmt.Errorf(".geas/state/run.json current_task_id: %w", err)
	}
	return *run.CurrentTaskID, nil
}

// runLockFile serializes the writes of RunFile (geas task current).
const runLockFile = "state/run.lock"

// SetCurrentTask sets current_task_id of .geas/state/run.json to task, a task of mission that
// the caller checked exists, and keeps every other key of run.json (geas v1's run state) as it
// is. run.json without mission_id gets mission's; one naming another mission is refused, since
// the hooks read current_task_id as a task of run.json's mission. A run.json that is not one
// JSON object, or that holds a key differing from current_task_id or mission_id only by letter
// case, is refused and left as it is. The write is atomic, under .geas/state/run.lock.
func (p *Project) SetCurrentTask(ctx context.Context, mission, task string) error {
	if err := ValidateID("mission", mission); err != nil {
		return err
	}
	if err := ValidateID("task", task); err != nil {
		return err
	}
	if err := p.Geas.MkdirAll("state", 0o755); err != nil {
		return fmt.Errorf("create .geas/state: %w", err)
	}
	lock, err := fsutil.Acquire(ctx, p.Geas, runLockFile, ".geas/"+runLockFile)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	run := map[string]json.RawMessage{}
	b, err := fsutil.ReadLimited(p.Geas, RunFile, maxRunFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read .geas/state/run.json: %w", err)
	default:
		if err := json.Unmarshal(b, &run); err != nil || run == nil {
			return fmt.Errorf("read .geas/state/run.json: not one JSON object: nothing changed")
		}
	}
	for k := range run {
		for _, want := range []string{"current_task_id", "mission_id"} {
			if k != want && strings.EqualFold(k, want) {
				return fmt.Errorf(".geas/state/run.json holds key %q, which differs from %s only by letter case: nothing changed", k, want)
			}
		}
	}
	var runMission *string
	if raw, ok := run["mission_id"]; ok {
		if err := json.Unmarshal(raw, &runMission); err != nil {
			return fmt.Errorf(".geas/state/run.json mission_id is not a string: nothing changed")
		}
	}
	switch {
	case runMission == nil || *runMission == "":
		run["mission_id"], _ = json.Marshal(mission)
	case *runMission != mission:
		return fmt.Errorf("task %s is in mission %s, but .geas/state/run.json names mission %s (the hooks read current_task_id as a task of that mission): nothing changed", task, mission, *runMission)
	}
	run["current_task_id"], _ = json.Marshal(task)
	out, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("write .geas/state/run.json: %w", err)
	}
	if err := lock.Held(); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(p.Geas, RunFile, append(out, '\n'), 0o644); err != nil {
		return fmt.Errorf("write .geas/state/run.json: %w", err)
	}
	return nil
}
