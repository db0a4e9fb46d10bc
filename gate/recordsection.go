package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/record"
)

// Section is one section of a task's record.json as an agent writes it (geas task record add).
type Section struct {
	Name    string
	Payload []byte // the section's JSON value
}

// SectionWritten is what SetSection wrote.
type SectionWritten struct {
	Record string   // record.json, relative to .geas
	Notes  []string // what taking the task's lock completed or could not write
}

// SetSection writes one section of the task's record.json under its lock: the whole record is
// validated before anything is written, and gate_result and gate_history, which only the gate
// writes, are refused. The result is never nil: its notes stand also with an error.
func SetSection(ctx context.Context, t Task, s Section) (*SectionWritten, error) {
	out := &SectionWritten{}
	lock, notes, err := Lock(ctx, t)
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	now := time.Now()
	name, rec, err := LoadRecord(t, now)
	if err != nil {
		return out, err
	}
	out.Record = name
	rec.Guard(lock.Held) // SPEC §7.3: nothing is written once the lock file is replaced
	if !json.Valid(s.Payload) {
		return out, fmt.Errorf("section %s: payload is not valid JSON", s.Name)
	}
	if err := rec.SetSection(s.Name, s.Payload, now); err != nil {
		return out, err
	}
	return out, rec.Write(t.Project.Geas, name)
}

// Integration is where a task's work was merged (geas task integrate).
type Integration struct {
	Commit string // any revision the project's repository names
	Branch string
	Status string // one of IntegrationStatuses
}

// Integrated is what Integrate wrote.
type Integrated struct {
	Commit string // the full SHA Commit named
	File   string // integration.json, relative to .geas
	// Replaced is why an integration.json that could not be read was replaced (nil: none was).
	Replaced error
	Notes    []string // what taking the task's lock completed or could not write
}

// Integrate writes the task's integration.json under its lock, the commit resolved in the
// project's repository and recorded as the full SHA it names, so a branch that moves later does
// not change what was integrated. An integration.json that cannot be read is replaced: this is its
// writer. The result is never nil: its notes stand also with an error.
func Integrate(ctx context.Context, t Task, in Integration) (*Integrated, error) {
	out := &Integrated{File: t.Dir + "/" + record.IntegrationFile}
	lock, notes, err := Lock(ctx, t)
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	repo, err := git.Open(t.Project.Dir)
	if err != nil {
		return out, fmt.Errorf("task %s: the integration commit is resolved in the project's git repository: %w", t.ID, err)
	}
	sha, err := repo.Resolve(in.Commit)
	repo.Close()
	if err != nil {
		return out, fmt.Errorf("task %s: --commit %q: %w", t.ID, in.Commit, err)
	}
	out.Commit = sha
	now := time.Now()
	name := t.Dir + "/" + record.RecordFile
	rec, bad, err := record.LoadToReplaceIntegration(t.Project.Geas, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rec = record.New(t.ID, now)
	case err != nil:
		return out, err
	case bad != nil:
		out.Replaced = bad
	}
	rec.Guard(lock.Held) // SPEC §7.3: nothing is written once the lock file is replaced
	if err := rec.SetIntegration(record.Integration{Status: in.Status, Branch: in.Branch, Commit: sha}, now); err != nil {
		return out, err
	}
	return out, rec.Write(t.Project.Geas, name)
}
