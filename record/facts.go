package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/geas-dev/geas/internal/jsonscan"
	"github.com/geas-dev/geas/vocab"
)

// Facts are what a run knows of a task's record, computed once from the record as it was read
// (FactsOf) and then read as plain data: the history and what verifying it found, the budget and
// the pin it records, the latest gate run, and the sections the checks judge. The crash
// completion computes them under the task lock and hands them to the run's snapshot, so that
// the checks and the ledger read fields instead of asking the record again. Facts describe the
// Record as it was read; the ledger's writes to the Record do not change them.
type Facts struct {
	TaskID string
	// History is the gate history, oldest first.
	History []HistoryEntry

	// ChainErr is VerifyChain's answer for History. BadSignatures is VerifySignatures' under the
	// signing key the facts were computed with (nil without a key: Signed is false).
	ChainErr      error
	BadSignatures []*ChainError
	Signed        bool
	keySum        [sha256.Size]byte
	// BudgetProblems is BudgetProblems' answer for History.
	BudgetProblems []string

	// LastRun is the latest gate-run entry and LastRunAt its index, when HaveRun (LastRun).
	LastRun   HistoryEntry
	LastRunAt int
	HaveRun   bool
	// Budget is the latest entry that records a budget and BudgetAt its index, when HaveBudget
	// (LatestBudget).
	Budget     HistoryEntry
	BudgetAt   int
	HaveBudget bool
	// Pin is the entry that pins the task's rules, when Pinned (PinnedRules).
	Pin    Pin
	Pinned bool
	// ErrorStreak and ErrorCause are ConsecutiveErrors' answer.
	ErrorStreak int
	ErrorCause  string

	// GateResult is the raw gate_result section, when HaveGateResult.
	GateResult     json.RawMessage
	HaveGateResult bool
	// SelfCheck, Implementation and Integration are the sections the checks judge (nil when the
	// record has none).
	SelfCheck      *SelfCheck
	Implementation *ImplementationContract
	Integration    *Integration
	// HistorySection is the gate_history the earlier layout kept in record.json (nil: none).
	HistorySection json.RawMessage
	// Inputs are the agent-written sections, the run's inputs (SPEC §7.4): every section but
	// gate_result and gate_history, and integration.json's content keyed as the section it was in
	// the earlier layout.
	Inputs map[string]json.RawMessage
}

// FactsOf computes the facts of r; key is the signing key the history's signatures are verified
// with (nil: they are not). A nil r has the facts of an empty history. The sections are what Load
// parsed, taken as they are.
func FactsOf(r *Record, key []byte) *Facts {
	f := &Facts{LastRunAt: -1, BudgetAt: -1, Signed: key != nil}
	if key != nil {
		f.keySum = sha256.Sum256(key)
	}
	if r == nil {
		return f
	}
	// The history: its chain and signatures, its budget arithmetic, and what its entries say.
	hist := slices.Clone(r.history)
	f.TaskID, f.History = r.taskID, hist
	f.ChainErr = VerifyChain(hist)
	if key != nil {
		f.BadSignatures = VerifySignatures(hist, key)
	}
	f.BudgetProblems = BudgetProblems(hist)
	f.scan(hist)
	// The sections.
	if r.selfCheck != nil {
		c := *r.selfCheck
		f.SelfCheck = &c
	}
	if r.implementation != nil {
		c := *r.implementation
		f.Implementation = &c
	}
	if r.integration != nil {
		c := *r.integration
		f.Integration = &c
	}
	f.Inputs = map[string]json.RawMessage{}
	for _, m := range r.members {
		switch {
		case m.Key == gateResult:
			f.GateResult, f.HaveGateResult = bytes.Clone(m.Value), true
		case m.Key == gateHistory:
			f.HistorySection = bytes.Clone(m.Value)
		case !slices.Contains(envelope, m.Key):
			f.Inputs[m.Key] = bytes.Clone(m.Value)
		}
	}
	if r.integration != nil && r.store.integRaw != nil {
		f.Inputs["integration"] = bytes.Clone(r.store.integRaw) // as IntegrationJSON
	}
	return f
}

