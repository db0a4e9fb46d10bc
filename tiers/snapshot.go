package tiers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/policy"
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
func (in *Snapshot) snapshot() map[string]string {
	files := map[string]string{}
	task := ".geas/" + in.TaskDir
	switch {
	case in.Contract != nil:
		files[task+"/"+record.ContractFile] = sum(in.Contract.Raw)
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
func (in *Snapshot) policyKey() string {
	if i := strings.Index(in.PolicyFrom, " at base "); i >= 0 {
		return ".geas/" + policy.File + "@" + strings.TrimPrefix(in.PolicyFrom[i:], " at base ")
	}
	return ".geas/" + policy.File
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
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

// changedInputs confirms the snapshot the run judged (SPEC §7.4) and returns the paths whose
// content differs from it (added, removed or changed), sorted. It reads the bytes of every input
// again and compares their digests with those of the first read (sameBytes); nothing is parsed
// again. Only when some input's bytes differ, or an input was not a valid file (whose snapshot
// holds no digest of bytes to compare), does it read everything again as Gather does
// (changedParsed), to name what changed in the snapshot's own terms: a record.json whose
// agent-written sections are as they were has not changed, whatever its bytes.
func (in *Snapshot) changedInputs() []string {
	if in.sameBytes() {
		return nil
	}
	return in.changedParsed()
}

// changedParsed reads every input again as Gather does and compares the two snapshots.
func (in *Snapshot) changedParsed() []string {
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

// sameBytes reads every input of the run again, as bytes, and reports whether each holds what the
// first read digested and no evidence file was added: the contract, record.json and
// integration.json, every evidence file, the policy (from where it was read) and the debt
// register. It is false, without reading further, at the first difference and for a run whose
// inputs were not all valid files (a missing or invalid contract, an invalid record, bad or
// unlistable evidence, an unreadable policy or debt register): changedParsed then decides.
func (in *Snapshot) sameBytes() bool {
	if in.Contract == nil || in.RecordErr != nil || len(in.BadEvidence) > 0 || in.EvidenceErr != nil || in.PolicyErr != nil ||
		(in.DebtErr != nil && !errors.Is(in.DebtErr, fs.ErrNotExist)) {
		return false
	}
	dir := fsutil.OpenSubdir(in.Geas, in.TaskDir)
	defer dir.Close()
	evidenceLimit := in.Policy.MaxEvidenceBytes
	if evidenceLimit == 0 {
		evidenceLimit = evidence.DefaultMaxBytes
	}
	task := in.TaskDir + "/"
	// holds reports whether name holds bytes whose sha256 is want ("": name is absent).
	holds := func(r fsutil.Reader, name string, limit int64, want string) bool {
		data, err := r.ReadLimited(name, limit)
		if want == "" {
			return errors.Is(err, fs.ErrNotExist)
		}
		return err == nil && sum(data) == want
	}
	if !holds(dir, task+record.ContractFile, contract.MaxBytes, sum(in.Contract.Raw)) {
		return false
	}
	recordSum, integSum := "", ""
	if !in.RecordMissing {
		if recordSum, integSum = in.Record.ReadSums(); recordSum == "" && integSum == "" {
			return false // read without record.json and integration.json (from the history alone)
		}
	}
	if rr := in.recordReader(dir); !holds(rr, task+"record.json", record.MaxBytes, recordSum) || !holds(rr, task+record.IntegrationFile, record.MaxBytes, integSum) {
		return false
	}
	if in.RecordMissing {
		if _, err := dir.Lstat(task + record.HistoryFile); !errors.Is(err, fs.ErrNotExist) {
			return false // a history alone makes a record (record.Load)
		}
	}
	if !in.sameEvidence(dir, evidenceLimit) {
		return false
	}
	policyAgain := &Snapshot{ProjectDir: in.ProjectDir, Root: in.Root, Geas: in.Geas, Contract: in.Contract, Record: in.Record, Facts: in.Facts, integration: in.integration, shared: in.shared}
	data, from, err := policyAgain.readPolicy()
	policyAgain.Release()
	if err != nil || from != in.PolicyFrom || (data == nil) != (in.PolicyRaw == nil) || (data != nil && sum(data) != sum(in.PolicyRaw)) {
		return false
	}
	debtSum := ""
	if in.DebtData != nil {
		debtSum = sum(in.DebtData)
	}
	data, err = in.readGeas(debtRegisterPath(in.Mission), in.Policy.MaxEvidenceBytes)
	if debtSum == "" {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && sum(data) == debtSum
}

// recordReader is r, except that under geas gate --all the task's own record files (recordFiles)
// are read through the handles the runs share (sharedRecords.readNow): their bytes read now,
// through the handle while the path still names the held file, else opened afresh. For the
// confirm of the run's inputs (sameBytes), so that it does not open them once more.
func (in *Snapshot) recordReader(r fsutil.Reader) fsutil.Reader {
	if in.shared == nil {
		return r
	}
	return sharedReader{Reader: r, s: &in.shared.others, geas: in.Geas, dir: in.TaskDir}
}

type sharedReader struct {
	fsutil.Reader
	s    *sharedRecords
	geas *os.Root
	dir  string
}

func (r sharedReader) ReadLimited(name string, limit int64) ([]byte, error) {
	for i, f := range recordFiles {
		if name == r.dir+"/"+f.name {
			data, err := r.s.readNow(r.geas, r.dir, i)
			if err == nil && limit > 0 && int64(len(data)) > limit {
				return nil, &fsutil.TooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
			}
			return data, err
		}
	}
	return r.Reader.ReadLimited(name, limit)
}

// sameEvidence reports whether the task's evidence directory lists exactly the evidence files the
// run read (the names evidence.LoadAll reads: *.json, not hidden) and each holds the bytes read.
func (in *Snapshot) sameEvidence(dir *fsutil.Dir, limit int64) bool {
	name := in.TaskDir + "/evidence"
	f, err := dir.OpenDir(name)
	if errors.Is(err, fs.ErrNotExist) {
		return len(in.Evidence) == 0
	}
	if err != nil {
		return false
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false
	}
	read := make(map[string]string, len(in.Evidence))
	for _, e := range in.Evidence {
		read[e.Name] = e.SHA256
	}
	n := 0
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".json") || strings.HasPrefix(ent.Name(), ".") {
			continue
		}
		want, ok := read[ent.Name()]
		if !ok {
			return false
		}
		n++
		data, err := dir.ReadLimited(name+"/"+ent.Name(), limit)
		if err != nil || sum(data) != want {
			return false
		}
	}
	return n == len(in.Evidence)
}
