package record

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/jsonobj"
)

// History entry kinds. An entry without a kind is a gate run (older records).
const (
	KindGateRun     = "gate_run"
	KindBudgetGrant = "budget_grant"
	KindRevocation  = "revocation"
	// KindHistoryReset is the first entry of a chain that an authority started over a history
	// that did not verify (geas task history reset): it records who, why, the budget it grants
	// and the hashes of the discarded history, so the task's old events still cross-check.
	KindHistoryReset = "history_reset"
)

// IsGateRun reports whether e is a gate run: its kind is KindGateRun, or it has no kind (older
// records wrote runs without one).
func (e HistoryEntry) IsGateRun() bool { return e.Kind == "" || e.Kind == KindGateRun }

// canonical is the entry's canonical JSON (RFC 8785) without its hash and hmac. Both the hash and
// the HMAC are computed over it, so the hash does not depend on the key, and any language can
// recompute it (SPEC §7.4). The entries the gate writes take fastCanonical; any other takes
// slowCanonical, through encoding/json and internal/canon; both give the same bytes.
func canonical(e HistoryEntry) ([]byte, error) {
	if b, ok := fastCanonical(e, false); ok {
		return b, nil
	}
	return slowCanonical(e)
}

// slowCanonical is canonical through encoding/json and internal/canon, for every entry.
func slowCanonical(e HistoryEntry) ([]byte, error) {
	e.Hash, e.HMAC = "", ""
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "hash")
	delete(m, "hmac")
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return canon.Bytes(raw)
}

// legacyCanonical is the canonical form of entries written before the gate used RFC 8785: the
// same keys, sorted, through encoding/json (which escapes <, > and & and formats numbers its own
// way). A chain written then still verifies: both forms are fixed functions of the entry's
// content, so accepting either lets no edit through, and no record the gate wrote is lost.
func legacyCanonical(e HistoryEntry) ([]byte, error) {
	e.Hash, e.HMAC = "", ""
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "hash")
	delete(m, "hmac")
	return json.Marshal(m)
}

// hashMatches reports whether e.Hash is the digest of e's canonical form, or of its legacy form,
// and returns the RFC 8785 digest for messages.
func hashMatches(e HistoryEntry) (bool, string, error) {
	h, err := EntryHash(e)
	if err != nil || h == e.Hash {
		return err == nil, h, err
	}
	old, err := legacyCanonical(e)
	if err != nil {
		return false, h, nil
	}
	sum := sha256.Sum256(old)
	return hex.EncodeToString(sum[:]) == e.Hash, h, nil
}

// hmacMatches reports whether e.HMAC is the HMAC under key of e's canonical or legacy form.
func hmacMatches(e HistoryEntry, key []byte) (bool, error) {
	want, err := EntryHMAC(e, key)
	if err != nil {
		return false, err
	}
	if hmac.Equal([]byte(e.HMAC), []byte(want)) {
		return true, nil
	}
	old, err := legacyCanonical(e)
	if err != nil {
		return false, nil
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(old)
	return hmac.Equal([]byte(e.HMAC), []byte(hex.EncodeToString(mac.Sum(nil)))), nil
}

// EntryHash returns the SHA-256 of the entry's canonical JSON without its hash and hmac: every
// other key, sorted, compact. Recomputing it detects any edit of a stored entry.
func EntryHash(e HistoryEntry) (string, error) {
	var sum [sha256.Size]byte
	if err := withCanonical(e, false, func(b []byte) { sum = sha256.Sum256(b) }); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}

// EntryHMAC returns the hex HMAC-SHA256 under key of the entry's canonical JSON (the bytes
// EntryHash digests). The chain alone detects an edit, but anyone who can write record.json can
// recompute every hash after editing; only a holder of the key can produce a valid HMAC.
func EntryHMAC(e HistoryEntry, key []byte) (string, error) {
	mac := hmac.New(sha256.New, key)
	if err := withCanonical(e, false, func(b []byte) { mac.Write(b) }); err != nil {
		return "", err
	}
	return hex.EncodeToString(mac.Sum(nil)), nil
}

// Chain links e after the record's current history: ChainAfter its latest entry's hash (or "" for
// the first entry).
func (r *Record) Chain(e HistoryEntry) (HistoryEntry, error) {
	prev := ""
	if n := len(r.history); n > 0 {
		prev = r.history[n-1].Hash
	}
	return ChainAfter(prev, e)
}

// ChainAfter links e after the entry whose hash is prev, the chain's head ("" for a first entry):
// it sets PrevHash to prev and Hash to EntryHash, and, when SigningKey is set, HMAC to EntryHMAC
// (else it clears HMAC). A run's ledger hands in the head its facts verified (Facts.History).
func ChainAfter(prev string, e HistoryEntry) (HistoryEntry, error) {
	e.PrevHash, e.HMAC = prev, ""
	h, err := EntryHash(e)
	if err != nil {
		return e, err
	}
	e.Hash = h
	if key := SigningKey(); key != nil {
		if e.HMAC, err = EntryHMAC(e, key); err != nil {
			return e, err
		}
	}
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
		ok, h, err := hashMatches(e)
		if err != nil {
			return &ChainError{Index: i, RunID: e.RunID, Reason: err.Error()}
		}
		if !ok {
			return &ChainError{Index: i, RunID: e.RunID, Reason: fmt.Sprintf("hash %.12s does not match its content (%.12s)", e.Hash, h)}
		}
		prev = e.Hash
	}
	return nil
}

