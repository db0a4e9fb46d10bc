package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// maxResultBytes bounds the result.json Complete reads: what the gate may record (SPEC §10).
const maxResultBytes = record.MaxBytes

// Complete finishes what the task's latest history entry implies and the files do not show yet
// (SPEC §7.3): after a crash, or a write that failed after the commit point, the next command
// that takes the task's lock calls it first. The caller holds the lock. For a gate run it writes
// gate_result, the transition, the pending decision and the events that are missing; for a
// revocation its transition and events; for a budget grant or a history reset its event; for a rules
// approval its pinned copy (when the rules are still those it approved) and its event. Every
// write is keyed by the entry (its hash, or the run id of events logged without one), so
// Complete run twice writes nothing the second time. A torn last line of the history is cut
// first. It builds on nothing that does not verify: a history whose chain (or, with the key,
// whose signatures) fail is left to the gate's history check, and a result.json that does not
// match its entry is not used. It returns what it did, as notes.
//
// A gate run is completed by the same plan of writes its commit applied (tiers.PlanResult,
// record.Ledger): what the files already hold of it is read back, and the ledger writes the rest.
//
// held, when not nil, says whether the caller's task lock is still held (fsutil.Lock.Held): every
// write asks it first, and nothing more is written once it fails.
func Complete(p *project.Project, mission, task, taskDir string, now time.Time, held func() error) ([]string, error) {
	notes, _, err := complete(p, mission, task, taskDir, now, held, nil)
	return notes, err
}

// complete is Complete that also returns the records as it read them (tiers.ReadRecords) when it
// wrote nothing, so that the run under the same lock judges that read instead of reading the task's
// files again; nil when it wrote something (or failed), and the caller reads them afresh. The
// records are read through shared (the handles of geas gate --all) when set. It reads no other
// task: a command that evaluates nothing has no use for them.
func complete(p *project.Project, mission, task, taskDir string, now time.Time, held func() error, shared *tiers.Shared) ([]string, *loadedRecord, error) {
	return completeRun(p, mission, task, taskDir, now, held, shared, nil)
}

// completeRun is complete for a gate run that judges the contract k, read under the lock (the
// completion uses it rather than reading it again): with a base, the mission's other tasks are
// read in the same step as this task's records (tiers.ReadRecords); nil k reads no other task.
func completeRun(p *project.Project, mission, task, taskDir string, now time.Time, held func() error, shared *tiers.Shared, k *tiers.Loaded) ([]string, *loadedRecord, error) {
	var judged *contract.Contract
	if k != nil && k.Err == nil {
		judged = k.Contract
	}
	reads := tiers.ReadRecords(p, mission, task, taskDir, judged, shared)
	if reads.Err != nil {
		// nothing readable to complete; the command reports the record itself
		return nil, &loadedRecord{err: reads.Err, events: reads.Events, contract: k, reads: reads}, nil
	}
	name := taskDir + "/" + record.RecordFile
	notes, kc, err := completeLoaded(p, mission, task, taskDir, name, reads, k, now, held)
	if len(notes) > 0 || err != nil {
		return notes, nil, err
	}
	return nil, &loadedRecord{rec: reads.Record, contract: kc, facts: reads.Facts, events: reads.Events, reads: reads}, nil
}

// loadedRecord is record.Load's answer for a task's record.json, the facts the completion
// computed of it (record.FactsOf, with the signing key), the task's events it read of the event
// log (nil: it did not read them), the task's contract when the completion read it too
// (contract.Load's answer; nil when it did not), and everything the records' read found (the
// other tasks among it).
type loadedRecord struct {
	rec      *record.Record
	err      error
	facts    *record.Facts
	events   *tiers.TaskEvents
	contract *tiers.Loaded
	reads    *tiers.Records
}

