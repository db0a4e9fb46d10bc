package record

import (
	"encoding/json"
	"fmt"
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
// anything pinned the rules. The entry's authenticity (chain, HMAC) is the caller's to check.
func PinnedRules(r *Record) (Pin, bool) {
	if r == nil {
		return Pin{}, false
	}
	for i := len(r.history) - 1; i >= 0; i-- {
		if e := r.history[i]; e.Kind == KindApproval && e.RulesSHA256 != "" {
			by := ""
			if raw, ok := e.Extra["by"]; ok {
				_ = json.Unmarshal(raw, &by)
			}
			return Pin{Index: i, Entry: e, RulesSHA256: e.RulesSHA256, By: fmt.Sprintf("approval by %s at %s", orUnknown(by), e.StartedAt)}, true
		}
	}
	for i, e := range r.history {
		if isRun(e) && e.RulesSHA256 != "" {
			return Pin{Index: i, Entry: e, RulesSHA256: e.RulesSHA256, By: fmt.Sprintf("gate run %s at %s", orUnknown(e.RunID), e.StartedAt)}, true
		}
	}
	return Pin{}, false
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