// scan computes, in one pass over hist from its latest entry, what the entries say: the latest
// gate run (LastRun), the latest entry that records a budget (LatestBudget), the trailing streak
// of errors with one cause (ConsecutiveErrors) and the entry that pins the rules (PinnedRules),
// each of which is this pass's answer.
func (f *Facts) scan(hist []HistoryEntry) {
	f.LastRunAt, f.BudgetAt = -1, -1
	streak := true // the trailing runs seen so far are errors with one cause
	approved := false
	firstRun := -1 // the earliest gate run that recorded the rules it read
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.IsGateRun() && !f.HaveRun {
			f.LastRun, f.LastRunAt, f.HaveRun = e, i, true
		}
		if e.RetryBudgetAfter != nil && !f.HaveBudget {
			f.Budget, f.BudgetAt, f.HaveBudget = e, i, true
		}
		if isRun(e) && streak {
			c := firstCause(e.Causes)
			if e.Verdict != string(vocab.VerdictError) || (f.ErrorStreak > 0 && c != f.ErrorCause) {
				streak = false
			} else {
				f.ErrorStreak, f.ErrorCause = f.ErrorStreak+1, c
			}
		}
		if e.Kind == KindApproval && e.RulesSHA256 != "" && !approved {
			by := ""
			if raw, ok := e.Extra["by"]; ok {
				_ = json.Unmarshal(raw, &by)
			}
			f.Pin, f.Pinned, approved = Pin{Index: i, Entry: e, RulesSHA256: e.RulesSHA256, By: fmt.Sprintf("approval by %s at %s", orUnknown(by), e.StartedAt)}, true, true
		}
		if isRun(e) && e.RulesSHA256 != "" {
			firstRun = i
		}
	}
	if !approved && firstRun >= 0 {
		e := hist[firstRun]
		f.Pin, f.Pinned = Pin{Index: firstRun, Entry: e, RulesSHA256: e.RulesSHA256, By: fmt.Sprintf("gate run %s at %s", orUnknown(e.RunID), e.StartedAt)}, true
	}
}

// scanOf is the scan of r's history (that of an empty one for a nil r).
func scanOf(r *Record) *Facts {
	var hist []HistoryEntry
	if r != nil {
		hist = r.history
	}
	f := &Facts{}
	f.scan(hist)
	return f
}

// isRun reports whether a history entry is a gate run with a verdict.
func isRun(e HistoryEntry) bool {
	return e.Verdict != "" && e.IsGateRun()
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// For reports whether f was computed with key (so that its signature answers are key's).
func (f *Facts) For(key []byte) bool {
	return f.Signed == (key != nil) && (key == nil || sha256.Sum256(key) == f.keySum)
}

// firstCause returns the code of the first entry of a causes array ([{code, check, detail}]), or ""
// when there is none or it cannot be read.
func firstCause(causes json.RawMessage) string {
	if code, ok := fastFirstCause(causes); ok {
		return code
	}
	var items []json.RawMessage
	if err := json.Unmarshal(causes, &items); err != nil || len(items) == 0 {
		return ""
	}
	f, err := objectFields(items[0])
	if err != nil {
		return ""
	}
	var code string
	if err := field(f, "code", &code); err != nil {
		return ""
	}
	return code
}

// fastFirstCause is firstCause without encoding/json, for a causes array whose first item is an
// object with ASCII keys, each once, and whose code, when present, is an ASCII string without
// escapes; ok is false for anything else, which takes the slow path. It is part of the entryscan
// twin (switched off with it by -tags lib_entryscan, and measured with it); TestFastFirstCauseIsSlow
// checks it against the slow path.
func fastFirstCause(causes []byte) (code string, ok bool) {
	if !twinEntryScan {
		return "", false
	}
	s := &jsonscan.Scanner{Data: causes}
	s.WS()
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '[' {
		return "", false
	}
	s.Pos++
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == ']' {
		s.Pos++
		s.WS()
		return "", s.Pos == len(s.Data)
	}
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '{' {
		return "", false
	}
	s.Pos++
	var keys [8][]byte
	seen := keys[:0]
	s.WS()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '}' {
		s.Pos++
	} else {
		for {
			k, okk := s.Member()
			if !okk || slices.ContainsFunc(seen, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return "", false
			}
			seen = append(seen, k)
			if string(k) == "code" {
				if code, okk = s.PlainString(); !okk {
					return "", false
				}
			} else if !s.Value(1) {
				return "", false
			}
			more, okn := s.More('}')
			if !okn {
				return "", false
			}
			if !more {
				break
			}
		}
	}
	// The rest of the array must be valid JSON too (json.Unmarshal reads all of it).
	for {
		s.WS()
		if s.Pos >= len(s.Data) {
			return "", false
		}
		if s.Data[s.Pos] == ']' {
			s.Pos++
			break
		}
		if s.Data[s.Pos] != ',' {
			return "", false
		}
		s.Pos++
		if !s.Value(1) {
			return "", false
		}
	}
	s.WS()
	return code, s.Pos == len(s.Data)
}