// completeLoaded is Complete on the records it read; it also returns the contract it judged (k's,
// or its own read of it; nil when it read none).
func completeLoaded(p *project.Project, mission, task, taskDir, name string, reads *tiers.Records, k *tiers.Loaded, now time.Time, held func() error) ([]string, *tiers.Loaded, error) {
	geas := p.Geas
	rec, facts := reads.Record, reads.Facts
	rec.Guard(held) // nil: not checked
	var notes []string
	if rec.HistoryTorn() {
		if err := rec.CutTornHistory(geas, name); err != nil {
			return notes, k, err
		}
		notes = append(notes, fmt.Sprintf("cut a torn last line of %s (a run killed while appending it, which did not happen)", record.HistoryFile))
	}
	if len(facts.History) == 0 || facts.ChainErr != nil || len(facts.BadSignatures) > 0 {
		return notes, k, nil
	}
	hist := facts.History
	if reads.Keys == nil {
		return notes, k, nil // the events cannot be read: nothing can be told missing
	}
	c := &completion{p: p, geas: geas, mission: mission, task: task, taskDir: taskDir, name: name, rec: rec, facts: facts, keys: reads.Keys, held: held, now: now, contract: k, reads: reads}
	last := hist[len(hist)-1]
	var err error
	switch last.Kind {
	case "", record.KindGateRun:
		err = c.gateRun(last)
	case record.KindRevocation:
		err = c.revocation(last)
	case record.KindBudgetGrant:
		err = c.grant(last)
	case record.KindHistoryReset:
		err = c.reset(last)
	case record.KindApproval:
		err = c.approval(last)
	}
	return append(notes, c.notes...), c.contract, err
}

type completion struct {
	p                      *project.Project
	geas                   *os.Root
	mission, task, taskDir string
	name                   string
	rec                    *record.Record
	facts                  *record.Facts // of rec as read, before the completion wrote anything
	keys                   *record.EventKeys
	held                   func() error
	now                    time.Time
	notes                  []string
	contract               *tiers.Loaded  // the contract the run judges, or as gateRun read it; nil until then
	reads                  *tiers.Records // what was read of the records before the completion
}

// result returns the full result of the run e: record.json's gate_result when it is that run's,
// else the run's result.json when it is. A result that names another run, another hash or
// another verdict is not the run's.
func (c *completion) result(e record.HistoryEntry) (*tiers.Result, json.RawMessage, bool) {
	read := func(raw []byte) (*tiers.Result, json.RawMessage, bool) {
		var res tiers.Result
		if json.Unmarshal(raw, &res) != nil || res.RunID != e.RunID || res.Hash != e.Hash || string(res.Verdict) != e.Verdict {
			return nil, nil, false
		}
		return &res, bytes.TrimSpace(raw), true
	}
	if c.facts.HaveGateResult {
		if res, raw, ok := read(c.facts.GateResult); ok {
			return res, raw, true
		}
	}
	raw, err := fsutil.ReadLimited(c.geas, record.ResultFile(c.taskDir, e.RunID), maxResultBytes)
	if err != nil {
		return nil, nil, false
	}
	return read(raw)
}

// gateRun completes a recorded gate run: it derives the run's plan from its entry and result, as
// the run did (tiers.PlanResult), sees what the files already hold of it, and has the ledger write
// the rest.
func (c *completion) gateRun(e record.HistoryEntry) error {
	// The task's first recorded run pins the rules it read (SPEC §4.4): its copy, if it is missing.
	pin, pinned := c.facts.Pin, c.facts.Pinned
	pins := pinned && pin.Entry.Hash == e.Hash && e.RulesSHA256 != ""
	res, raw, ok := c.result(e)
	if !ok {
		if pins {
			// A run recorded by an earlier version, or whose result is gone: nothing to derive
			// from but its pin.
			plan := &record.Plan{Mission: c.mission, Task: c.task, TaskDir: c.taskDir, RunID: e.RunID, Hash: e.Hash, PinBy: "gate run " + e.RunID, PinRules: e.RulesSHA256}
			return c.apply(plan, c.found(plan, nil), "complete the pin of entry "+canon.Short(e.Hash))
		}
		return nil
	}
	if c.contract == nil {
		k, kerr := contract.Load(c.geas, c.taskDir+"/"+record.ContractFile)
		c.contract = &tiers.Loaded{Contract: k, Err: kerr}
	}
	k, kerr := c.contract.Contract, c.contract.Err
	if kerr != nil || k.TaskID != c.task {
		k = nil
	}
	policy := ""
	if k != nil {
		policy = k.EscalationPolicy
	}
	plan, err := tiers.PlanResult(c.mission, c.task, c.taskDir, res, raw, c.rec.History(), pins, policy, c.now)
	if err != nil {
		return err
	}
	if t := res.Transition; t != nil && !c.transitionFollows(e, res, t) {
		plan = plan.Unmoved() // a result.json edited to claim a transition its entry does not imply
	}
	f := c.found(plan, k)
	if gr, ok := c.facts.GateResult, c.facts.HaveGateResult; c.rec.ResultPending() || (!ok || !bytes.Equal(bytes.TrimSpace(gr), raw)) && c.gateResultIsBefore(e) {
		f.ResultMissing = true
	}
	return c.apply(plan, f, "complete "+e.RunID)
}

