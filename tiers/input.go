package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
)

// Snapshot is everything the gate reads for one task, read fresh on every run: the gate keeps no
// memory of earlier runs, so a deleted artifact takes a pass back (SPEC §2.5).
type Snapshot struct {
	// files reads the task directory while Gather runs (nil after: the reads go through Geas).
	files fsutil.Reader

	// shared, when set, is what the runs of one geas gate --all share (Loaded.Shared): the
	// policy and the debt register are read through it.
	shared *Shared

	// Events, when set, answers the history checks' reads of the event log: the index that
	// geas gate --all and geas gate verify keep for all their tasks, so that each line of the log
	// is parsed once a run (record.EventIndex); nil: each check reads the log.
	Events *record.EventIndex
	// taskEvents, when set, are the task's events as the crash completion read them of the log
	// under the run's task lock (Loaded.TaskEvents): the history check cross-checks those.
	taskEvents *TaskEvents

	// Held, when set, says whether the task lock the run took is still held (fsutil.Lock.Held):
	// Apply asks it before each write and writes nothing more once it fails (SPEC §7.3).
	Held func() error

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
	// Facts are what the checks and the ledger know of Record (record.FactsOf with the signing
	// key), computed once when the record is read: set whenever Record is, nil when it is nil.
	Facts *record.Facts
	// integration is the commit integration.json names (Facts.Integration), which the gate
	// judges in place of HEAD; "" when the record names none. Set with Facts (integrationCommit).
	integration string
	// historyBytes is the part of record.json's size that is the gate history the earlier layout
	// kept in it (historySectionBytes), measured once for the size limits and the ledger.
	historyBytes int64

	Evidence    []*evidence.Evidence
	BadEvidence []*evidence.FileError
	EvidenceErr error // the evidence directory exists but cannot be listed

	Policy    policy.Policy
	PolicyErr error
	// PolicyRaw is the policy document the run judges by (nil: built-in defaults); PolicyFrom
	// says where it was read: the working tree, or the base commit when the policy is tracked
	// there (SPEC §5.3 Part B: a policy changed by the work under review never judges it).
	PolicyRaw  []byte
	PolicyFrom string
	// policyReads are the reads that decided where the policy came from, in order, with what
	// each found (readPolicy): the re-check makes them again and compares (recheck.go).
	policyReads []policyRead

	// DebtData is the mission's debt register as read before tier 1 (nil with DebtErr
	// fs.ErrNotExist when there is none): part C judges this snapshot (SPEC §7.4).
	DebtData []byte
	DebtErr  error

	// BaseCommit is the full SHA that the contract's base_snapshot resolved to when the inputs
	// were read ("" when it did not resolve: BaseErr says why); baseResolved is set once that
	// resolution was made, so that the run resolves the base once and the rules (which hold it,
	// SPEC §4.4) and tier 0's baseline judge the same commit.
	BaseCommit   string
	BaseErr      error
	baseResolved bool

	// Rules are the task's rules (SPEC §4.4) and RulesSHA256 their RFC 8785 digest; RulesErr is
	// set when they cannot be computed (the contract or the policy is unreadable).
	Rules       map[string]any
	RulesSHA256 string
	RulesErr    error

	// Others are the mission's other tasks whose histories record a gate pass, read once for
	// attribution (SPEC §5.3 B, attribution_gather.go); not inputs of the run's inputs_sha256: the
	// passes they attribute are compared on their own (attempt.attributed).
	Others []OtherTask

	// Files is the snapshot of every input: path relative to the project root → sha256 of what
	// was read (SPEC §7.4). It is taken as the inputs are read, before tier 1.
	Files map[string]string

	// repo is the repository a read of the policy at the base opened (or the error it gave),
	// kept by GatherLoaded for Evaluate's tier 0 so that a run opens it once; Gather closes it.
	repo      *git.Repo
	repoErr   error
	repoOpens int // git.Open calls of this Snapshot, for tests

	// rootIn is the project root's place in the repository as the read of the policy at the
	// base found it (nil: that read did not look): the checks compare paths with the same place
	// (projectPathsIn).
	rootIn *rootPlace
}

