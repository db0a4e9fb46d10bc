package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/geas-dev/geas/contract"
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
// held, when not nil, says whether the caller's task lock is still held (fsutil.Lock.Held): the
// record's writes ask it first (record.Record.Guard).
func Complete(p *project.Project, mission, task, taskDir string, now time.Time, held func() error) ([]string, error) {
	notes, _, err := complete(p, mission, task, taskDir, now, held)
	return notes, err
}

// complete is Complete that also returns the record as it read it (record.Load's answer) when it
// wrote nothing, so that the run under the same lock judges that read instead of reading the task's
// files again; nil when it wrote something (or failed), and the caller reads them afresh.
func complete(p *project.Project, mission, task, taskDir string, now time.Time, held func() error) ([]string, *loadedRecord, error) {
	geas := p.Geas
	name := taskDir + "/record.json"
	rec, err := record.Load(geas, name)
	if err != nil {
		// nothing readable to complete; the command reports the record itself
		return nil, &loadedRecord{err: err}, nil
	}
	notes, k, err := completeLoaded(p, mission, task, taskDir, name, rec, now, held)
	if len(notes) > 0 || err != nil {
		return notes, nil, err
	}
	return nil, &loadedRecord{rec: rec, contract: k}, nil
}

// loadedRecord is record.Load's answer for a task's record.json, and the task's contract when
// the completion read it too (contract.Load's answer; nil when it did not).
type loadedRecord struct {
	rec      *record.Record
	err      error
	contract *tiers.Loaded
}

// completeLoaded is Complete on the record it read; it also returns the contract it read, if it
// read it.
func completeLoaded(p *project.Project, mission, task, taskDir, name string, rec *record.Record, now time.Time, held func() error) ([]string, *tiers.Loaded, error) {
	geas := p.Geas
	if held != nil {
		rec.Guard(held)
	}
	var notes []string
	if rec.HistoryTorn() {
		if err := rec.CutTornHistory(geas, name); err != nil {
			return notes, nil, err
		}
		notes = append(notes, fmt.Sprintf("cut a torn last line of %s (a run killed while appending it, which did not happen)", record.HistoryFile))
	}
	hist := rec.History()
	if len(hist) == 0 || record.VerifyChain(hist) != nil {
		return notes, nil, nil
	}
	if key := record.SigningKey(); key != nil && len(record.VerifySignatures(hist, key)) > 0 {
		return notes, nil, nil
	}
	keys, err := record.TaskEventKeys(geas, mission, task)
	if err != nil {
		return notes, nil, nil // the events cannot be read: nothing can be told missing
	}
	c := &completion{p: p, geas: geas, mission: mission, task: task, taskDir: taskDir, name: name, rec: rec, keys: keys, now: now}
	last := hist[len(hist)-1]
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
	keys                   *record.EventKeys
	now                    time.Time
	notes                  []string
	contract               *tiers.Loaded // the contract as gateRun read it, nil until it does
}

func (c *completion) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
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
	if raw, ok := c.rec.GateResult(); ok {
		if res, raw, ok := read(raw); ok {
			return res, raw, true
		}
	}
	raw, err := fsutil.ReadLimited(c.geas, tiers.ResultFile(c.taskDir, e.RunID), maxResultBytes)
	if err != nil {
		return nil, nil, false
	}
	return read(raw)
}

