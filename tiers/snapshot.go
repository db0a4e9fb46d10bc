package tiers

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/policy"
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
func (in *Snapshot) snapshot() map[string]string {
	files := map[string]string{}
	task := ".geas/" + in.TaskDir
	switch {
	case in.Contract != nil:
		files[task+"/"+record.ContractFile] = canon.SumHex(in.Contract.Raw)
	case in.ContractErr != nil && !errors.Is(in.ContractErr, fs.ErrNotExist):
		files[task+"/"+record.ContractFile] = digestInvalid
	}
	switch {
	case in.RecordErr != nil:
		files[task+"/record.json"] = digestInvalid
	case in.Record != nil && !in.RecordMissing:
		files[task+"/record.json"] = recordDigest(in.Facts)
	}
	for _, e := range in.Evidence {
		files[task+"/evidence/"+e.Name] = e.SHA256
	}
	for _, b := range in.BadEvidence {
		files[".geas/"+b.Name] = digestInvalid
	}
	if in.PolicyRaw != nil {
		files[in.policyKey()] = canon.SumHex(in.PolicyRaw)
	} else if in.PolicyErr != nil {
		files[in.policyKey()] = digestInvalid
	}
	switch {
	case in.DebtData != nil:
		files[".geas/"+debtRegisterPath(in.Mission)] = canon.SumHex(in.DebtData)
	case in.DebtErr != nil && !errors.Is(in.DebtErr, fs.ErrNotExist):
		files[".geas/"+debtRegisterPath(in.Mission)] = digestUnreadable
	}
	return files
}

// policyKey names the policy document in the snapshot.
func (in *Snapshot) policyKey() string {
	if i := strings.Index(in.PolicyFrom, " at base "); i >= 0 {
		return ".geas/" + policy.File + "@" + strings.TrimPrefix(in.PolicyFrom[i:], " at base ")
	}
	return ".geas/" + policy.File
}

// recordDigest is the sha256 of the RFC 8785 form of the record's agent-written sections, with
// integration.json's content keyed as the section it was in the earlier layout, so that a
// migration does not change what a run's inputs digest to (record.Facts.Inputs).
func recordDigest(f *record.Facts) string {
	d, err := canon.SHA256(f.Inputs)
	if err != nil {
		return digestInvalid
	}
	return d
}