// openRepo returns the project's repository, opened on first use.
func (in *Snapshot) openRepo() (*git.Repo, error) {
	if in.repo == nil && in.repoErr == nil {
		in.repo, in.repoErr = git.Open(in.ProjectDir)
		in.repoOpens++
	}
	return in.repo, in.repoErr
}

// takeRepo hands the repository openRepo opened to the caller, who closes it.
func (in *Snapshot) takeRepo() (*git.Repo, error) {
	repo, err := in.openRepo()
	in.repo, in.repoErr = nil, nil
	return repo, err
}

// debtRegisterPath is the mission's debt register, relative to .geas.
func debtRegisterPath(mission string) string {
	return "missions/" + mission + "/evolution/debt-register.json"
}

// Gather reads a task's inputs. It never fails: every problem is kept in the Snapshot and becomes a
// tier-0 check, so the report names it.
func Gather(p *project.Project, mission, task, taskDir string) *Snapshot {
	in := gather(p, mission, task, taskDir)
	in.Rules, in.RulesSHA256, in.RulesErr = rulesOf(in)
	in.readOthers(p)
	return in
}

// GatherOwn is Gather for a command that judges the task's own files and evaluates nothing
// (approve, grant, revalidate, the hooks' state check, the triage of geas gate --all, the error
// limit of a completion): the mission's other tasks, which only attribution judges, are not read.
func GatherOwn(p *project.Project, mission, task, taskDir string) *Snapshot {
	in := gather(p, mission, task, taskDir)
	in.Rules, in.RulesSHA256, in.RulesErr = rulesOf(in)
	return in
}

// GatherEvents is Gather reading the event log through events (nil: a read of its own), the
// index geas gate verify keeps for all its tasks: the snapshot reads the gate events of the
// mission's tasks for attribution (readOthersFacts) through it, and the history check too.
func GatherEvents(p *project.Project, mission, task, taskDir string, events *record.EventIndex) *Snapshot {
	in := gather(p, mission, task, taskDir)
	in.Events = events
	in.Rules, in.RulesSHA256, in.RulesErr = rulesOf(in)
	in.readOthers(p)
	return in
}

// gather is Gather without the task's rules, which the snapshot of the inputs does not need
// (changedInputs reads everything again only to compare snapshots). It keeps no repository open:
// the re-read of a run opens its own, so that what an eval command did to the repository is seen.
func gather(p *project.Project, mission, task, taskDir string) *Snapshot {
	in := gatherWith(p, mission, task, taskDir, nil, nil)
	in.Release()
	return in
}

// gatherWith is gather with the task's contract as the caller read it (nil: read it here). The
// task directory and its evidence directory are opened once for the run's reads (fsutil.Dir,
// whose answers are the .geas root's: see there for symbolic links). prev, when set, is the
// first read of the same run: the contract and evidence files that still hold the bytes read
// then are not parsed again (contract.LoadKnown, evidence.LoadAllKnown).
func gatherWith(p *project.Project, mission, task, taskDir string, k *Loaded, prev *Snapshot) *Snapshot {
	in := &Snapshot{ProjectDir: p.Dir, Root: p.Root, Geas: p.Geas, Mission: mission, Task: task, TaskDir: taskDir}
	dir := (*fsutil.Dir)(nil)
	if k != nil && k.Dir != nil && k.Dir.Outer == p.Geas && k.Dir.Name == taskDir {
		dir = k.Dir
	} else {
		dir = fsutil.OpenSubdir(p.Geas, taskDir)
		defer dir.Close()
	}
	in.files = dir
	defer func() { in.files = nil }()
	in.readRuled(dir, k, prev)
	ev := dir.Subdir("evidence")
	var known []*evidence.Evidence
	if prev != nil {
		known = prev.Evidence
	}
	all, bad, err := evidence.LoadAllKnown(ev, taskDir+"/evidence", in.Policy.MaxEvidenceBytes, in.Policy.MaxTotalEvidenceBytes, known)
	ev.Close()
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
	in.DebtData, in.DebtErr = in.readGeas(debtRegisterPath(mission), in.Policy.MaxEvidenceBytes)
	in.Files = in.snapshot()
	return in
}

