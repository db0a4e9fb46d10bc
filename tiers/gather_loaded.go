package tiers

import (
	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// Loaded is a task's contract as a caller already read it for this run: what contract.Load of
// the task's contract.json returned.
type Loaded struct {
	Contract *contract.Contract
	Err      error
	// Dir is the task directory as the caller opened it (fsutil.OpenSubdir of taskDir), for
	// the reads of Gather; nil: Gather opens it. The caller closes it.
	Dir *fsutil.Dir
	// Held is contract.json as the caller read it, kept open, so that a run that takes the task
	// lock after that read confirms it without opening the file again; nil: none. The caller
	// closes it.
	Held *fsutil.HeldFile

	// Record and RecordErr are what record.Load of the task's record.json returned, as the caller
	// read it for this run under the task lock, when RecordRead is set: Gather then judges that
	// read instead of reading the record again.
	Record     *record.Record
	RecordErr  error
	RecordRead bool
	// Facts, when set with RecordRead, are the facts the caller computed of Record with the
	// signing key (record.FactsOf): Gather then hands them to the checks instead of computing
	// them again.
	Facts *record.Facts
	// TaskEvents, when set with RecordRead, are the task's events the caller read of the event
	// log under the same task lock: the history check cross-checks them instead of reading the
	// log again.
	TaskEvents *TaskEvents
	// Shared, when set, is what the run shares with the other runs of one geas gate --all: its
	// reads of the policy and the debt register go through it, and its event index answers the
	// history checks.
	Shared *Shared
	// Others, when OthersRead, are the other tasks of the mission as the run's reads of the
	// records found them (ReadRecords, under the same task lock): Gather judges those instead of
	// reading them again.
	Others     []OtherTask
	OthersRead bool
}

// GatherLoaded is Gather with the contract the caller read (contract.Load of taskDir's
// contract.json, for the same run), so that the file is read and decoded once: every other input
// is read here, and the contract is judged as Gather judges the one it reads (a task_id of
// another task makes it invalid). The repository the read of the policy at the base opened is
// kept for Evaluate's tier 0, which closes it; a caller that may not evaluate the Snapshot calls
// Release.
func GatherLoaded(p *project.Project, mission, task, taskDir string, k Loaded) *Snapshot {
	in := gatherWith(p, mission, task, taskDir, &k, nil)
	if k.Shared != nil {
		in.Events = k.Shared.Events
	}
	in.Rules, in.RulesSHA256, in.RulesErr = rulesOf(in)
	if k.OthersRead {
		in.Others = k.Others // read with this task's record, under the same lock (ReadRecords)
	} else {
		in.readOthers(p)
	}
	return in
}

// Release closes the repository the gather kept open, unless Evaluate took it. Safe to call more
// than once.
func (in *Snapshot) Release() {
	if in.repo != nil {
		in.repo.Close()
	}
	in.repo, in.repoErr = nil, nil
}
