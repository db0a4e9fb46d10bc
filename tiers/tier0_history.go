package tiers

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// historyText is what the history check verifies.
const historyText = "the gate history verifies (hash chain, HMAC when GEAS_GATE_KEY is set, budget arithmetic), belongs to this task, ends at gate_result's run, and holds every gate event of events.jsonl"

// historyCheck is the tier-0 check history_tampered (SPEC §5.1, §7.4): the gate builds on its own
// history only when that history verifies. When it does not, the run is an error, nothing is
// appended and no budget is computed (see Budget and Apply), until an authority resets the
// history with geas task history reset. others are what it found of the histories of the other
// tasks the snapshot read (histories), for attribution to confirm their passes with.
func historyCheck(pass *Pass) (out []Check, others []otherHistory) {
	add := func(c Check) { out = append(out, c) }
	in := pass.in
	problems, summary, others := histories(in, record.SigningKey())
	if in.Record == nil {
		return nil, others // record_valid already errors: there is no history to judge
	}
	if len(problems) > 0 {
		add(failCheck(0, "history", historyText, strings.Join(problems, "; ")+
			"; nothing is appended and no budget is computed until an authority runs geas task history reset", StatusError, vocab.CauseHistoryTampered))
		return out, others
	}
	add(passCheck(0, "history", historyText, summary))
	return out, others
}

// otherHistory is what the history check found of another task's gate history: what does not
// verify in it (problems, as HistoryProblems says), and, when all of it verifies, the pass its
// state stands on (standingPass; stands is false when there is none).
type otherHistory struct {
	problems []string
	pass     record.HistoryEntry
	stands   bool
}

// histories verifies, in one loop, the gate history of the task in judges and those of the other
// tasks of its mission whose records the snapshot read with their facts (in.Others, SPEC §5.3 B):
// attribution confirms another task's pass as tier 0 confirms this task's history, with the same
// verification. problems and summary are this task's (VerifyHistory); others[i] is what it found
// of in.Others[i]'s history (zero for the task itself, or a record read without its facts, which
// attribution refuses before it looks).
func histories(in *Snapshot, key []byte) (problems []string, summary string, others []otherHistory) {
	subjects := []*Snapshot{in}
	for _, o := range in.Others {
		var s *Snapshot
		if o.ID != in.Task && o.Facts != nil {
			s = otherSnapshot(in, o)
		}
		subjects = append(subjects, s)
	}
	if len(in.Others) > 0 {
		others = make([]otherHistory, len(in.Others))
	}
	for i, s := range subjects {
		switch {
		case i == 0:
			problems, summary = VerifyHistory(s, key)
		case s != nil:
			h := &others[i-1]
			if h.problems, _ = VerifyHistory(s, key); len(h.problems) == 0 {
				h.pass, h.stands = standingPass(s.Record.History())
			}
		}
	}
	return problems, summary, others
}

// otherSnapshot is the snapshot of another task o of in's mission as far as its history goes: its
// record, facts and events as the snapshot read them (readOthersFacts).
func otherSnapshot(in *Snapshot, o OtherTask) *Snapshot {
	return &Snapshot{ProjectDir: in.ProjectDir, Root: in.Root, Geas: in.Geas, Mission: in.Mission, Task: o.ID, TaskDir: o.Dir, Record: o.Record,
		Facts: o.Facts, taskEvents: &TaskEvents{Hashes: o.Events, Err: o.EventsErr}}
}

// HistoryProblems lists, with the values found, what does not verify in a task's gate history:
// the record's task_id, the hash chain, every entry's HMAC when key is set, the budget arithmetic
// (record.BudgetProblems), gate_result against the latest gate run, and every event of
// events.jsonl that names a history entry of this task by its hash. Nil when all of it verifies or
// when record.json cannot be read (record_valid reports that).
func HistoryProblems(in *Snapshot, key []byte) []string {
	p, _ := VerifyHistory(in, key)
	return p
}

// maxEventProblems bounds how many unmatched events are named one by one.
const maxEventProblems = 5

// VerifyHistory is HistoryProblems, with, when nothing is wrong, a summary of what verified (the
// evidence of check history). The task's events are those the run's crash completion read under
// the lock when it handed them over, else the event log is read (through in.Events when set).
func VerifyHistory(in *Snapshot, key []byte) (problems []string, summary string) {
	if in.Record == nil {
		return nil, ""
	}
	f := in.Facts
	if f == nil || !f.For(key) {
		// A Snapshot built by hand (a command that judges only the history) or computed with
		// another key: the facts of its record under key.
		f = record.FactsOf(in.Record, key)
	}
	problems = chainProblems(in, f)
	problems = append(problems, resultProblems(f)...)
	ep, n := eventProblems(in, f.History, in.Events)
	problems = append(problems, ep...)
	return problems, historySummary(f.History, key, f.LastRun, f.LastRunAt, f.HaveRun, n)
}