// gateRun completes a recorded gate run.
func (c *completion) gateRun(e record.HistoryEntry) error {
	// The task's first recorded run pins the rules it read (SPEC §4.4): its copy, if it is missing.
	if pin, ok := record.PinnedRules(c.rec); ok && pin.Entry.Hash == e.Hash && e.RulesSHA256 != "" {
		if err := c.pin(e, "gate run "+e.RunID); err != nil {
			return err
		}
	}
	res, raw, ok := c.result(e)
	if !ok {
		return nil // a run recorded by an earlier version, or whose result is gone: nothing to derive from
	}
	if gr, ok := c.rec.GateResult(); c.rec.ResultPending() || (!ok || !bytes.Equal(bytes.TrimSpace(gr), raw)) && c.gateResultIsBefore(e) {
		if err := c.rec.SetGateResult(raw, c.now); err != nil {
			return err
		}
		if err := c.rec.Write(c.geas, c.name); err != nil {
			return fmt.Errorf("complete %s: write record.json: %w", e.RunID, err)
		}
		c.note("wrote gate_result of %s to record.json", e.RunID)
	}
	k, kerr := contract.Load(c.geas, c.taskDir+"/contract.json")
	c.contract = &tiers.Loaded{Contract: k, Err: kerr}
	in := &tiers.Input{Geas: c.geas, Mission: c.mission, Task: c.task, TaskDir: c.taskDir, Record: c.rec}
	if kerr == nil && k.TaskID == c.task {
		in.Contract = k
	}
	skip := map[string]bool{}
	if t := res.Transition; t != nil {
		switch {
		case c.keys.Has("task_transition", e.Hash, e.RunID):
			skip["task_transition"] = true
		case !transitionFollows(e, res, t):
			// A result.json edited to claim a transition its entry does not imply.
			skip["task_transition"], skip["escalation"] = true, true
		case in.Contract == nil:
			skip["task_transition"], skip["escalation"] = true, true
		case in.Contract.Status == t.From:
			if err := tiers.WriteTransition(in, t, c.now); err != nil {
				return fmt.Errorf("complete %s: %w", e.RunID, err)
			}
			c.note("moved the task %s -> %s, as %s decided", t.From, t.To, e.RunID)
		case in.Contract.Status != t.To:
			// The task has moved on since (an authority's transition): the run's move is history.
			skip["task_transition"] = true
		}
	}
	if res.Escalation != "" && !skip["escalation"] {
		if c.keys.Has("escalation", e.Hash, e.RunID) {
			skip["escalation"] = true
		} else if in.Contract != nil {
			id := fmt.Sprintf("esc-%s-%s", c.task, e.RunID)
			err := tiers.WriteEscalation(in, res, id, c.now)
			switch {
			case err == nil:
				c.note("wrote the escalation decision of %s", e.RunID)
			case !errors.Is(err, fs.ErrExist):
				return fmt.Errorf("complete %s: %w", e.RunID, err)
			}
		}
	}
	if c.keys.Has("gate_result", e.Hash, "") {
		skip["gate_result"] = true
	}
	err := tiers.LogEvents(in, res, skip, func(eventType string) { c.note("logged the %s event of %s", eventType, e.RunID) })
	if err != nil {
		return fmt.Errorf("complete %s: %w", e.RunID, err)
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
	if c.keys.Has("gate_result", e.Hash, "") {
		return false // logged after record.json was written: a later change, not a crash
	}
	raw, ok := c.rec.GateResult()
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

// transitionFollows reports whether the transition t is one the entry e implies (SPEC §7.2): to
// verified only on a pass, to escalated only on a fail that spent the budget, to blocked only on
// an error.
func transitionFollows(e record.HistoryEntry, res *tiers.Result, t *tiers.Transition) bool {
	switch t.To {
	case vocab.Verified:
		return res.Verdict.IsPass() // res is e's run: its verdict is the entry's (completion.result)
	case vocab.Escalated:
		return e.Verdict == string(vocab.VerdictFail) && e.RetryBudgetAfter != nil && *e.RetryBudgetAfter == 0
	case vocab.Blocked:
		return e.Verdict == string(vocab.VerdictError)
	}
	return false
}

// extraString reads a string of the entry's extra keys.
func extraString(e record.HistoryEntry, key string) string {
	var s string
	if raw, ok := e.Extra[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// revocation completes a recorded revocation (geas gate verify --apply), in the order
// applyRevocation writes: a verified task moves back to its gate state, then the revocation and
// the transition events are logged.
func (c *completion) revocation(e record.HistoryEntry) error {
	state := vocab.State(extraString(e, "state"))
	moveDone := c.keys.Has("task_transition", e.Hash, e.RunID)
	var to vocab.State
	moved := false
	if state == vocab.Verified && !moveDone {
		k, err := contract.Load(c.geas, c.taskDir+"/contract.json")
		if err == nil && k.TaskID == c.task {
			to = tiers.GateState(k.GateProfile)
			switch k.Status {
			case state:
				if err := vocab.CheckTransition(vocab.Verified, to, true); err != nil {
					return err
				}
				in := &tiers.Input{Geas: c.geas, TaskDir: c.taskDir, Contract: k}
				if err := tiers.WriteTransition(in, &tiers.Transition{From: state, To: to}, c.now); err != nil {
					return fmt.Errorf("complete revocation %s: %w", e.RunID, err)
				}
				c.note("moved the task %s -> %s, as revocation %s decided", state, to, e.RunID)
				moved = true
			case to:
				moved = true // moved before the crash; its event is what is missing
			}
		}
	}
	if !c.keys.Has(record.KindRevocation, e.Hash, "") {
		if err := c.logRevocation(e, string(state)); err != nil {
			return err
		}
	}
	if moved {
		ev, err := RevocationTransitionEvent(c.mission, c.task, e.RunID, state, to, e.Hash)
		if err != nil {
			return err
		}
		if err := record.AppendEvent(c.geas, ev); err != nil {
			return fmt.Errorf("complete revocation %s: %w", e.RunID, err)
		}
		c.note("logged the task_transition event of revocation %s", e.RunID)
	}
	return nil
}

func (c *completion) logRevocation(e record.HistoryEntry, state string) error {
	ev, err := RevocationEvent(c.mission, c.task, e, state)
	if err != nil {
		return err
	}
	if err := record.AppendEvent(c.geas, ev); err != nil {
		return fmt.Errorf("complete revocation %s: %w", e.RunID, err)
	}
	c.note("logged the revocation event of %s", e.RunID)
	return nil
}

// RevocationEvent is the revocation event of the entry e (the task was in state when revoked).
func RevocationEvent(mission, task string, e record.HistoryEntry, state string) (record.Event, error) {
	causes := json.RawMessage(`[]`)
	if len(e.Causes) > 0 {
		causes = e.Causes
	}
	data, err := json.Marshal(map[string]any{"run_id": e.RunID, "revokes": extraString(e, "revokes"), "verdict": e.Verdict,
		"causes": causes, "state": state, "inputs_sha256": e.InputsSHA256, "hash": e.Hash})
	if err != nil {
		return record.Event{}, err
	}
	return record.Event{EventType: record.KindRevocation, MissionID: mission, TaskID: task, Agent: "geas-gate", Data: data}, nil
}

// RevocationTransitionEvent is the task_transition event of a revocation.
func RevocationTransitionEvent(mission, task, runID string, from, to vocab.State, hash string) (record.Event, error) {
	d, err := json.Marshal(map[string]string{"from": string(from), "to": string(to), "by": "geas-gate", "run_id": runID, "reason": "revocation", "hash": hash})
	if err != nil {
		return record.Event{}, err
	}
	return record.Event{EventType: "task_transition", MissionID: mission, TaskID: task, Agent: "geas-gate", Data: d}, nil
}

// GrantEvent is the budget_grant event of the entry e.
func GrantEvent(mission, task string, e record.HistoryEntry) (record.Event, error) {
	var retries int
	if raw, ok := e.Extra["retries"]; ok {
		_ = json.Unmarshal(raw, &retries)
	}
	by := extraString(e, "by")
	before, after := 0, 0
	if e.RetryBudgetBefore != nil {
		before = *e.RetryBudgetBefore
	}
	if e.RetryBudgetAfter != nil {
		after = *e.RetryBudgetAfter
	}
	data, err := json.Marshal(struct {
		By      string `json:"by"`
		Retries int    `json:"retries"`
		Before  int    `json:"retry_budget_before"`
		After   int    `json:"retry_budget_after"`
		Reason  string `json:"reason"`
		Hash    string `json:"hash"`
	}{by, retries, before, after, extraString(e, "reason"), e.Hash})
	if err != nil {
		return record.Event{}, err
	}
	return record.Event{EventType: "budget_grant", MissionID: mission, TaskID: task, Agent: by, Data: data}, nil
}

// grant completes a recorded budget grant: its event.
func (c *completion) grant(e record.HistoryEntry) error {
	return c.logEntryEvent("budget_grant", "budget grant", e, GrantEvent)
}

// reset completes a recorded history reset: its event.
func (c *completion) reset(e record.HistoryEntry) error {
	return c.logEntryEvent(record.KindHistoryReset, "history reset", e, resetEvent)
}

// resetEvent is the history_reset event of the reset entry e, naming it by hash.
func resetEvent(mission, task string, e record.HistoryEntry) (record.Event, error) {
	var retries int
	if raw, ok := e.Extra["retries"]; ok {
		_ = json.Unmarshal(raw, &retries)
	}
	data, err := json.Marshal(map[string]any{"by": extraString(e, "by"), "reason": extraString(e, "reason"), "retries": retries,
		"kept_aside": extraString(e, "kept_aside"), "hash": e.Hash})
	if err != nil {
		return record.Event{}, err
	}
	return record.Event{EventType: record.KindHistoryReset, MissionID: mission, TaskID: task, Agent: extraString(e, "by"), Data: data}, nil
}

// logEntryEvent logs the event of type typ of an authority's entry e (built by build) unless one
// naming e by hash is logged already; what names the entry in an error.
func (c *completion) logEntryEvent(typ, what string, e record.HistoryEntry, build func(mission, task string, e record.HistoryEntry) (record.Event, error)) error {
	if c.keys.Has(typ, e.Hash, "") {
		return nil
	}
	ev, err := build(c.mission, c.task, e)
	if err != nil {
		return err
	}
	if err := record.AppendEvent(c.geas, ev); err != nil {
		return fmt.Errorf("complete the %s: %w", what, err)
	}
	c.note("logged the %s event of entry %.12s", typ, e.Hash)
	return nil
}

// ApprovalEvent is the rules_approval event of the approval entry e, naming it by hash.
func ApprovalEvent(mission, task string, e record.HistoryEntry) (record.Event, error) {
	by := extraString(e, "by")
	data, err := json.Marshal(struct {
		By          string `json:"by"`
		Reason      string `json:"reason"`
		RulesSHA256 string `json:"rules_sha256"`
		Hash        string `json:"hash"`
	}{by, extraString(e, "reason"), e.RulesSHA256, e.Hash})
	if err != nil {
		return record.Event{}, err
	}
	return record.Event{EventType: "rules_approval", MissionID: mission, TaskID: task, Agent: by, Data: data}, nil
}

// approval completes a recorded rules approval: the pinned copy, and its event.
func (c *completion) approval(e record.HistoryEntry) error {
	if err := c.pin(e, "approval by "+extraString(e, "by")); err != nil {
		return err
	}
	return c.logEntryEvent("rules_approval", "rules approval", e, ApprovalEvent)
}

// pin writes the pinned copy of the rules the entry e pinned, when it is missing and the rules are
// still those (tiers.CompletePin); by is what the copy says pinned them.
func (c *completion) pin(e record.HistoryEntry, by string) error {
	wrote, err := tiers.CompletePin(c.p, c.mission, c.task, c.taskDir, e.RulesSHA256, by, c.now)
	if err != nil {
		return fmt.Errorf("complete the pin of entry %.12s: write %s: %w", e.Hash, tiers.PinnedFile, err)
	}
	if wrote {
		c.note("wrote %s, the rules entry %.12s pinned", tiers.PinnedFile, e.Hash)
	}
	return nil
}