// readRuled reads, through dir, what the task's rules are made of and what their reads depend
// on: the contract (k's when given, else read here, reusing prev's when its bytes still hold), the
// record, the effective policy, and the policy's size limits applied to the contract and the
// record.
func (in *Snapshot) readRuled(dir *fsutil.Dir, k *Loaded, prev *Snapshot) {
	if k != nil {
		in.shared = k.Shared
	}
	if k != nil {
		in.Contract, in.ContractErr = k.Contract, k.Err
	} else {
		var known *contract.Contract
		if prev != nil {
			known = prev.Contract
		}
		in.Contract, in.ContractErr = contract.LoadKnown(dir, in.TaskDir+"/"+record.ContractFile, known)
	}
	if c := in.Contract; c != nil && c.TaskID != in.Task {
		// A contract copied from another task is not this task's contract.
		in.Contract, in.ContractErr = nil, &schemas.ValidationError{File: in.TaskDir + "/" + record.ContractFile, Kind: schemas.Contract,
			Problems: []schemas.Problem{{Pointer: "/task_id", Message: fmt.Sprintf("task_id is %q, but this is task %q", c.TaskID, in.Task)}}}
	}
	var rec *record.Record
	var facts *record.Facts
	var err error
	if k != nil && k.RecordRead {
		rec, err, facts, in.taskEvents = k.Record, k.RecordErr, k.Facts, k.TaskEvents
	} else {
		rec, err = record.LoadFrom(dir, in.TaskDir+"/record.json")
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		in.Record, in.RecordMissing = record.New(in.Task, time.Now()), true
		facts = nil
	case err != nil:
		in.RecordErr = err
	default:
		in.Record = rec
	}
	if in.Record != nil {
		if facts == nil || !facts.For(record.SigningKey()) {
			facts = record.FactsOf(in.Record, record.SigningKey())
		}
		in.Facts = facts
		in.historyBytes = historySectionBytes(facts)
		if facts.Integration != nil {
			in.integration = facts.Integration.Commit
		}
	}
	in.loadPolicy()
	in.checkSizes()
}

// integrationCommit is the commit integration.json names, which the gate judges in place of HEAD
// (the integration head); "" when the record names none.
func (in *Snapshot) integrationCommit() string { return in.integration }

// loadPolicy reads the effective policy (readPolicy) and parses it.
func (in *Snapshot) loadPolicy() {
	data, from, err := in.readPolicy()
	in.PolicyRaw, in.PolicyFrom = data, from
	switch {
	case err != nil:
		in.Policy, in.PolicyErr = policy.Default(), err
	case data == nil:
		in.Policy = policy.Default()
	default:
		in.Policy, in.PolicyErr = in.shared.parsePolicy(from, data)
	}
}

// readGeas is fsutil.ReadLimited of name in .geas, through in.shared when the run has one.
func (in *Snapshot) readGeas(name string, limit int64) ([]byte, error) {
	if in.shared != nil {
		return in.shared.read(in.Geas, name, limit)
	}
	return fsutil.ReadLimited(in.Geas, name, limit)
}

// readPolicy reads the effective policy document (SPEC §5.3 Part B): for a task with a base, the
// policy file as it is in the base commit when it is tracked there, and none (the built-in
// defaults) when the work under review added it (a policy changed by the work never judges that
// work); else .geas/gate-policy.json as it is in the working tree, none when there is no such
// file. from says where it was read ("" for the defaults of a project without a policy).
//
// Each read that decides is recorded in in.policyReads with what it found, for the re-check.
func (in *Snapshot) readPolicy() (data []byte, from string, err error) {
	in.policyReads = in.policyReads[:0]
	if c := in.Contract; c != nil && c.BaseSnapshot != "" {
		headRev := "HEAD"
		if c := in.integrationCommit(); c != "" {
			headRev = c
		}
		data, from, found, addedByWork, err := policyAtBase(in, c.BaseSnapshot, headRev)
		switch {
		case err != nil:
			return nil, from, err
		case found:
			return data, from, nil
		case addedByWork:
			return nil, from, nil
		}
	}
	data, err = in.readGeas(policy.File, policy.MaxBytes)
	in.policyReads = append(in.policyReads, policyRead{kind: readFile, name: policy.File, found: sumIf(data, err == nil), err: err})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("read .geas/%s: %w", policy.File, err)
	}
	return data, ".geas/" + policy.File, nil
}

