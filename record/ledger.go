package record

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/vocab"
)

// Found is what the task's files already hold of a plan, as the caller observed them under the
// task lock: right after the commit from what it wrote, in a completion from the files.
type Found struct {
	// Keys are the events logged already (nil: none).
	Keys *EventKeys
	// Contract is the task's contract as read, and Status its status; nil and "" when it cannot
	// be read (the move and the escalation are then not made).
	Contract []byte
	Status   vocab.State
	// ResultMissing: record.json does not hold the plan's gate_result and is to be given it.
	ResultMissing bool
	// ResultFailed: writing record.json failed after the commit point (the gate_result,
	// task_transition and escalation events wait for the next command, which writes it).
	ResultFailed error
	// Pinned: the pinned copy holds the plan's rules already.
	Pinned bool
}

// EventKeys is what the event log holds for one task, for completing a run's derived writes
// (SPEC §7.3): which events the gate logged, by type, for which history entry (data.hash) or,
// for events logged without a hash by earlier versions, which run (data.run_id). The ledger
// asks it what Found.Keys holds; TaskEvents (events_keys.go) fills it from the log.
type EventKeys struct {
	byHash map[string]bool // type + "\x00" + hash
	byRun  map[string]bool // type + "\x00" + run_id, events without a hash
}

// Has reports whether an event of type typ was logged for the entry with hash, or, when it was
// logged without a hash, for runID.
func (k *EventKeys) Has(typ, hash, runID string) bool {
	if k == nil {
		return false
	}
	return k.byHash[typ+"\x00"+hash] || (runID != "" && k.byRun[typ+"\x00"+runID])
}

// Ledger is the one writer of what a task's history implies (SPEC §7.3): gate_result, the
// pinned copy, the contract's status, the pending decision and the events. The caller holds the
// task lock; Held (when not nil) is asked before each write, and nothing more is written once it
// fails (fsutil.ErrLockLost).
type Ledger struct {
	Geas   *os.Root
	Record *Record // the task's record; gate_result is written through it
	Held   func() error
	Now    time.Time
	// Rules returns the task's rules when they digest to want (for the pinned copy); nil, or
	// false, pins nothing.
	Rules func(want string) (map[string]any, bool)
}

// Applied is what Ledger.Apply did: Done says what it wrote, one line a write; Failed what it
// could not write, each of which the next command on the task retries.
type Applied struct {
	Done   []string
	Failed []Failure
	// Logged are the event types logged, in order.
	Logged []string
	// Moved: the task is in the plan's Move.To state, moved by this apply or an earlier one.
	Moved bool
}

// Step names a write of a plan.
type Step string

// The writes of a plan, and StepLock for the task lock found lost before one.
const (
	StepRecord   Step = "record"   // record.json with the run's gate_result
	StepPin      Step = "pin"      // the pinned copy of the rules
	StepMove     Step = "move"     // the contract's status
	StepDecision Step = "decision" // the pending decision of an escalation
	StepEvent    Step = "event"    // an event
	StepLock     Step = "lock"     // the task lock was lost: nothing more was written
)

// Failure is a write of a plan that failed.
type Failure struct {
	Step Step
	What string // the file or event type
	Err  error
}

func (a *Applied) fail(step Step, what string, err error) {
	a.Failed = append(a.Failed, Failure{Step: step, What: what, Err: err})
}

func (a *Applied) done(format string, args ...any) {
	a.Done = append(a.Done, fmt.Sprintf(format, args...))
}

// Err is the first failure, or nil.
func (a *Applied) Err() error {
	if len(a.Failed) == 0 {
		return nil
	}
	return a.Failed[0].Err
}

