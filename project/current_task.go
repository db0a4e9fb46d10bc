package project

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
)

// CurrentTask returns the current_task_id of .geas/state/run.json, the task geas v1's
// orchestrator is working on (its run-state schema: a string or null). It returns "" with a nil
// error when there is no run.json or it names no current task (the field is missing, null or
// ""), and an error when run.json cannot be read, is not one JSON object, holds a key that
// differs from current_task_id only by letter case (SPEC §2 invariant 8), or names an id that is
// not valid: run.json is written by agents, so its value is checked like any other id.
func (p *Project) CurrentTask() (string, error) {
	b, err := fsutil.ReadLimited(p.Geas, RunFile, maxRunFileBytes) // a named pipe is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read .geas/state/run.json: %w", err)
	}
	var run struct {
		CurrentTaskID *string `json:"current_task_id"`
	}
	if err := schemas.DecodeExact("", ".geas/state/run.json", b, &run); err != nil {
		return "", fmt.Errorf("read .geas/state/run.json: %w", err)
	}
	if run.CurrentTaskID == nil || *run.CurrentTaskID == "" {
		return "", nil
	}
	if err := ValidateID("task", *run.CurrentTaskID); err != nil {
		return "", fmt.Errorf(".geas/state/run.json current_task_id: %w", err)
	}
	return *run.CurrentTaskID, nil
}