// VerifySignatures checks every entry's HMAC under key. It returns a *ChainError for each entry
// whose hmac is missing or wrong: an entry forged, or edited and re-chained, by someone without
// the key. Entries are checked independently of their links (VerifyChain checks those).
func VerifySignatures(entries []HistoryEntry, key []byte) []*ChainError {
	var bad []*ChainError
	for i, e := range entries {
		ok, err := hmacMatches(e, key)
		switch {
		case err != nil:
			bad = append(bad, &ChainError{Index: i, RunID: e.RunID, Reason: err.Error()})
		case e.HMAC == "":
			bad = append(bad, &ChainError{Index: i, RunID: e.RunID, Reason: fmt.Sprintf("no hmac, but %s is set: forged or re-chained entry", SigningKeyEnv)})
		case !ok:
			bad = append(bad, &ChainError{Index: i, RunID: e.RunID, Reason: fmt.Sprintf("hmac %.12s does not verify with %s: forged or re-chained entry", e.HMAC, SigningKeyEnv)})
		}
	}
	return bad
}

// LastRun returns the latest gate-run entry of the history and its index (grants, revocations and
// the other authority entries are skipped): the history's scan (Facts.LastRun).
func LastRun(r *Record) (HistoryEntry, int, bool) {
	f := scanOf(r)
	return f.LastRun, f.LastRunAt, f.HaveRun
}

// AppendHistory chains e after the current history (written to gate-history.jsonl by Write),
// leaving gate_result as it is (a budget grant or a revocation is not a gate run), and sets
// updated_at. It returns the chained entry.
func (r *Record) AppendHistory(e HistoryEntry, now time.Time) (HistoryEntry, error) {
	e, err := r.Chain(e)
	if err != nil {
		return e, err
	}
	if err := r.update(now); err != nil {
		return e, err
	}
	r.history = append(r.History(), e)
	return e, nil
}

// ResetHistory starts a new chain over a history that does not verify (SPEC §5.1): gate_result is
// removed (it described a run of the discarded chain), the history becomes the one entry e,
// chained as a first entry (and signed when SigningKey is set), and task_id is set to taskID, since
// a record carrying another task's id is one of the things a reset repairs. Write then replaces
// gate-history.jsonl whole. The caller keeps the old files aside before writing. It returns the
// chained entry.
func (r *Record) ResetHistory(e HistoryEntry, taskID string, now time.Time) (HistoryEntry, error) {
	fresh := &Record{}
	e, err := fresh.Chain(e)
	if err != nil {
		return e, err
	}
	members := slices.DeleteFunc(slices.Clone(r.members), func(m jsonobj.Member) bool { return m.Key == gateResult })
	next := &Record{file: r.file, members: members, integration: r.integration, store: r.store}
	if err := next.update(now, jsonobj.Member{Key: "task_id", Value: jsonobj.String(taskID)}); err != nil {
		return e, err
	}
	next.history = []HistoryEntry{e}
	next.store.rewrite = true
	*r = *next
	return e, nil
}

// ClaimsContradictedKey is the key of a gate run's history entry that counts, per agent, the
// claims of its evidence that the run's own measurements contradicted (SPEC §5.2a.7).
const ClaimsContradictedKey = "claims_contradicted"

// ContradictedClaims sums, per agent, the contradicted claims every gate run of the history
// recorded: the tally geas task show and geas gate verify list. An entry whose tally does not
// read as {agent: count} is skipped (the chain's hash already vouches for what was written).
func ContradictedClaims(history []HistoryEntry) ClaimTally {
	var out ClaimTally
	for _, e := range history {
		raw, ok := e.Extra[ClaimsContradictedKey]
		if !ok || !e.IsGateRun() {
			continue
		}
		var tally map[string]int
		if json.Unmarshal(raw, &tally) != nil {
			continue
		}
		for agent, n := range tally {
			if n <= 0 {
				continue
			}
			if out == nil {
				out = ClaimTally{}
			}
			out[agent] += n
		}
	}
	return out
}

// ClaimTally counts contradicted claims per agent.
type ClaimTally map[string]int

// String shows the tally, the most contradicted agent first: "tester 3 claims, qa-engineer 1 claim".
func (t ClaimTally) String() string {
	agents := make([]string, 0, len(t))
	for a := range t {
		agents = append(agents, a)
	}
	slices.SortFunc(agents, func(a, b string) int {
		if t[a] != t[b] {
			return t[b] - t[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(agents))
	for i, a := range agents {
		unit := "claims"
		if t[a] == 1 {
			unit = "claim"
		}
		parts[i] = fmt.Sprintf("%s %d %s", a, t[a], unit)
	}
	return strings.Join(parts, ", ")
}