// Commit records the gate run whose plan is p. It sets l.Record's gate_result to p.Result and its
// history to p.History, which ends with the run's entry (SetGateSections, validated before
// anything is written: a result the record cannot hold writes nothing at all), writes the run's
// full result to result.json (in logDir, the run's log directory as the run opened it, when not
// nil), then the task's files (Record.Write), whose history append is the commit point (SPEC
// §7.3), then applies p with what the run read of the files (f). An error means nothing was
// recorded; from the commit point on, what fails is in the returned Applied, a "record" failure
// first when record.json could not be written (the next command writes it).
func (l *Ledger) Commit(p *Plan, logDir *os.Root, f Found) (*Applied, error) {
	if err := l.Record.SetGateSections(p.Result, p.History, l.Now); err != nil {
		return nil, fmt.Errorf("record the gate result: %w", err)
	}
	// A run whose task lock was removed or replaced may share the task with another run that
	// locked the new file: it records nothing (the history append checks again, under the
	// history file's lock, right before the commit point).
	if l.Held != nil {
		if err := l.Held(); err != nil {
			return nil, fmt.Errorf("record the run: nothing written: %w", err)
		}
		l.Record.Guard(l.Held)
	}
	root, name := l.Geas, ResultFile(p.TaskDir, p.RunID)
	if logDir != nil {
		root, name = logDir, path.Base(name)
	}
	if err := fsutil.WriteFileAtomic(root, name, append(bytes.Clone(p.Result), '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write the run's result: %w", err)
	}
	var failed *Failure
	if err := l.Record.Write(l.Geas, path.Join(p.TaskDir, RecordFile)); err != nil {
		if !l.Record.Recorded(p.Hash) {
			return nil, fmt.Errorf("record the run in %s: %w", HistoryFile, err)
		}
		// The run's events are logged only after record.json holds its gate_result (a logged
		// gate_result event tells a reader the record was written): the next command logs them.
		f.ResultFailed = err
		failed = &Failure{Step: StepRecord, What: RecordFile, Err: err}
	}
	applied := l.Apply(p, f)
	if failed != nil {
		applied.Failed = append([]Failure{*failed}, applied.Failed...)
	}
	return applied, nil
}

// name is how the ledger's notes name p's entry.
func (p *Plan) name() string {
	if p.Name != "" {
		return p.Name
	}
	return p.RunID
}

// Apply writes what f shows is missing of p, in order: gate_result, the pinned copy, the move of
// the contract's status, the pending decision, the events. A write that fails skips what must
// not claim it (a task_transition event without the move, an escalation event without its
// decision, the run's events before record.json holds its gate_result); the rest is written.
// A lost lock stops everything.
func (l *Ledger) Apply(p *Plan, f Found) *Applied {
	a := &Applied{}
	skip := map[string]bool{}
	lost := func() bool {
		if l.Held == nil {
			return false
		}
		if err := l.Held(); err != nil {
			a.fail(StepLock, "", err)
			return true
		}
		return false
	}
	if f.ResultFailed != nil {
		skip[EventGateResult], skip[EventTaskTransition], skip[EventEscalation] = true, true, true
	}
	if p.Result != nil && f.ResultMissing && l.Record != nil {
		if lost() {
			return a
		}
		err := l.Record.SetGateResult(p.Result, l.Now)
		if err == nil {
			err = l.Record.Write(l.Geas, path.Join(p.TaskDir, RecordFile))
		}
		if err != nil {
			a.fail(StepRecord, RecordFile, err)
			skip[EventGateResult], skip[EventTaskTransition], skip[EventEscalation] = true, true, true
		} else {
			a.done("wrote gate_result of %s to record.json", p.RunID)
		}
	}
	if p.PinBy != "" && !f.Pinned && l.Rules != nil {
		if rules, ok := l.Rules(p.PinRules); ok {
			if lost() {
				return a
			}
			doc := PinnedCopy{RulesSHA256: p.PinRules, PinnedBy: p.PinBy, PinnedAt: Timestamp(l.Now), Rules: rules}
			if err := WritePinned(l.Geas, p.TaskDir, doc); err != nil {
				a.fail(StepPin, PinnedFile, err)
			} else {
				a.done("wrote %s, the rules entry %.12s pinned", PinnedFile, p.Hash)
			}
		}
	}
	escalate := p.Decision != nil
	if m := p.Move; m != nil {
		switch {
		case f.Keys.Has(EventTaskTransition, p.Hash, p.RunID):
			skip[EventTaskTransition] = true
		case f.Contract == nil:
			skip[EventTaskTransition], skip[EventEscalation] = true, true
			escalate = false
		case f.Status == m.From:
			if lost() {
				return a
			}
			if _, err := WriteContractStatus(l.Geas, p.TaskDir, f.Contract, m.To, l.Now); err != nil {
				a.fail(StepMove, ContractFile, fmt.Errorf("the task's state was not moved %s -> %s (%w)", m.From, m.To, err))
				// The transition's event must not claim a move that did not happen.
				skip[EventTaskTransition], skip[EventEscalation] = true, true
				escalate = false
			} else {
				a.done("moved the task %s -> %s, as %s decided", m.From, m.To, p.name())
				a.Moved = true
			}
		case f.Status == m.To:
			a.Moved = true // moved before a crash; its event may be what is missing
		default:
			// The task has moved on since (an authority's transition): the run's move is history.
			skip[EventTaskTransition] = true
		}
	}
	if escalate && !skip[EventEscalation] {
		if f.Keys.Has(EventEscalation, p.Hash, p.RunID) {
			skip[EventEscalation] = true
		} else {
			if lost() {
				return a
			}
			_, err := WriteDecision(l.Geas, p.Mission, p.Decision)
			switch {
			case err == nil:
				a.done("wrote the escalation decision of %s", p.RunID)
			case !errors.Is(err, fs.ErrExist):
				a.fail(StepDecision, PendingDecisionFile(p.Mission, p.DecisionID), fmt.Errorf("write escalation decision: %w", err))
				skip[EventEscalation] = true
			}
		}
	}
	for _, ev := range p.Events {
		if skip[ev.EventType] || p.Hash != "" && f.Keys.Has(ev.EventType, p.Hash, "") {
			continue // not to be claimed, or logged already for the entry
		}
		if lost() {
			return a
		}
		if err := AppendEvent(l.Geas, ev); err != nil {
			a.fail(StepEvent, ev.EventType, fmt.Errorf("log %s event: %w", ev.EventType, err))
			return a
		}
		a.Logged = append(a.Logged, ev.EventType)
		a.done("logged the %s event of %s", ev.EventType, p.name())
	}
	return a
}
