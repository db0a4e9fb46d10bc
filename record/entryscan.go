package record

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/geas-dev/geas/internal/jsonscan"
)

// fastEntry reads one gate-history.jsonl line without encoding/json when the line is written the
// way the gate writes it: a compact object, keys without escapes and each once, string values
// without escapes, budgets as plain integers, causes and extra values compact and free of
// repeated keys, nothing after the object. It returns what parseHistoryLines' slow path
// (schemas.Decode, the key-case check, HistoryEntry.UnmarshalJSON, checkEntry) returns for such
// a line; ok is false for any other line, or one the slow path refuses, which then takes the
// slow path for its verdict and its message. TestFastEntryIsSlowEntry and FuzzFastEntry check
// both paths agree (fastFirstCause, in facts.go, is the same twin for a causes array).
//
// It mirrors schemas.Decode and encoding/json for the gate's own lines, and pays for itself:
// against the build with -tags lib_entryscan (bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2
// shared cores), median CPU time of a whole run library/twin 1.55 for gate --all over 100 tasks of
// 30 history lines and 1.76 for one task of 530 lines (quartiles 1.50-1.65, 1.68-1.80); 1.00 on the
// tasks without a history.
func fastEntry(line []byte) (HistoryEntry, bool) {
	if !twinEntryScan {
		return HistoryEntry{}, false
	}
	if len(line) < 2 || line[0] != '{' || !utf8.Valid(line) {
		return HistoryEntry{}, false
	}
	r := entryScan{Scanner: jsonscan.Scanner{Data: line, Pos: 1, DupCheck: true}}
	for {
		k, ok := r.Member()
		if !ok || r.Spaced || !r.field(k) {
			return HistoryEntry{}, false
		}
		more, ok := r.More('}')
		if !ok || r.Spaced {
			return HistoryEntry{}, false
		}
		if !more {
			break
		}
	}
	if r.Pos != len(line) || checkEntry(r.e) != nil {
		return HistoryEntry{}, false
	}
	return r.e, true
}

// entryScan reads one history line for fastEntry: the entry read so far, the known keys seen (a
// bit each) and the extra keys seen.
type entryScan struct {
	jsonscan.Scanner
	e         HistoryEntry
	seen      uint16
	extraKeys [][]byte
}

// field reads the value of the member k into the entry; false when fastEntry cannot take it.
func (r *entryScan) field(k []byte) bool {
	e := &r.e
	switch string(k) {
	case "kind":
		return r.str(1<<0, &e.Kind)
	case "run_id":
		return r.str(1<<1, &e.RunID)
	case "verdict":
		return r.str(1<<2, &e.Verdict)
	case "causes":
		if !r.first(1 << 3) {
			return false
		}
		var ok bool
		e.Causes, ok = r.rawValue()
		return ok
	case "retry_budget_before":
		return r.num(1<<4, &e.RetryBudgetBefore)
	case "retry_budget_after":
		return r.num(1<<5, &e.RetryBudgetAfter)
	case "head":
		return r.str(1<<6, &e.Head)
	case "inputs_sha256":
		return r.str(1<<7, &e.InputsSHA256)
	case "rules_sha256":
		return r.str(1<<8, &e.RulesSHA256)
	case "started_at":
		return r.str(1<<9, &e.StartedAt)
	case "prev_hash":
		return r.str(1<<10, &e.PrevHash)
	case "hash":
		return r.str(1<<11, &e.Hash)
	case "hmac":
		return r.str(1<<12, &e.HMAC)
	default:
		return r.extra(k)
	}
}

// first marks the known key of bit seen, and reports whether it was not seen before.
func (r *entryScan) first(bit uint16) bool {
	if r.seen&bit != 0 {
		return false
	}
	r.seen |= bit
	return true
}

// str reads a string value without escapes into dst, for the known key of bit.
func (r *entryScan) str(bit uint16, dst *string) bool {
	if !r.first(bit) {
		return false
	}
	raw, plain, ok := r.Str()
	if !ok || !plain {
		return false
	}
	*dst = string(raw)
	return true
}

// num reads a budget, a plain integer that is not negative, into dst, for the known key of bit.
func (r *entryScan) num(bit uint16, dst **int) bool {
	if !r.first(bit) {
		return false
	}
	start := r.Pos
	if integer, ok := r.Num(); !ok || !integer {
		return false
	}
	n, err := strconv.Atoi(string(r.Data[start:r.Pos]))
	if err != nil || n < 0 {
		return false
	}
	*dst = &n
	return true
}

// rawValue reads a compact value, free of repeated keys, and returns a copy of its bytes.
func (r *entryScan) rawValue() (json.RawMessage, bool) {
	start := r.Pos
	r.Spaced = false
	if !r.Value(1) || r.Spaced {
		return nil, false
	}
	return bytes.Clone(r.Data[start:r.Pos]), true
}

// extra reads the value of the extra key k into the entry's Extra.
func (r *entryScan) extra(k []byte) bool {
	// A key that differs from a known one only by letter case is refused (FoldProblems); one
	// repeated is refused (schemas.Decode).
	if slices.ContainsFunc(historyKeys, func(h string) bool { return strings.EqualFold(h, string(k)) }) ||
		slices.ContainsFunc(r.extraKeys, func(o []byte) bool { return bytes.Equal(o, k) }) {
		return false
	}
	r.extraKeys = append(r.extraKeys, k)
	v, ok := r.rawValue()
	if !ok {
		return false
	}
	if r.e.Extra == nil {
		r.e.Extra = map[string]json.RawMessage{}
	}
	r.e.Extra[string(k)] = v
	return true
}
