package record

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
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
// with (nil: they are not). A nil r has the facts of an empty history.
func FactsOf(r *Record, key []byte) *Facts {
	f := &Facts{LastRunAt: -1, BudgetAt: -1, Signed: key != nil}
	if key != nil {
		f.keySum = sha256.Sum256(key)
	}
	if r == nil {
		return f
	}
	// The history: its chain and signatures, and its latest gate run.
	hist := slices.Clone(r.history)
	f.TaskID, f.History = r.taskID, hist
	f.ChainErr = VerifyChain(hist)
	if key != nil {
		f.BadSignatures = VerifySignatures(hist, key)
	}
	f.LastRun, f.LastRunAt, f.HaveRun = LastRun(r)
	// The budget it records.
	f.BudgetProblems = BudgetProblems(hist)
	f.Budget, f.BudgetAt, f.HaveBudget = LatestBudget(r)
	f.ErrorStreak, f.ErrorCause = ConsecutiveErrors(r)
	// The entry that pins the rules.
	f.Pin, f.Pinned = PinnedRules(r)
	// The sections.
	f.GateResult, f.HaveGateResult = r.GateResult()
	f.SelfCheck, _ = r.SelfCheck()
	f.Implementation, _ = r.ImplementationContract()
	f.Integration, _ = r.Integration()
	f.HistorySection, _ = r.Section(gateHistory)
	f.Inputs = map[string]json.RawMessage{}
	for _, s := range r.Sections() {
		if s == gateResult || s == gateHistory {
			continue
		}
		f.Inputs[s], _ = r.Section(s)
	}
	if raw, ok := r.IntegrationJSON(); ok {
		f.Inputs["integration"] = raw
	}
	return f
}

// For reports whether f was computed with key (so that its signature answers are key's).
func (f *Facts) For(key []byte) bool {
	return f.Signed == (key != nil) && (key == nil || sha256.Sum256(key) == f.keySum)
}
