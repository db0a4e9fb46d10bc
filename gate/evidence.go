package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// EvidenceOptions are an agent's evidence file as geas evidence add writes it.
type EvidenceOptions struct {
	Agent, Role string
	// Name is the file name without .json.
	Name string
	// Payload is the evidence as given: a JSON object.
	Payload []byte
	// Strict refuses evidence with entries that count for nothing the contract names
	// (EvidenceWritten.Warnings) instead of writing it with warnings.
	Strict bool
}

// EvidenceWritten is what AddEvidence wrote.
type EvidenceWritten struct {
	// File is the evidence file, relative to .geas.
	File string
	// Notes are what taking the task's lock completed or could not write (SPEC §7.3).
	Notes []string
	// Warnings name the entries that count for nothing the contract names: criteria_results that
	// bind to no criterion (or ambiguously, or again), rubric_scores of no dimension of the
	// contract, each with what it was probably meant for (CheckEntries).
	Warnings []string
}

// AddEvidence writes the task's evidence/{Name}.json: agent, task_id and role come from o (a
// payload that names different values is refused), version "1.0" and created_at are filled in
// when absent, and the file is validated against the evidence schema before it is written
// atomically under the task's lock. Entries that count for nothing the contract names are
// warnings (CheckEntries, at most maxEntryWarnings of them and a count of the rest); with Strict
// they refuse the file (an *InputError), and so does a contract that cannot be read to check
// them. It returns a non-nil *EvidenceWritten with the lock's notes even when it fails.
func AddEvidence(ctx context.Context, t Task, o EvidenceOptions) (*EvidenceWritten, error) {
	out := &EvidenceWritten{File: t.Dir + "/evidence/" + o.Name + ".json"}
	obj, err := PayloadObject("evidence", o.Payload)
	if err != nil {
		return out, err
	}
	for key, want := range map[string]string{"agent": o.Agent, "task_id": t.ID, "role": o.Role} {
		if raw, ok := obj[key]; ok {
			var got string
			if json.Unmarshal(raw, &got) != nil || got != want {
				return out, fmt.Errorf("evidence payload has %s %s but the flags say %q: remove it from the payload or fix the flag", key, raw, want)
			}
		}
		obj[key], _ = json.Marshal(want)
	}
	if _, ok := obj["version"]; !ok {
		obj["version"] = json.RawMessage(`"1.0"`)
	}
	if _, ok := obj["created_at"]; !ok {
		obj["created_at"], _ = json.Marshal(record.Timestamp(time.Now()))
	}
	b, err := marshalOrdered(obj, []string{"version", "agent", "task_id", "role"})
	if err != nil {
		return out, err
	}
	e, err := evidence.Parse(out.File, b)
	if err != nil {
		return out, err
	}
	e.Name = o.Name + ".json"
	out.Warnings, err = CheckEntries(t, e)
	n := len(out.Warnings)
	if n > maxEntryWarnings {
		out.Warnings = append(out.Warnings[:maxEntryWarnings], fmt.Sprintf("and %d more entries that count for nothing", n-maxEntryWarnings))
	}
	switch {
	case err != nil && o.Strict:
		return out, fmt.Errorf("evidence not written: --strict checks its entries against the contract, which cannot be read: %w", err)
	case err != nil:
		out.Warnings = []string{fmt.Sprintf("entries not checked against the contract, which cannot be read: %v", err)}
	case o.Strict && n > 0:
		what := fmt.Sprintf("%d entries count", n)
		if n == 1 {
			what = "1 entry counts"
		}
		return out, &InputError{Err: fmt.Errorf("evidence not written (--strict): %s for nothing: %s", what, strings.Join(out.Warnings, "; "))}
	}
	// SPEC §7.3: what the task's latest recorded entry implies is completed first.
	lock, notes, err := Lock(ctx, t)
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	return out, fsutil.WriteFileAtomic(t.Project.Geas, out.File, b, 0o644)
}

// maxEntryWarnings bounds the warnings evidence add returns; the rest are counted.
const maxEntryWarnings = 20

// CheckEntries reads the task's contract and names the entries of e that count for nothing it
// names (tiers.EntryProblems): criteria_results that bind to no criterion, bind to two, or bind
// to what an earlier entry binds to, and rubric_scores of a dimension the contract does not have,
// each with what it was probably meant for. It changes nothing the gate counts. The error is the
// contract's, when it cannot be read.
func CheckEntries(t Task, e *evidence.Evidence) ([]string, error) {
	c, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range tiers.EntryProblems(c, e) {
		out = append(out, p.Message)
	}
	return out, nil
}
