package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
)

// Input is everything the gate reads for one task, read fresh on every run: the gate keeps no
// memory of earlier runs, so a deleted artifact takes a pass back (SPEC §2.5).
type Input struct {
	ProjectDir string   // absolute project root
	Root       *os.Root // the project root
	Geas       *os.Root // .geas
	Mission    string
	Task       string
	TaskDir    string // relative to .geas

	Contract    *contract.Contract
	ContractErr error
	// Record is the parsed record.json; a task without one gets an empty record (whose missing
	// self_check then blocks). RecordErr is set when record.json exists but is invalid.
	Record        *record.Record
	RecordErr     error
	RecordMissing bool

	Evidence    []*evidence.Evidence
	BadEvidence []*evidence.FileError
	EvidenceErr error // the evidence directory exists but cannot be listed

	Policy    Policy
	PolicyErr error
}

// Gather reads a task's inputs. It never fails: every problem is kept in the Input and becomes a
// tier-0 check, so the report names it.
func Gather(p *project.Project, mission, task, taskDir string) *Input {
	in := &Input{ProjectDir: p.Dir, Root: p.Root, Geas: p.Geas, Mission: mission, Task: task, TaskDir: taskDir}
	in.Policy, in.PolicyErr = LoadPolicy(p.Geas)
	in.Contract, in.ContractErr = contract.Load(p.Geas, taskDir+"/contract.json")
	if c := in.Contract; c != nil && c.TaskID != task {
		// A contract copied from another task is not this task's contract.
		in.Contract, in.ContractErr = nil, &schemas.ValidationError{File: taskDir + "/contract.json", Kind: schemas.Contract,
			Problems: []schemas.Problem{{Pointer: "/task_id", Message: fmt.Sprintf("task_id is %q, but this is task %q", c.TaskID, task)}}}
	}
	rec, err := record.Load(p.Geas, taskDir+"/record.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		in.Record, in.RecordMissing = record.New(task, time.Now()), true
	case err != nil:
		in.RecordErr = err
	default:
		in.Record = rec
	}
	all, bad, err := evidence.LoadAll(p.Geas, taskDir+"/evidence", in.Policy.MaxEvidenceBytes)
	in.BadEvidence, in.EvidenceErr = bad, err
	for _, e := range all {
		// Evidence copied from another task is not evidence for this one.
		if e.TaskID != task {
			in.BadEvidence = append(in.BadEvidence, &evidence.FileError{Name: taskDir + "/evidence/" + e.Name,
				Err: fmt.Errorf("task_id is %q, but this is task %q", e.TaskID, task)})
			continue
		}
		in.Evidence = append(in.Evidence, e)
	}
	return in
}
