package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Task names one task of an opened project.
type Task struct {
	Project *project.Project
	Mission string
	ID      string
	Dir     string // the task directory relative to .geas
}

// Options are the choices of one gate run.
type Options struct {
	// DryRun computes the verdict without the task lock and writes nothing.
	DryRun bool
	// KeepGoing (SPEC §5): the stages not reached run anyway and what they find is advisory.
	KeepGoing bool
	// Progress receives the eval commands' output as they run; nil for none.
	Progress tiers.Progress

	// contract is the task's contract as geas gate --all read it to triage the task, for a dry
	// run (which takes no lock, so that read is as good as another): nil, read it.
	contract *tiers.Loaded
	// shared is what geas gate --all shares between its tasks (tiers.Shared): the event log's
	// index, the policy and the debt register; nil: the run reads them itself.
	shared *tiers.Shared
}

// Lock takes the task's exclusive lock, then completes what the task's latest recorded entry
// implies (SPEC §7.3: a run, a revocation or a grant cut short by a crash or a failed write),
// which every command that takes the lock does first. It returns what the completion did, as
// notes, also when it fails; the caller unlocks.
func Lock(ctx context.Context, t Task) (*fsutil.Lock, []string, error) {
	lock, notes, _, err := lockTask(ctx, t, nil)
	return lock, notes, err
}

// runContract is the task's contract a gate run judges, read under its task lock: the one geas
// gate --all's triage read, while contract.json still holds those bytes (sameContract), else
// contract.Load's answer.
func runContract(t Task, o *Options) *tiers.Loaded {
	var k *tiers.Loaded
	if o.contract != nil && sameContract(t.Project, t, o.contract) {
		c := *o.contract // a copy: a run started again must not find this one's record in it
		// Under the lock the task directory is opened afresh: the triage's handle is that of the
		// directory as it was before the lock, which may no longer be the one at its path.
		c.Dir = nil
		k = &c
	} else {
		k = &tiers.Loaded{}
		k.Contract, k.Err = contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	}
	return k
}

// lockTask is Lock that also returns the task's records (and contract) as the completion read
// them, when it wrote nothing: under the lock, that read is the run's (nil: read them again).
// o, for a gate run (nil for any other command), says what the run shares (Options.shared: under
// geas gate --all, the handles of the task's files an earlier run read) and the contract the
// triage read: the run's contract is read first, under the lock (runContract), and with a base
// the mission's other tasks are read in the same step as this task's records (tiers.ReadRecords).
func lockTask(ctx context.Context, t Task, o *Options) (*fsutil.Lock, []string, *loadedRecord, error) {
	lock, err := record.LockTask(ctx, t.Project.Geas, t.Dir)
	if err != nil {
		return nil, nil, nil, err
	}
	var shared *tiers.Shared
	var k *tiers.Loaded
	if o != nil {
		shared, k = o.shared, runContract(t, o)
	}
	notes, loaded, err := completeRun(t.Project, t.Mission, t.ID, t.Dir, time.Now(), lock.Held, shared, k)
	if err != nil {
		lock.Unlock()
		return nil, notes, nil, fmt.Errorf("task %s: complete the last recorded entry: %w", t.ID, err)
	}
	return lock, notes, loaded, nil
}

// Run runs the gate once on a task: under the task lock unless o.DryRun, evaluation, budget, and
// (unless o.DryRun) the writes of SPEC §7. A task whose state is verified or passed is re-checked
// instead (Recheck, still under the lock), which writes nothing whatever o.DryRun says. An
// error means the gate could not run at all (exit 3), for instance tiers.ErrInterrupted;
// verdicts, even error, come back as results.
//
// A run whose task lock is lost before its commit point (the lock file removed or replaced, so
// that another run may have locked the task meanwhile: fsutil.ErrLockLost) has written nothing;
// it starts again from the lock, reading everything afresh, at most maxLockLostRuns times, and
// says so in a note. The run it then makes may be a repeat of the other run's attempt (SPEC §7.1).
func Run(ctx context.Context, t Task, o Options) (*tiers.Result, error) {
	if err := record.SigningKeyErr(); err != nil {
		return nil, err // a key that cannot be read is never taken for no key
	}
	var lost []string
	for i := 1; ; i++ {
		res, err := runOnce(ctx, t, o)
		if err == nil || !errors.Is(err, fsutil.ErrLockLost) || o.DryRun || i >= maxLockLostRuns {
			if res != nil && len(lost) > 0 {
				res.Notes = append(lost, res.Notes...)
			}
			return res, err
		}
		lost = append(lost, fmt.Sprintf("run %d of this gate recorded nothing and was started again: %v", i, err))
	}
}

