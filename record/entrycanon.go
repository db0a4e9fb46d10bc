package record

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/jsonscan"
)

// maxCanonInt is the largest integer magnitude written as its digits by the fast canonical form
// (canon.MaxExactInt); larger ones take the slow path.
const maxCanonInt = canon.MaxExactInt

// fastCanonical writes e's RFC 8785 form without encoding/json: the members MarshalJSON writes
// (without hash and hmac unless links is set), sorted, each value in canonical form. What is the
// entry's own is here (its members, which of them are written, the extra keys MarshalJSON drops);
// the canonical form of each string and value is internal/canon's (AppendString, AppendValue,
// which TestAppendValueIsBytes and FuzzAppendValue prove equal to the library's). It handles
// the entries the gate writes: ASCII strings and keys, integers of at most 15 digits, causes and
// extra values made of those. ok is false for anything else (non-ASCII text, other numbers, a
// value that is not valid JSON, repeated keys), and the caller takes the slow path (canonical via
// internal/canon), so both always give the same bytes; TestFastCanonicalIsCanon and
// FuzzFastCanonical check that.
//
// It mirrors encoding/json and jcs (slowCanonical, canon.Marshal) for the entries the gate writes,
// and pays for itself: every read of a history hashes each entry, and against the build with -tags
// lib_entrycanon (bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2 shared cores), median CPU
// time of a whole run library/twin 1.62 for gate --all over 100 tasks of 30 history lines and 1.78
// for one task of 530 lines (quartiles 1.54-1.65, 1.71-1.82); 1.00 on the tasks without a history.
func fastCanonical(e HistoryEntry, links bool) ([]byte, bool) {
	out, _, ok := appendFastCanonical(nil, make([]byte, 0, 512), e, links)
	return out, ok
}

// appendFastCanonical is fastCanonical appending to out, with scratch as room for the values; it
// returns both grown, for a caller that reuses them (withCanonical, with canonScratch).
func appendFastCanonical(out, scratch []byte, e HistoryEntry, links bool) ([]byte, []byte, bool) {
	if !twinEntryCanon {
		return out, scratch, false
	}
	v := canonVals{buf: scratch[:0]}
	if !v.known(e, links) {
		return out, v.buf, false
	}
	extra, ok := extraCanonKeys(e)
	if !ok {
		return out, v.buf, false
	}
	out, ok = v.appendObject(out, e, extra)
	return out, v.buf, ok
}

// canonVals holds the canonical values of an entry's known members, in one buffer.
type canonVals struct {
	// v[i] is the canonical value of canonKeys[i], nil when the member is not written.
	v   [len(canonKeys)][]byte
	buf []byte
}

// known fills v with e's known members, as MarshalJSON writes them; false when one is not in the
// fast path's subset.
func (v *canonVals) known(e HistoryEntry, links bool) bool {
	ok := v.str(ckKind, e.Kind, false) && v.str(ckRunID, e.RunID, false) && v.str(ckVerdict, e.Verdict, false) &&
		v.num(ckBefore, e.RetryBudgetBefore) && v.num(ckAfter, e.RetryBudgetAfter) &&
		v.str(ckHead, e.Head, false) && v.str(ckInputs, e.InputsSHA256, false) && v.str(ckRules, e.RulesSHA256, false) &&
		v.str(ckStarted, e.StartedAt, false) &&
		// The chain links are always written (MarshalJSON), even empty; hmac when set.
		v.str(ckPrev, e.PrevHash, true) && (!links || v.str(ckHash, e.Hash, true) && v.str(ckHMAC, e.HMAC, false))
	if !ok {
		return false
	}
	if len(e.Causes) > 0 {
		if v.v[ckCauses], ok = canon.AppendValue(nil, bytes.TrimSpace(e.Causes)); !ok {
			return false
		}
	}
	return true
}

// str sets v[i] to the string s, unless it is empty and not always written; false when s is not
// ASCII.
func (v *canonVals) str(i int, s string, always bool) bool {
	if s == "" && !always {
		return true
	}
	if !jsonscan.IsASCIIString(s) {
		return false
	}
	start := len(v.buf)
	v.buf = canon.AppendString(v.buf, s)
	v.v[i] = v.buf[start:len(v.buf):len(v.buf)] // a later append that grows buf leaves this window as written
	return true
}

