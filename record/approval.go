package record

import (
	"encoding/json"
	"time"

	"github.com/geas-dev/geas/internal/jsonobj"
)

// KindApproval is a history entry by which an authority pins (or re-pins) a task's rules
// (SPEC §4.4): its rules_sha256 is the digest of the rules it approved.
const KindApproval = "approval"

// Approval returns the history entry of an authority's approval of the rules with digest
// rulesSHA256 (not yet chained: append it with AppendHistory).
func Approval(by, reason, rulesSHA256 string, now time.Time) HistoryEntry {
	return HistoryEntry{
		Kind: KindApproval, RulesSHA256: rulesSHA256, StartedAt: Timestamp(now),
		Extra: map[string]json.RawMessage{"by": jsonobj.String(by), "reason": jsonobj.String(reason)},
	}
}

// Pin is the entry of a task's history that pinned its rules.
type Pin struct {
	Index       int // 0-based index in the history
	Entry       HistoryEntry
	RulesSHA256 string
	// By says who pinned: "approval by AGENT" or "gate run gate-N".
	By string
}

// PinnedRules returns the entry that pins the task's rules (SPEC §4.4): the latest approval, or,
// when there is none, the first gate run that recorded the rules it read. ok is false before
// anything pinned the rules. The entry's authenticity (chain, HMAC) is the caller's to check. It
// is the history's scan (Facts.Pin).
func PinnedRules(r *Record) (Pin, bool) {
	f := scanOf(r)
	return f.Pin, f.Pinned
}