// found is what the task's files hold of plan: the events logged, the contract k (nil: it cannot
// be read) and, when the plan pins, whether the pinned copy holds its rules.
func (c *completion) found(plan *record.Plan, k *contract.Contract) record.Found {
	f := record.Found{Keys: c.keys}
	if k != nil {
		f.Contract, f.Status = k.Raw, k.Status
	}
	switch {
	case plan.PinBy == "":
	case c.reads.PinnedFor != "" && c.reads.PinnedFor == plan.PinRules:
		f.Pinned = c.reads.PinnedHolds // read with the records, for the rules this entry pins
	default:
		f.Pinned = record.PinnedHolds(c.geas, c.taskDir, plan.PinRules, tiers.PinnedMaxBytes)
	}
	return f
}

// apply has the ledger write what f shows is missing of plan, noting what it wrote; what names the
// completion in an error.
func (c *completion) apply(plan *record.Plan, f record.Found, what string) error {
	l := &record.Ledger{Geas: c.geas, Record: c.rec, Held: c.held, Now: c.now}
	l.Rules = func(want string) (map[string]any, bool) {
		return tiers.RulesNow(c.p, c.mission, c.task, c.taskDir, want)
	}
	applied := l.Apply(plan, f)
	c.notes = append(c.notes, applied.Done...)
	if err := applied.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// gateResultIsBefore reports whether record.json's gate_result is what it was just before the
// run e was recorded: the previous gate run's, or none when e is the first. Only then is it
// replaced (the state a crash between the history append and the record write leaves); any other
// gate_result that does not match the chain is left for the history check to report as tampered.
func (c *completion) gateResultIsBefore(e record.HistoryEntry) bool {
	hist := c.rec.History()
	want := ""
	for i := len(hist) - 2; i >= 0; i-- {
		if hist[i].IsGateRun() {
			want = hist[i].Hash
			break
		}
	}
	if c.keys.Has(record.EventGateResult, e.Hash, "") {
		return false // logged after record.json was written: a later change, not a crash
	}
	raw, ok := c.facts.GateResult, c.facts.HaveGateResult
	if !ok {
		return want == ""
	}
	var gr struct {
		Hash string `json:"hash"`
	}
	if json.Unmarshal(raw, &gr) != nil {
		return false
	}
	return want != "" && gr.Hash == want
}

// transitionFollows reports whether the transition t is one the entry e implies (SPEC §7.2), as
// the run that recorded e would have made it (tiers.Budget): a move the state machine allows, to
// verified only on a pass, to escalated only on a fail that spent the budget, to blocked only on
// an error that is the consecutive-error limit's with one cause. A result.json is agent-writable,
// so what it claims is checked against the entry and the history, never taken on its word.
func (c *completion) transitionFollows(e record.HistoryEntry, res *tiers.Result, t *tiers.Transition) bool {
	if vocab.CheckTransition(t.From, t.To, true) != nil {
		return false
	}
	switch t.To {
	case vocab.Verified:
		return res.Verdict.IsPass() // res is e's run: its verdict is the entry's (completion.result)
	case vocab.Escalated:
		return e.Verdict == string(vocab.VerdictFail) && e.RetryBudgetAfter != nil && *e.RetryBudgetAfter == 0
	case vocab.Blocked:
		if e.Verdict != string(vocab.VerdictError) {
			return false
		}
		// e is the history's latest entry: the errors counted end with it.
		return c.facts.ErrorStreak >= c.errorLimit()
	}
	return false
}

// errorLimit is the consecutive-error limit of the task's policy as a run reads it (the defaults
// when it cannot be read, as the run then judges by them). Read only for a result that claims a
// move to blocked.
func (c *completion) errorLimit() int {
	in := tiers.GatherOwn(c.p, c.mission, c.task, c.taskDir)
	in.Release()
	return in.Policy.ConsecutiveErrorLimit
}

// revocation completes a recorded revocation (geas gate verify --apply), in the order
// applyRevocation writes: a verified task moves back to its gate state, then the revocation and
// the transition events are logged.
func (c *completion) revocation(e record.HistoryEntry) error {
	state := vocab.State(record.ExtraString(e, "state"))
	var k *contract.Contract
	var to vocab.State
	if state == vocab.Verified && !c.keys.Has(record.EventTaskTransition, e.Hash, e.RunID) {
		if got, err := contract.Load(c.geas, c.taskDir+"/"+record.ContractFile); err == nil && got.TaskID == c.task {
			k, to = got, tiers.GateState(got.GateProfile)
			if k.Status == state {
				if err := vocab.CheckTransition(vocab.Verified, to, true); err != nil {
					return err
				}
			}
		}
	}
	plan, err := record.PlanRevocation(c.mission, c.task, c.taskDir, e, state, to)
	if err != nil {
		return err
	}
	return c.apply(plan, c.found(plan, k), "complete revocation "+e.RunID)
}

// afterRevocation writes what follows from the revocation entry just recorded (SPEC §7.2): the
// plan the completion would apply (record.PlanRevocation), through the same ledger. A revoked
// verified task moves back to its profile's gate state; a passed task is terminal, and a task
// whose contract cannot be read is not moved: both are notes. A write that fails is a note too
// (the next command on the task completes it). It returns the transition made, if any.
func afterRevocation(t Task, rep *VerifyReport, entry record.HistoryEntry, now time.Time, held func() error) (*tiers.Transition, []string, error) {
	from := vocab.State(rep.State)
	var notes []string
	var k *contract.Contract
	var to vocab.State
	switch from {
	case vocab.Verified:
		got, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
		if err != nil {
			notes = append(notes, fmt.Sprintf("contract.json cannot be read (%v): the state is not changed", err))
			break
		}
		k, to = got, tiers.GateState(got.GateProfile)
		if err := vocab.CheckTransition(from, to, true); err != nil {
			return nil, nil, err
		}
	case vocab.Passed:
		notes = append(notes, "passed is terminal: the revocation is recorded, the state is not changed")
	default:
		notes = append(notes, "contract.json cannot be read: the revocation is recorded, the state is not changed")
	}
	plan, err := record.PlanRevocation(rep.MissionID, rep.TaskID, t.Dir, entry, from, to)
	if err != nil {
		return nil, nil, err
	}
	found := record.Found{}
	if k != nil {
		// What the revocation read under the lock: the state it revoked.
		found.Contract, found.Status = k.Raw, from
	}
	applied := (&record.Ledger{Geas: t.Project.Geas, Held: held, Now: now}).Apply(plan, found)
	for _, f := range applied.Failed {
		switch f.Step {
		case record.StepMove:
			notes = append(notes, fmt.Sprintf("%v: the next command on the task completes it", f.Err))
		case record.StepEvent:
			notes = append(notes, fmt.Sprintf("the %s event was not logged (%v): the next command on the task logs it", f.What, errors.Unwrap(f.Err)))
		case record.StepLock:
			notes = append(notes, fmt.Sprintf("the revocation is recorded, but the rest of its writes were not made (%v): the next command on the task completes them", f.Err))
		}
	}
	var moved *tiers.Transition
	if applied.Moved {
		moved = &tiers.Transition{From: from, To: to}
	}
	return moved, notes, nil
}

// grant completes a recorded budget grant: its event.
func (c *completion) grant(e record.HistoryEntry) error {
	return c.entry(e, "budget grant")
}

// reset completes a recorded history reset: its event.
func (c *completion) reset(e record.HistoryEntry) error {
	return c.entry(e, "history reset")
}

// approval completes a recorded rules approval: the pinned copy, and its event.
func (c *completion) approval(e record.HistoryEntry) error {
	return c.entry(e, "rules approval")
}

// entry completes an authority's entry e (record.PlanEntry): what names it in an error.
func (c *completion) entry(e record.HistoryEntry, what string) error {
	plan, err := record.PlanEntry(c.mission, c.task, c.taskDir, e)
	if err != nil {
		return err
	}
	return c.apply(plan, c.found(plan, nil), "complete the "+what)
}