// chainProblems are what does not verify in the history itself: the record's task_id, the hash
// chain, every entry's HMAC when the facts were computed with a key, and the budget arithmetic.
func chainProblems(in *Snapshot, f *record.Facts) (problems []string) {
	if id := f.TaskID; id != in.Task {
		problems = append(problems, fmt.Sprintf("record.json has task_id %q, but this is task %q", id, in.Task))
	}
	if err := f.ChainErr; err != nil {
		problems = append(problems, err.Error())
	}
	for _, e := range f.BadSignatures {
		problems = append(problems, e.Error())
	}
	return append(problems, f.BudgetProblems...)
}

// resultProblems are what does not match between gate_result and the latest gate run of the
// history, when there is one.
func resultProblems(f *record.Facts) []string {
	raw, haveResult := f.GateResult, f.HaveGateResult
	last, lastAt, haveRun := f.LastRun, f.LastRunAt, f.HaveRun
	switch {
	case !haveRun && haveResult:
		return []string{fmt.Sprintf("record.json has a gate_result (%s), but gate_history records no gate run: the gate did not write it", resultSummary(raw))}
	case haveRun && !haveResult:
		return []string{fmt.Sprintf("no gate_result, but gate_history entry %d %s is a gate run", lastAt+1, last.RunID)}
	case haveRun:
		return gateResultProblems(raw, last, lastAt)
	}
	return nil
}

// eventProblems names the gate events of events.jsonl that name a history entry of this task
// the history does not hold (at most maxEventProblems one by one), and counts the events: those
// of in.taskEvents when the completion handed them over, else the log read through idx (nil: read
// here).
func eventProblems(in *Snapshot, hist []record.HistoryEntry, idx *record.EventIndex) (problems []string, events int) {
	known := map[string]bool{}
	for _, e := range hist {
		known[e.Hash] = true
	}
	if len(hist) > 0 && hist[0].Kind == record.KindHistoryReset {
		for _, h := range supersededHashes(hist[0]) {
			known[h] = true
		}
	}
	var evs []record.EventHash
	var err error
	if in.taskEvents != nil {
		// Read under the run's lock with the record judged here, or in the snapshot with the
		// other task's record (readOthersFacts).
		evs, err = in.taskEvents.Hashes, in.taskEvents.Err
	} else {
		evs, err = idx.TaskEventHashes(in.Geas, in.Mission, in.Task)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("the gate events of this task could not be cross-checked with gate_history: %v", err))
	}
	if !allKnown(evs, known) {
		// A reader without the task lock (verify, task show) may have read record.json just
		// before a gate run appended to it and logged the event: the run writes the record
		// first. A record read now that extends the one judged accounts for those events.
		if fresh, err := record.Load(in.Geas, in.TaskDir+"/record.json"); err == nil && extends(fresh.History(), hist) {
			for _, e := range fresh.History() {
				known[e.Hash] = true
			}
		}
	}
	missing := 0
	for _, ev := range evs {
		if known[ev.Hash] {
			continue
		}
		if missing++; missing <= maxEventProblems {
			run := ev.RunID
			if run == "" {
				run = "(no run_id)"
			}
			problems = append(problems, fmt.Sprintf("events.jsonl line %d: %s event of %s names history entry %.12s, which gate_history does not hold (a dropped or rewritten entry)", ev.Line, ev.EventType, run, ev.Hash))
		}
	}
	if missing > maxEventProblems {
		problems = append(problems, fmt.Sprintf("and %d more events name entries gate_history does not hold", missing-maxEventProblems))
	}
	return problems, len(evs)
}

// historySummary says what verified: the entries, how they are signed, the gate run gate_result
// is, and how many events were cross-checked.
func historySummary(hist []record.HistoryEntry, key []byte, last record.HistoryEntry, lastAt int, haveRun bool, events int) string {
	var summary string
	if len(hist) == 0 {
		summary = "no gate history yet"
	} else {
		signed := "chained, not signed (GEAS_GATE_KEY is not set)"
		if key != nil {
			signed = "chained and every HMAC verifies with GEAS_GATE_KEY"
		}
		summary = fmt.Sprintf("%s (%s)", text.Counted(len(hist), "entry verifies", "entries verify"), signed)
		if haveRun {
			summary += fmt.Sprintf("; gate_result is entry %d %s (hash %.12s)", lastAt+1, last.RunID, last.Hash)
		}
	}
	return summary + fmt.Sprintf("; %d gate events of this task cross-checked", events)
}

// supersededHashes are the hashes a history_reset entry says the discarded history held.
func supersededHashes(e record.HistoryEntry) []string {
	var hs []string
	if raw, ok := e.Extra["superseded_hashes"]; ok {
		_ = json.Unmarshal(raw, &hs) // an array of strings: no keys to match

	}
	return hs
}

// resultSummary names a gate_result by its run_id and verdict, as written.
func resultSummary(raw []byte) string {
	var f map[string]json.RawMessage // exact keys: a "Verdict" is not the verdict
	if json.Unmarshal(raw, &f) != nil {
		return "unreadable"
	}
	return fmt.Sprintf("run_id %s, verdict %s", orNull(f["run_id"]), orNull(f["verdict"]))
}

