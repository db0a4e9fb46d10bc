package tiers

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// The re-check of a run's inputs (SPEC §2 inv. 7, §7.4), after tier 1 and the detectors ran code:
// it reads the bytes of every input again through the floor (fsutil, internal/git, the handles
// geas gate --all holds) and compares their digests, and the resolutions the snapshot made, with
// what the snapshot recorded. It decides nothing again: where the policy came from is confirmed
// by making the same reads (policyRead) and finding the same answers.

// A policyRead is one read that decided where the run's policy came from (readPolicy), with what
// it found: the re-check makes it again (samePolicy) and compares the answers. The snapshot
// records them in order; the reads after one depend on what it found, so equal answers make the
// same decision.
type policyRead struct {
	kind policyReadKind
	// name is what is read: the project root (readOpen), a ref or commit (readResolve), a
	// directory (readReal), a path in the repository (readAt), a path in .geas (readFile).
	name string
	// at is the commit a readAt reads name in.
	at string
	// found is the answer: the repository's top directory, the commit the ref resolved to, the
	// real path, the sha256 of the bytes read (canon.SumHex); "" when the read found nothing.
	found string
	// err is the read's error, as the snapshot got it.
	err error
}

type policyReadKind int

const (
	readOpen    policyReadKind = iota // git.Open of the project root
	readResolve                       // Repo.Resolve of a ref or a commit
	readReal                          // fsutil.RealPath of a directory
	readAt                            // Repo.ReadFileAt of a path at a commit
	readFile                          // a file of .geas, read as the run read it
)

// changedInputs confirms the snapshot the run judged (SPEC §7.4) and returns the paths whose
// content differs from it (added, removed or changed), sorted. It reads the bytes of every input
// again and compares their digests with those of the first read (sameBytes); nothing is parsed
// again. Only when some input's bytes differ, or an input was not a valid file (whose snapshot
// holds no digest of bytes to compare), does it read everything again as Gather does
// (changedParsed), to name what changed in the snapshot's own terms: a record.json whose
// agent-written sections are as they were has not changed, whatever its bytes.
func (in *Snapshot) changedInputs() []string {
	if moved := in.movedDirs(); len(moved) > 0 {
		return moved
	}
	if in.sameBytes() {
		return nil
	}
	return in.changedParsed()
}

// movedDirs names the directories the run reads through (the project root and its .geas) whose
// path no longer names the directory the run holds open: code run by an eval command that renames
// .geas away and puts a copy in its place, or does the same to the project root, leaves every
// read through the run's handles finding what it found, while the project the path names holds
// other inputs. Such a run did not judge what the project now holds.
func (in *Snapshot) movedDirs() []string {
	var moved []string
	same := func(held *os.Root, now func() (fs.FileInfo, error)) bool {
		want, err := held.Stat(".")
		if err != nil {
			return false
		}
		got, err := now()
		return err == nil && os.SameFile(want, got)
	}
	if in.Root != nil && !same(in.Root, func() (fs.FileInfo, error) { return os.Stat(in.ProjectDir) }) {
		moved = append(moved, in.ProjectDir)
	}
	if in.Root != nil && in.Geas != nil && !same(in.Geas, func() (fs.FileInfo, error) { return in.Root.Stat(project.GeasDir) }) {
		moved = append(moved, project.GeasDir)
	}
	return moved
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
		return err == nil && canon.SumHex(data) == want
	}
	if !holds(dir, task+record.ContractFile, contract.MaxBytes, canon.SumHex(in.Contract.Raw)) {
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
	if !in.samePolicy() {
		return false
	}
	debtSum := ""
	if in.DebtData != nil {
		debtSum = canon.SumHex(in.DebtData)
	}
	data, err := in.readAgain(debtRegisterPath(in.Mission), in.Policy.MaxEvidenceBytes)
	if debtSum == "" {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && canon.SumHex(data) == debtSum
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
		if err != nil || canon.SumHex(data) != want {
			return false
		}
	}
	return n == len(in.Evidence)
}

// samePolicy makes again, in order, the reads that decided where the run's policy came from
// (policyReads: the repository opened, the base and the head resolved, the project root's place,
// the policy file at the base or the head, or in the working tree) and reports whether each finds
// what it found then: the same commit for each ref, the same real paths, the same bytes (by their
// sha256), the same absence. A ref an eval command moved, a policy rewritten, added or removed,
// wherever the run took it from, is a difference. The repository is opened afresh, so that what
// the code did to it is seen.
func (in *Snapshot) samePolicy() bool {
	var repo *git.Repo
	defer func() {
		if repo != nil {
			repo.Close()
		}
	}()
	for _, r := range in.policyReads {
		var found string
		var err error
		switch r.kind {
		case readOpen:
			if repo, err = git.Open(r.name); err == nil {
				found = repo.Top()
			}
		case readResolve:
			if repo == nil {
				return false
			}
			found, err = repo.Resolve(r.name)
		case readReal:
			found, err = fsutil.RealPath(r.name)
		case readAt:
			if repo == nil {
				return false
			}
			var data []byte
			var ok bool
			if data, ok, err = repo.ReadFileAt(r.at, r.name, policy.MaxBytes); ok {
				found = canon.SumHex(data)
			}
		case readFile:
			var data []byte
			if data, err = in.readAgain(r.name, policy.MaxBytes); err == nil {
				found = canon.SumHex(data)
			}
		default:
			return false
		}
		if found != r.found || outcome(err) != outcome(r.err) {
			return false
		}
	}
	return true
}

// outcome is what a read's error means to the decision it feeds: none, an absent file, or a
// failure.
func outcome(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	}
	return "failed"
}

// readAgain reads name in .geas again as the run read it: through the handle geas gate --all
// holds for it (Shared.read: its bytes now, the file opened afresh when the path names another),
// else fsutil.ReadLimited.
func (in *Snapshot) readAgain(name string, limit int64) ([]byte, error) {
	if in.shared != nil {
		return in.shared.read(in.Geas, name, limit)
	}
	return fsutil.ReadLimited(in.Geas, name, limit)
}