// maxLockLostRuns bounds how often Run starts again after losing its task lock: an agent that
// keeps removing the lock file gets an error, not an endless loop.
const maxLockLostRuns = 3

// runOnce is one attempt of Run.
func runOnce(ctx context.Context, t Task, o Options) (*tiers.Result, error) {
	var completed []string
	var held func() error
	var loaded *loadedRecord
	if !o.DryRun {
		lock, notes, l, err := lockTask(ctx, t, &o)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		completed, held, loaded = notes, lock.Held, l
	}
	res, err := run(ctx, t, o, held, loaded)
	if res != nil && len(completed) > 0 {
		res.Notes = append(slices.Clone(completed), res.Notes...)
	}
	return res, err
}

// sameContract reports whether the contract geas gate --all's triage read before the task lock
// is still what the task's contract.json holds: read again through the handle the triage kept,
// while the path still names that file (fsutil.HeldFile), and compared byte for byte. A contract
// the triage could not read or parse is never the same: the run reads it under the lock.
func sameContract(p *project.Project, t Task, k *tiers.Loaded) bool {
	if k.Contract == nil || k.Err != nil {
		return false
	}
	data, ok, err := k.Held.ReadAgain(p.Geas, t.Dir+"/"+record.ContractFile, contract.MaxBytes)
	return ok && err == nil && bytes.Equal(data, k.Contract.Raw)
}

// run is Run once the lock is held (or not needed); held checks that it still is (nil: no lock).
// loaded is what the completion under the lock read of the task (nil: nothing to reuse).
func run(ctx context.Context, t Task, o Options, held func() error, loaded *loadedRecord) (*tiers.Result, error) {
	p := t.Project
	var k *tiers.Loaded
	if loaded != nil && loaded.contract != nil {
		c := *loaded.contract // read under the lock before the completion, which wrote nothing
		k = &c
	}
	if k == nil && o.contract != nil && (held == nil || sameContract(p, t, o.contract)) {
		c := *o.contract // a copy: a run started again must not find this one's record in it
		if held != nil {
			// Under the lock the task directory is opened afresh: the triage's handle is that of
			// the directory as it was before the lock, which may no longer be the one at its path.
			c.Dir = nil
		}
		k = &c
	}
	if k == nil {
		k = &tiers.Loaded{}
		k.Contract, k.Err = contract.Load(p.Geas, t.Dir+"/"+record.ContractFile)
	}
	if loaded != nil {
		k.Record, k.RecordErr, k.RecordRead, k.Facts, k.TaskEvents = loaded.rec, loaded.err, true, loaded.facts, loaded.events
		k.Others, k.OthersRead = loaded.reads.Others, loaded.reads.OthersRead
	}
	k.Shared = o.shared // a re-check's reads too go through what --all shares
	if k.Err == nil && k.Contract.TaskID == t.ID && k.Contract.Status.IsFinished() {
		return recheck(ctx, p, t.Mission, t.ID, t.Dir, o.shared.EventIndex(), k) // SPEC §7.2: writes nothing
	}
	start := time.Now()
	in := tiers.GatherLoaded(p, t.Mission, t.ID, t.Dir, *k) // the contract read once
	defer in.Release()                                      // the repository, unless Evaluate took it
	in.Held = held
	opts := tiers.Options{RunID: tiers.NextRunID(in.Record), DryRun: o.DryRun, Now: start, Progress: o.Progress, KeepGoing: o.KeepGoing}
	logDir := ""
	if held != nil {
		if err := held(); err != nil { // lost while gathering: start again before running anything
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	if !o.DryRun {
		if in.Record == nil {
			opts.RunID = "gate-" + start.UTC().Format("20060102T150405")
		}
		logDir = t.Dir + "/gate-logs/" + opts.RunID
		logRoot, err := openLogDir(p.Geas, logDir)
		if err != nil {
			return nil, err
		}
		defer logRoot.Close()
		opts.LogRoot = logRoot
		opts.LogDirName = ".geas/" + logDir
	}
	discard := func() {
		if logDir != "" {
			_ = p.Geas.RemoveAll(logDir)
		}
	}
	res, err := tiers.Evaluate(ctx, in, tiers.DefaultEnv(), opts)
	if err != nil {
		discard()
		return nil, err
	}
	if res.RefusedByEvaluation() || res.RepeatOf != "" {
		// Refused before anything ran, or the same attempt as the latest recorded run (SPEC
		// §7.1): nothing is written, not even its log directory.
		discard()
	}
	escalate := tiers.Budget(in, res)
	if o.DryRun {
		return res, nil
	}
	if ctx.Err() != nil {
		discard()
		return nil, tiers.ErrInterrupted
	}
	if err := tiers.Apply(in, res, escalate, opts.LogRoot, time.Now()); err != nil {
		return nil, err
	}
	return res, nil
}
