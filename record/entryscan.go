package record

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastEntry reads one gate-history.jsonl line without encoding/json when the line is written the
// way the gate writes it: a compact object, keys without escapes and each once, string values
// without escapes, budgets as plain integers, causes and extra values compact and free of
// repeated keys, nothing after the object. It returns what parseHistoryLines' slow path
// (schemas.Decode, the key-case check, HistoryEntry.UnmarshalJSON, checkEntry) returns for such
// a line; ok is false for any other line, or one the slow path refuses, which then takes the
// slow path for its verdict and its message. TestFastEntryIsSlowEntry checks both paths agree.
func fastEntry(line []byte) (e HistoryEntry, ok bool) {
	if len(line) < 2 || line[0] != '{' || !utf8.Valid(line) {
		return HistoryEntry{}, false
	}
	s := &jsonScan{b: line, i: 1, dupCheck: true}
	var seen uint16
	var extraKeys [][]byte
	str := func(bit uint16, dst *string) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		raw, plain, ok := s.str()
		if !ok || !plain {
			return false
		}
		*dst = string(raw)
		return true
	}
	num := func(bit uint16, dst **int) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		start := s.i
		if integer, ok := s.num(); !ok || !integer {
			return false
		}
		n, err := strconv.Atoi(string(line[start:s.i]))
		if err != nil || n < 0 {
			return false
		}
		*dst = &n
		return true
	}
	rawValue := func() (json.RawMessage, bool) {
		start := s.i
		s.spaced = false
		if !s.value(1) || s.spaced {
			return nil, false
		}
		return bytes.Clone(line[start:s.i]), true
	}
	for {
		k, okk := s.member()
		if !okk || s.spaced {
			return HistoryEntry{}, false
		}
		var good bool
		switch string(k) {
		case "kind":
			good = str(1<<0, &e.Kind)
		case "run_id":
			good = str(1<<1, &e.RunID)
		case "verdict":
			good = str(1<<2, &e.Verdict)
		case "causes":
			if seen&(1<<3) == 0 {
				seen |= 1 << 3
				e.Causes, good = rawValue()
			}
		case "retry_budget_before":
			good = num(1<<4, &e.RetryBudgetBefore)
		case "retry_budget_after":
			good = num(1<<5, &e.RetryBudgetAfter)
		case "head":
			good = str(1<<6, &e.Head)
		case "inputs_sha256":
			good = str(1<<7, &e.InputsSHA256)
		case "rules_sha256":
			good = str(1<<8, &e.RulesSHA256)
		case "started_at":
			good = str(1<<9, &e.StartedAt)
		case "prev_hash":
			good = str(1<<10, &e.PrevHash)
		case "hash":
			good = str(1<<11, &e.Hash)
		case "hmac":
			good = str(1<<12, &e.HMAC)
		default:
			// A key that differs from a known one only by letter case is refused (FoldProblems);
			// one repeated is refused (schemas.Decode).
			if slices.ContainsFunc(historyKeys, func(h string) bool { return strings.EqualFold(h, string(k)) }) ||
				slices.ContainsFunc(extraKeys, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return HistoryEntry{}, false
			}
			extraKeys = append(extraKeys, k)
			var v json.RawMessage
			if v, good = rawValue(); good {
				if e.Extra == nil {
					e.Extra = map[string]json.RawMessage{}
				}
				e.Extra[string(k)] = v
			}
		}
		if !good {
			return HistoryEntry{}, false
		}
		more, okn := s.next()
		if !okn || s.spaced {
			return HistoryEntry{}, false
		}
		if !more {
			break
		}
	}
	if s.i != len(line) || checkEntry(e) != nil {
		return HistoryEntry{}, false
	}
	return e, true
}

// fastFirstCause is firstCause without encoding/json, for a causes array whose first item is an
// object with ASCII keys, each once, and whose code, when present, is an ASCII string without
// escapes; ok is false for anything else, which takes the slow path.
func fastFirstCause(causes []byte) (code string, ok bool) {
	s := &jsonScan{b: causes}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return "", false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.ws()
		return "", s.i == len(s.b)
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return "", false
	}
	s.i++
	var keys [8][]byte
	seen := keys[:0]
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			k, okk := s.member()
			if !okk || slices.ContainsFunc(seen, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return "", false
			}
			seen = append(seen, k)
			if string(k) == "code" {
				if code, okk = s.plainString(); !okk {
					return "", false
				}
			} else if !s.value(1) {
				return "", false
			}
			more, okn := s.next()
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
		s.ws()
		if s.i >= len(s.b) {
			return "", false
		}
		if s.b[s.i] == ']' {
			s.i++
			break
		}
		if s.b[s.i] != ',' {
			return "", false
		}
		s.i++
		if !s.value(1) {
			return "", false
		}
	}
	s.ws()
	return code, s.i == len(s.b)
}
