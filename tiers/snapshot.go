package tiers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// Digest values of inputs that were present but could not be judged: they are not a sha256, so
// they never equal one.
const (
	digestInvalid    = "invalid"
	digestUnreadable = "unreadable"
)

// snapshot digests every input as it was read (SPEC §7.4): path relative to the project root →
// sha256 of the bytes read. The record is digested as the RFC 8785 form of its agent-written
// sections (the gate's own gate_result and gate_history, and the envelope, are not inputs: the
// gate rewrites them on every run). A policy read from the base commit is named path@commit.
func (in *Input) snapshot() map[string]string {
	files := map[string]string{}
	task := ".geas/" + in.TaskDir
	switch {
	case in.Contract != nil:
		files[task+"/contract.json"] = sum(in.Contract.Raw)
	case in.ContractErr != nil && !errors.Is(in.ContractErr, fs.ErrNotExist):
		files[task+"/contract.json"] = digestInvalid
	}
	switch {
	case in.RecordErr != nil:
		files[task+"/record.json"] = digestInvalid
	case in.Record != nil && !in.RecordMissing:
		files[task+"/record.json"] = recordDigest(in.Record)
	}
	for _, e := range in.Evidence {
		files[task+"/evidence/"+e.Name] = e.SHA256
	}
	for _, b := range in.BadEvidence {
		files[".geas/"+b.Name] = digestInvalid
	}
	if in.PolicyRaw != nil {
		files[in.policyKey()] = sum(in.PolicyRaw)
	} else if in.PolicyErr != nil {
		files[in.policyKey()] = digestInvalid
	}
	switch {
	case in.DebtData != nil:
		files[".geas/"+debtRegisterPath(in.Mission)] = sum(in.DebtData)
	case in.DebtErr != nil && !errors.Is(in.DebtErr, fs.ErrNotExist):
		files[".geas/"+debtRegisterPath(in.Mission)] = digestUnreadable
	}
	return files
}

// policyKey names the policy document in the snapshot.
func (in *Input) policyKey() string {
	if i := strings.Index(in.PolicyFrom, " at base "); i >= 0 {
		return ".geas/" + PolicyFile + "@" + strings.TrimPrefix(in.PolicyFrom[i:], " at base ")
	}
	return ".geas/" + PolicyFile
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// recordDigest is the sha256 of the RFC 8785 form of the record's agent-written sections.
func recordDigest(rec *record.Record) string {
	sections := map[string]json.RawMessage{}
	for _, s := range rec.Sections() {
		if s == "gate_result" || s == "gate_history" {
			continue
		}
		raw, _ := rec.Section(s)
		sections[s] = raw
	}
	// integration.json is an input too (SPEC §7.4); keyed as the section it was in the earlier
	// layout, so a migration does not change what a run's inputs digest to.
	if raw, ok := rec.IntegrationJSON(); ok {
		sections["integration"] = raw
	}
	d, err := canon.SHA256(sections)
	if err != nil {
		return digestInvalid
	}
	return d
}

// inputsDigest is inputs_sha256 (SPEC §7.4): the sha256 of the RFC 8785 JSON of
// {"files": {path: sha256}, "head": sha}. The framing is JSON's, so no two different input sets
// share a digest by concatenation.
func inputsDigest(in *Input, head string) string {
	files := in.Files
	if files == nil {
		files = in.snapshot()
	}
	d, err := canon.SHA256(map[string]any{"files": files, "head": head})
	if err != nil {
		return ""
	}
	return d
}

// changedInputs re-reads every input and returns the paths whose content differs from the
// snapshot the run judged (added, removed or changed), sorted.
func (in *Input) changedInputs() []string {
	again := gatherWith(&project.Project{Dir: in.ProjectDir, Root: in.Root, Geas: in.Geas}, in.Mission, in.Task, in.TaskDir, nil, in)
	again.Release()
	var changed []string
	for p, d := range in.Files {
		if again.Files[p] != d {
			changed = append(changed, p)
		}
	}
	for p := range again.Files {
		if _, ok := in.Files[p]; !ok {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	return changed
}