// num sets v[i] to the integer n when it is set; false when it has more than 15 digits.
func (v *canonVals) num(i int, n *int) bool {
	if n == nil {
		return true
	}
	if *n > maxCanonInt || *n < -maxCanonInt {
		return false
	}
	start := len(v.buf)
	v.buf = strconv.AppendInt(v.buf, int64(*n), 10)
	v.v[i] = v.buf[start:len(v.buf):len(v.buf)]
	return true
}

// extraCanonKeys are the keys of e.Extra that MarshalJSON writes, sorted; false when one is not
// ASCII.
func extraCanonKeys(e HistoryEntry) ([]string, bool) {
	var extra []string
	for k := range e.Extra {
		if slices.Contains(historyKeys, k) {
			continue // MarshalJSON drops an extra key that shadows a known one
		}
		if !jsonscan.IsASCIIString(k) {
			return nil, false
		}
		extra = append(extra, k)
	}
	// ASCII keys: byte order is the UTF-16 order RFC 8785 sorts by.
	slices.Sort(extra)
	return extra, true
}

// appendObject writes the object over out: the known members of v, in canonKeys order (the
// RFC 8785 order), with the extra keys of e merged in; false when an extra value is not in the
// fast path's subset.
func (v *canonVals) appendObject(out []byte, e HistoryEntry, extra []string) ([]byte, bool) {
	out = append(out[:0], '{')
	x := 0
	for i, k := range canonKeys {
		for ; x < len(extra) && extra[x] < k; x++ {
			var ok bool
			if out, ok = appendExtraMember(out, extra[x], e.Extra[extra[x]]); !ok {
				return out, false
			}
		}
		if v.v[i] != nil {
			out = appendCanonMember(out, k, v.v[i])
		}
	}
	for ; x < len(extra); x++ {
		var ok bool
		if out, ok = appendExtraMember(out, extra[x], e.Extra[extra[x]]); !ok {
			return out, false
		}
	}
	return append(out, '}'), true
}

// appendExtraMember appends the member k of an entry's extra keys, its raw value made canonical.
func appendExtraMember(out []byte, k string, raw []byte) ([]byte, bool) {
	v, ok := canon.AppendValue(nil, bytes.TrimSpace(raw))
	if !ok {
		return out, false
	}
	return appendCanonMember(out, k, v), true
}

// appendCanonMember appends `"k":v` to the object out, after a comma unless it is the first.
func appendCanonMember(out []byte, k string, v []byte) []byte {
	if len(out) > 1 { // out holds more than its '{'
		out = append(out, ',')
	}
	out = canon.AppendString(out, k)
	out = append(out, ':')
	return append(out, v...)
}

// canonScratch holds the buffers EntryHash, EntryHMAC and HistoryLineBytes reuse, since a
// verification canonicalizes every entry of the history and keeps none of the bytes.
var canonScratch = sync.Pool{New: func() any { return new([2][]byte) }}

// withCanonical calls use with e's canonical form (canonical, or with links the form of
// HistoryLineBytes), in a reused buffer that use must not keep.
func withCanonical(e HistoryEntry, links bool, use func([]byte)) error {
	sc := canonScratch.Get().(*[2][]byte)
	defer canonScratch.Put(sc)
	out, buf, ok := appendFastCanonical(sc[0], sc[1], e, links)
	if cap(out) <= 64<<10 && cap(buf) <= 64<<10 {
		sc[0], sc[1] = out[:0], buf[:0]
	}
	if !ok {
		var err error
		if links {
			out, err = canon.Marshal(e)
		} else {
			out, err = slowCanonical(e)
		}
		if err != nil {
			return err
		}
	}
	use(out)
	return nil
}

// canonKeys are HistoryEntry's known keys in RFC 8785 order, and ck* their indexes.
var canonKeys = [...]string{
	"causes", "hash", "head", "hmac", "inputs_sha256", "kind", "prev_hash", "retry_budget_after",
	"retry_budget_before", "rules_sha256", "run_id", "started_at", "verdict",
}

const (
	ckCauses = iota
	ckHash
	ckHead
	ckHMAC
	ckInputs
	ckKind
	ckPrev
	ckAfter
	ckBefore
	ckRules
	ckRunID
	ckStarted
	ckVerdict
)
