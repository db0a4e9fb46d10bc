package tiers

import (
	"encoding/json"
	"fmt"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// attempt is what makes a run the same attempt as an earlier one (SPEC §7.1 "A retry is spent
// once per attempt"): the head it judges, its inputs_sha256, its rules_sha256, and the other
// tasks' passes it may attribute files to (SPEC §5.3 B).
type attempt struct {
	head, inputs, rules string
	// attributed digests the other tasks' verified passes the run attributes files to
	// (passesDigest, attribution.go), recorded in the run's entry; "" when none, as an entry
	// recorded without it reads.
	attributed string
}

// attemptNow is the attempt the run being made judges, made once (Evaluate) when tier 0 resolved
// the head (pass.head) and the attribution was made: the result records its inputs digest and
// attributed passes, and the repeat check compares it with the latest recorded run's.
func attemptNow(pass *Pass) attempt {
	return attempt{head: pass.head, inputs: inputsDigest(pass.in, pass.head), rules: pass.in.RulesSHA256, attributed: pass.attrib.digest}
}

// attemptOf is the attempt a recorded gate run judged.
func attemptOf(e record.HistoryEntry) attempt {
	return attempt{head: e.Head, inputs: e.InputsSHA256, rules: e.RulesSHA256, attributed: attributedPassesOf(e)}
}

// inputsDigest is inputs_sha256 (SPEC §7.4): the sha256 of the RFC 8785 JSON of
// {"files": {path: sha256}, "head": sha}. The framing is JSON's, so no two different input sets
// share a digest by concatenation.
func inputsDigest(in *Snapshot, head string) string {
	files := in.Files
	if files == nil {
		files = in.snapshot()
	}
	d, err := canon.SHA256(map[string]any{"files": files, "head": head})
	if err != nil {
		return ""
	}
	return d
}

// attributedPassesOf is the digest of the other tasks' passes a recorded gate run attributed files
// to (attributedPassesKey, passesDigest); "" when the entry has none.
func attributedPassesOf(e record.HistoryEntry) string {
	raw, ok := e.Extra[attributedPassesKey]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "unreadable"
	}
	return s
}

// repeatedRun returns the latest recorded gate run when the run being made is the same attempt
// (SPEC §7.1): that run's verdict was fail, the history verified (tier 0's history check, with
// its chain, HMACs, gate_result and events, is among tier0, which all passed: a tampered history
// is never repeated from), nothing was recorded after it (a grant, an approval, a reset, a
// revocation is a later entry, and a new attempt), a retry is left, and the head, the inputs,
// the rules and the attributed passes equal that run's. tier0 are the run's tier-0 checks, the
// working tree's included: a fail that tier 0 itself found, or a tree that no longer is the head,
// is recomputed. A pass, a block and an error are never repeated.
func repeatedRun(pass *Pass, tier0 []Check) (record.HistoryEntry, []Cause, bool) {
	in := pass.in
	if in.Contract == nil || in.Record == nil || pass.opts.Verify || pass.head == "" || notPassedSince(tier0, 0) || !ranCheck(tier0, "history") {
		return record.HistoryEntry{}, nil, false
	}
	hist := in.Facts.History
	if len(hist) == 0 {
		return record.HistoryEntry{}, nil, false
	}
	last := hist[len(hist)-1]
	if !last.IsGateRun() || last.Verdict != string(vocab.VerdictFail) || last.RunID == "" || last.RetryBudgetAfter == nil {
		return record.HistoryEntry{}, nil, false
	}
	// last is the latest entry and records a budget: what it left is the budget left (budgetLeft).
	if *last.RetryBudgetAfter <= 0 || attemptOf(last) != pass.attempt {
		return record.HistoryEntry{}, nil, false
	}
	var causes []Cause
	if err := json.Unmarshal(last.Causes, &causes); err != nil || len(causes) == 0 {
		return record.HistoryEntry{}, nil, false // a fail names its causes; one that does not is recomputed
	}
	for _, c := range causes {
		if c.Code == "" {
			return record.HistoryEntry{}, nil, false
		}
	}
	return last, causes, true
}

// ranCheck reports whether a check of that name passed among checks.
func ranCheck(checks []Check, name string) bool {
	for _, c := range checks {
		if c.Name == name && c.Status == StatusPass {
			return true
		}
	}
	return false
}

// checkSameAttempt names the check a repeated run reports in place of the stages it did not run.
const checkSameAttempt = "same_attempt"

// repeatResult is the result of a run that is the same attempt as the recorded run last: its
// tier-0 checks, then one failing check that stands for the stages not run, folded by decide as
// every result is (so it can never be a pass), with last's causes reported again; false when it
// did not fold to fail. It runs nothing, and the run records nothing (RepeatOf).
func repeatResult(pass *Pass, ev *evaluation, profile vocab.Profile, last record.HistoryEntry, causes []Cause) (*Result, bool) {
	why := fmt.Sprintf("same attempt as %s: nothing changed since; nothing run, no retry spent", last.RunID)
	same := fmt.Sprintf("head %s, inputs_sha256 %s and rules_sha256 %s", short(pass.head), short(last.InputsSHA256), short(last.RulesSHA256))
	if a := attributedPassesOf(last); a != "" {
		same = fmt.Sprintf("head %s, inputs_sha256 %s, rules_sha256 %s and the passes of other tasks attributed (%s)", short(pass.head), short(last.InputsSHA256), short(last.RulesSHA256), short(a))
	}
	ev.checks = append(ev.checks, failCheck(1, checkSameAttempt,
		"the head, the inputs and the rules (and the other tasks' passes attributed) differ from those of the latest recorded run",
		fmt.Sprintf("%s are those of %s, whose verdict was fail: %s", same, last.RunID, why),
		StatusFail, causes[0].Code))
	res := result(pass, ev, profile, map[int]string{2: "not run: " + why})
	if res.Verdict != vocab.VerdictFail {
		return nil, false // decide is the one builder of a verdict, and a repeat is only ever a fail
	}
	res.Causes = causes
	res.RunID, res.RepeatOf, res.Hash = last.RunID, last.RunID, last.Hash // that run's result, reported again
	res.Notes = append(res.Notes, why)
	return res, true
}