func orNull(raw json.RawMessage) string {
	if raw == nil {
		return "(none)"
	}
	return string(raw)
}

func allKnown(events []record.EventHash, known map[string]bool) bool {
	for _, ev := range events {
		if !known[ev.Hash] {
			return false
		}
	}
	return true
}

// extends reports whether newer holds every entry of older, in order, and then more.
func extends(newer, older []record.HistoryEntry) bool {
	if len(newer) <= len(older) {
		return false
	}
	for i := range older {
		if newer[i].Hash != older[i].Hash {
			return false
		}
	}
	return record.VerifyChain(newer) == nil
}

// gateResultProblems compares gate_result with the latest gate run of the chain. Keys are read
// exactly (not with encoding/json's case-insensitive struct matching), so a second "Verdict" key
// cannot stand in for the real one.
func gateResultProblems(raw json.RawMessage, last record.HistoryEntry, lastAt int) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return []string{fmt.Sprintf("gate_result is not a JSON object: %v", err)}
	}
	str := func(key string) string {
		var s string
		if v, ok := fields[key]; ok {
			if json.Unmarshal(v, &s) != nil {
				return "(" + string(v) + ")"
			}
		}
		return s
	}
	entry := fmt.Sprintf("the latest gate run, gate_history entry %d %s", lastAt+1, last.RunID)
	var problems []string
	if got := str("hash"); got != last.Hash {
		problems = append(problems, fmt.Sprintf("gate_result.hash %q does not match %s (hash %.12s)", short(got), entry, last.Hash))
	}
	if got := str("run_id"); got != last.RunID {
		problems = append(problems, fmt.Sprintf("gate_result.run_id %q does not match %s", got, entry))
	}
	if got := str("verdict"); got != last.Verdict {
		problems = append(problems, fmt.Sprintf("gate_result.verdict %q does not match %s (verdict %q)", got, entry, last.Verdict))
	}
	if got := str("inputs_sha256"); got != last.InputsSHA256 {
		problems = append(problems, fmt.Sprintf("gate_result.inputs_sha256 %q does not match %s (%.12s)", short(got), entry, last.InputsSHA256))
	}
	if got := str("head"); got != last.Head {
		problems = append(problems, fmt.Sprintf("gate_result.head %q does not match %s (%q)", short(got), entry, last.Head))
	}
	return problems
}

// BackingRun is the gate run a verified task's state rests on: the latest gate run, passing over
// later runs that the gate refused with state_ineligible (they did not judge the work).
func BackingRun(rec *record.Record) (record.HistoryEntry, int, bool) {
	if rec == nil {
		return record.HistoryEntry{}, -1, false
	}
	hist := rec.History()
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if !e.IsGateRun() {
			continue
		}
		if e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		return e, i, true
	}
	return record.HistoryEntry{}, -1, false
}

// standingPass is the pass a task's state rests on, as PassProblems reads it: the latest entry of
// the history, passing over later gate runs refused with state_ineligible, is a gate run with
// verdict pass.
func standingPass(hist []record.HistoryEntry) (record.HistoryEntry, bool) {
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.IsGateRun() && e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		return e, e.IsGateRun() && RecordsPass(e)
	}
	return record.HistoryEntry{}, false
}

// RecordsPass reports whether a history entry records a passing verdict. It reads a stored string
// and builds no verdict: only decide does that (SPEC §2.2).
func RecordsPass(e record.HistoryEntry) bool { return e.Verdict == string(StatusPass) }

// onlyIneligible reports whether every cause of an entry is state_ineligible.
func onlyIneligible(raw json.RawMessage) bool {
	var causes []Cause
	if json.Unmarshal(raw, &causes) != nil || len(causes) == 0 {
		return false
	}
	for _, c := range causes {
		if c.Code != vocab.CauseStateIneligible {
			return false
		}
	}
	return true
}

// PassProblems says why a task may not move verified -> passed (SPEC §8): the history must verify
// (HistoryProblems) and its latest entry must be a gate run with verdict pass, which gate_result
// matches. Only gate runs that the gate refused with state_ineligible (someone ran geas gate on
// the verified task) may follow the pass; a revocation, a grant or any other run may not. Nil
// when the move is allowed.
func PassProblems(in *Snapshot, key []byte) []string {
	if in.Record == nil {
		return []string{fmt.Sprintf("record.json cannot be read: %v", in.RecordErr)}
	}
	problems := HistoryProblems(in, key)
	hist := in.Record.History()
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.IsGateRun() && e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		if !e.IsGateRun() || !RecordsPass(e) {
			what := e.Kind
			if e.IsGateRun() {
				what = "gate run with verdict " + e.Verdict
			}
			problems = append(problems, fmt.Sprintf("the latest gate_history entry, %d %s, is a %s, not a gate pass", i+1, e.RunID, what))
		}
		return problems
	}
	return append(problems, "gate_history records no gate pass: the state verified was not set by the gate")
}