// policyAtBase reads .geas/gate-policy.json from the base commit. found is false when the base
// cannot be resolved (tier 0 reports that) or does not track the file; addedByWork is true when
// the base does not track it and the head does; err is set when it is tracked but cannot be read.
func policyAtBase(in *Snapshot, base, headRev string) (data []byte, from string, found, addedByWork bool, err error) {
	projectDir := in.ProjectDir
	repo, err := in.openRepo()
	note := func(r policyRead) { in.policyReads = append(in.policyReads, r) }
	if err != nil {
		note(policyRead{kind: readOpen, name: projectDir, err: err})
		return nil, "", false, false, nil
	}
	note(policyRead{kind: readOpen, name: projectDir, found: repo.Top()})
	sha := in.resolveBase(repo, base)
	note(policyRead{kind: readResolve, name: base, found: sha, err: in.BaseErr})
	if sha == "" {
		return nil, "", false, false, nil
	}
	// The project root's place in the repository, as every check of the run finds it (symbolic
	// links resolved): a policy looked for anywhere else would be absent, and the working tree's
	// would judge the work. The re-check confirms the place by the two real paths it is made of.
	for _, d := range []string{repo.Top(), projectDir} {
		real, err := fsutil.RealPath(d)
		note(policyRead{kind: readReal, name: d, found: real, err: err})
	}
	prefix, ok := projectPrefixOf(repo.Top(), projectDir)
	in.rootIn = &rootPlace{top: repo.Top(), paths: projectPaths{prefix: prefix, within: ok}}
	if !ok {
		return nil, "", false, false, fmt.Errorf("read .geas/%s at base %s: the project root %s is not inside the repository %s", policy.File, short(sha), projectDir, repo.Top())
	}
	name := prefix + ".geas/" + policy.File
	from = fmt.Sprintf(".geas/%s at base %s", policy.File, sha)
	data, found, err = repo.ReadFileAt(sha, name, policy.MaxBytes)
	note(policyRead{kind: readAt, name: name, at: sha, found: sumIf(data, found), err: err})
	if err != nil {
		return nil, from, false, false, fmt.Errorf("read %s: %w", from, err)
	}
	if found {
		return data, from, true, false, nil
	}
	head, err := repo.Resolve(headRev)
	note(policyRead{kind: readResolve, name: headRev, found: head, err: err})
	if err == nil {
		data, atHead, err := repo.ReadFileAt(head, name, policy.MaxBytes)
		note(policyRead{kind: readAt, name: name, at: head, found: sumIf(data, atHead), err: err})
		if err != nil || atHead {
			// Added by the work under review (or unreadable there): it does not judge the work.
			return nil, fmt.Sprintf("built-in defaults: .geas/%s is not in base %s, it was added by the work under review", policy.File, short(sha)), false, true, nil
		}
	}
	return nil, "", false, false, nil
}

// sumIf is the sha256 of data when a read found it (canon.SumHex), else "": what a policyRead
// records.
func sumIf(data []byte, found bool) string {
	if !found {
		return ""
	}
	return canon.SumHex(data)
}

// resolveBase resolves the contract's base_snapshot once for the run and keeps the answer in
// in.BaseCommit and in.BaseErr; it returns the full SHA, or "" when the base does not resolve.
func (in *Snapshot) resolveBase(repo *git.Repo, base string) string {
	if !in.baseResolved {
		in.BaseCommit, in.BaseErr = repo.Resolve(base)
		in.baseResolved = true
	}
	return in.BaseCommit
}
