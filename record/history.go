package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// History entry kinds. An entry without a kind is a gate run (older records).
const (
	KindGateRun     = "gate_run"
	KindBudgetGrant = "budget_grant"
	KindRevocation  = "revocation"
)

// EntryHash returns the SHA-256 of the entry's canonical JSON without its hash: every key except
// "hash", sorted, compact. Recomputing it detects any edit of a stored entry.
func EntryHash(e HistoryEntry) (string, error) {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	delete(m, "hash")
	canon, err := json.Marshal(m) // map keys are sorted: the canonical form
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Chain links e after the record's current history: it sets PrevHash to the latest entry's hash
// (or "" for the first entry) and Hash to EntryHash.
func (r *Record) Chain(e HistoryEntry) (HistoryEntry, error) {
	e.PrevHash = ""
	if n := len(r.history); n > 0 {
		e.PrevHash = r.history[n-1].Hash
	}
	h, err := EntryHash(e)
	if err != nil {
		return e, err
	}
	e.Hash = h
	return e, nil
}

// ChainError reports the first history entry that does not verify.
type ChainError struct {
	Index  int // 0-based
	RunID  string
	Reason string
}

func (e *ChainError) Error() string {
	id := e.RunID
	if id == "" {
		id = "(no run_id)"
	}
	return fmt.Sprintf("gate_history entry %d %s: %s", e.Index+1, id, e.Reason)
}

// VerifyChain recomputes every entry's hash and link. It returns a *ChainError for the first entry
// that was edited, inserted, removed or reordered.
func VerifyChain(entries []HistoryEntry) error {
	prev := ""
	for i, e := range entries {
		if e.PrevHash != prev {
			return &ChainError{Index: i, RunID: e.RunID, Reason: fmt.Sprintf("prev_hash %.12s does not match the previous entry's hash %.12s", e.PrevHash, prev)}
		}
		h, err := EntryHash(e)
		if err != nil {
			return &ChainError{Index: i, RunID: e.RunID, Reason: err.Error()}
		}
		if h != e.Hash {
			return &ChainError{Index: i, RunID: e.RunID, Reason: fmt.Sprintf("hash %.12s does not match its content (%.12s)", e.Hash, h)}
		}
		prev = e.Hash
	}
	return nil
}

// LastRun returns the latest gate-run entry of the history (grants and revocations are skipped).
func LastRun(r *Record) (HistoryEntry, bool) {
	if r == nil {
		return HistoryEntry{}, false
	}
	for i := len(r.history) - 1; i >= 0; i-- {
		if e := r.history[i]; e.Kind == "" || e.Kind == KindGateRun {
			return e, true
		}
	}
	return HistoryEntry{}, false
}

// AppendHistory chains e after the current history and writes gate_history, leaving gate_result
// as it is (a budget grant or a revocation is not a gate run). It returns the chained entry.
func (r *Record) AppendHistory(e HistoryEntry, now time.Time) (HistoryEntry, error) {
	e, err := r.Chain(e)
	if err != nil {
		return e, err
	}
	h, err := json.Marshal(append(r.History(), e))
	if err != nil {
		return e, err
	}
	return e, r.update(now, member{gateHistory, h})
}
