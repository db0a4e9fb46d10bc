package tiers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// fitForRecord makes sure a run writes nothing the readers refuse (SPEC §2 invariant 9, §7.3). It
// is called before anything of the run is written, with the verdict and budget computed, and
// returns the escalation decision (changed when the result had to change) and whether the run
// may write at all. tampered says that the run's checks found the history tampered
// (historyTampered): nothing of the run goes into the record then. It also returns the run's
// history entry, not yet chained, when the run writes it.
//
//   - The history entry would take the history past max_history_bytes (or, while the history is
//     kept in record.json, the record past what record.Load reads): the run is an error
//     (history_full) and nothing is written, not even an event, since an event of a run the
//     history does not hold would make the history look truncated.
//   - The result would make record.json larger than max_record_bytes: the result is replaced by
//     its compact form, an error (result_too_large) whose checks are cut down to the ones that
//     did not pass and whose causes are summarized, and the budget is computed again for it. A
//     compact form that still does not fit is an error of the run: nothing is written.
func fitForRecord(in *Snapshot, res *Result, escalate, tampered bool) (bool, bool, record.HistoryEntry, error) {
	var none record.HistoryEntry
	if in.Record == nil || tampered {
		return escalate, true, none, nil // nothing of the run goes into the record
	}
	// The result and its entry as the record would hold them, encoded once for each form of res.
	raw, err := res.JSON()
	if err != nil {
		return escalate, false, none, err
	}
	entry := historyEntry(res)
	own, total, err := recordSize(in, raw, entry)
	if err != nil {
		return escalate, false, none, err
	}
	if own > in.Policy.MaxRecordBytes {
		fitted := false
		for _, keep := range []int{100, 0} {
			compactResult(in, res, own, keep)
			escalate = rebudget(in, res)
			if raw, err = res.JSON(); err != nil {
				return escalate, false, none, err
			}
			entry = historyEntry(res)
			o, t, err := recordSize(in, raw, entry)
			if err != nil {
				return escalate, false, none, err
			}
			if o <= in.Policy.MaxRecordBytes {
				own, total, fitted = o, t, true
				break
			}
		}
		if !fitted {
			return escalate, false, none, fmt.Errorf("record.json: even the compact form of this run's result would take it over the limit of %d bytes (max_record_bytes): nothing was recorded", in.Policy.MaxRecordBytes)
		}
	}
	// The history as its file holds it, one canonical entry a line, and the entry's line.
	entryLine, err := record.HistoryLineBytes(entry)
	if err != nil {
		return escalate, false, none, err
	}
	size, err := record.HistoryLineBytes(in.Record.History()...)
	if err != nil {
		return escalate, false, none, err
	}
	entryLine += 256 // prev_hash, hash and hmac are set when the entry is chained
	if err := record.CheckHistoryAppend(size, entryLine, in.Policy.MaxHistoryBytes); err != nil {
		historyFull(in, res, err)
		return false, false, none, nil
	}
	if total > record.MaxBytes {
		// While the history is kept in record.json, it also must not take the record past what
		// record.Load reads.
		historyFull(in, res, &record.HistoryFullError{Size: total - own - entryLine, Entry: entryLine, Limit: record.MaxBytes - own})
		return false, false, none, nil
	}
	if t := res.Transition; t != nil && in.Contract != nil {
		// The new status can make the contract a few bytes longer: checked before anything is
		// written, so a refusal leaves no half-applied run.
		updated, err := record.SetContractStatus(in.Contract.Raw, vocab.State(t.To), time.Now())
		if err != nil {
			return escalate, false, none, err
		}
		if err := checkWriteSize(in.TaskDir+"/"+record.ContractFile, updated, in.Policy.MaxContractBytes); err != nil {
			return escalate, false, none, err
		}
	}
	return escalate, true, entry, nil
}

// rebudget computes the budget, transition and next action again for a result whose verdict
// changed.
func rebudget(in *Snapshot, res *Result) bool {
	res.Transition, res.Escalation, res.NextAction = nil, "", ""
	return Budget(in, res)
}

// historyFull turns res into the history_full error of a run that records nothing.
func historyFull(in *Snapshot, res *Result, err error) {
	c := failCheck(0, "history_room", "the gate history has room for this run's entry (max_history_bytes, SPEC §10)", err.Error(), StatusError, vocab.CauseHistoryFull)
	res.Checks = append([]Check{c}, res.Checks...)
	res.Verdict, res.Causes = decide(res.Checks)
	res.TierResults["tier_0"] = tierResult(res.Checks, 0, "")
	rebudget(in, res)
	res.RetryBudgetBefore, res.RetryBudgetAfter, res.Transition = nil, nil, nil
	res.Notes = append(res.Notes, "nothing was recorded: the gate history is full (geas task history reset keeps it aside and starts a new chain)")
}

// recordSize is what record.json would be with raw (a run's result, without its hash) as its
// gate_result and entry (the run's history entry, not yet chained) at the end of its history: own
// is its size without the history kept in it by the earlier layout, total with it. It errs on the
// large side (by a few hundred bytes) and does not touch in.Record.
func recordSize(in *Snapshot, raw []byte, entry record.HistoryEntry) (own, total int64, err error) {
	cur, err := in.Record.Bytes()
	if err != nil {
		return 0, 0, err
	}
	others := int64(len(cur))
	if f := in.Facts; f.HaveGateResult {
		others -= indentedLen(f.GateResult, 1)
	}
	hist := in.historyBytes
	others -= hist
	own = others + indentedLen(raw, 1) + 64 /* the hash */ + 256 /* keys, updated_at */
	line, err := json.Marshal(entry)
	if err != nil {
		return 0, 0, err
	}
	total = own + hist + indentedLen(line, 2) + 256
	return own, total, nil
}

// Bounds of the compact form of a result (SPEC §7.3).
const (
	compactTextBytes = 1024
	compactList      = 20
)

// compactResult replaces res by its compact form: the checks that did not pass (at most keep,
// each text and evidence cut to compactTextBytes) after a result_recordable error naming the
// size, the limit and the original verdict with its causes counted by code; the eval runs,
// rubric scores, dimensions and notes cut to compactList items.
func compactResult(in *Snapshot, res *Result, size int64, keep int) {
	orig := res.Verdict
	found := fmt.Sprintf("the result of this run (%d checks, %d causes) would make record.json about %d bytes, over its limit of %d bytes (max_record_bytes): recorded in compact form instead; the checks found verdict %s",
		len(res.Checks), len(res.Causes), size, in.Policy.MaxRecordBytes, orig)
	if summary := causeCounts(res.Causes); len(summary) > 0 {
		found += " with causes " + text.JoinLimited(summary, compactList)
	}
	checks := compactChecks(res.Checks, keep, failCheck(0, "result_recordable", "the run's result fits in record.json, so every reader can read the task back (SPEC §2 invariant 9)", found, StatusError, vocab.CauseResultTooLarge))
	res.Checks = checks
	res.Verdict, res.Causes = decide(checks)
	for tier := 0; tier <= 2; tier++ {
		key := fmt.Sprintf("tier_%d", tier)
		old := res.TierResults[key]
		if old.Status == StatusSkipped {
			res.TierResults[key] = TierResult{Status: StatusSkipped, Details: cut(old.Details)}
			continue
		}
		res.TierResults[key] = tierResult(checks, tier, "")
	}
	limit := compactList
	if keep == 0 {
		limit = 0
	}
	compactLists(res, limit)
	res.Notes = append(res.Notes, fmt.Sprintf("result_too_large: recorded in compact form (verdict %s of the checks replaced by error; raise max_record_bytes up to %d, or cut the contract down)",
		orig, policy.LimitCeiling*record.DefaultMaxBytes))
}

// causeCounts is "code ×n" for each cause code, the most frequent first (then by code).
func causeCounts(causes []Cause) []string {
	counts := map[string]int{}
	for _, c := range causes {
		counts[string(c.Code)]++
	}
	codes := make([]string, 0, len(counts))
	for code := range counts {
		codes = append(codes, code)
	}
	sort.Slice(codes, func(i, j int) bool {
		if counts[codes[i]] != counts[codes[j]] {
			return counts[codes[i]] > counts[codes[j]]
		}
		return codes[i] < codes[j]
	})
	summary := make([]string, 0, len(codes))
	for _, code := range codes {
		summary = append(summary, fmt.Sprintf("%s ×%d", code, counts[code]))
	}
	return summary
}

// compactChecks is first followed by at most keep of checks that did not pass, each cut; first's
// evidence says how many more were left out.
func compactChecks(all []Check, keep int, first Check) []Check {
	checks := []Check{first}
	dropped := 0
	for _, c := range all {
		if c.Status == StatusPass || c.Status == StatusSkipped || c.Name == "result_recordable" {
			continue
		}
		if len(checks)-1 >= keep {
			dropped++
			continue
		}
		c.Text, c.Evidence = cut(c.Text), cut(c.Evidence)
		if len(c.Locations) > compactList {
			c.Locations = c.Locations[:compactList]
		}
		checks = append(checks, c)
	}
	if dropped > 0 {
		checks[0].Evidence += fmt.Sprintf("; %d more checks that did not pass are not listed", dropped)
	}
	return checks
}

// compactLists cuts res's advisory causes to compactList and its eval runs, rubric scores,
// blocking dimensions and notes to limit items, and every text in them to compactTextBytes.
func compactLists(res *Result, limit int) {
	if len(res.AdvisoryCauses) > compactList {
		res.AdvisoryCauses = res.AdvisoryCauses[:compactList]
	}
	for i := range res.AdvisoryCauses {
		res.AdvisoryCauses[i].Detail = cut(res.AdvisoryCauses[i].Detail)
	}
	if len(res.EvalRuns) > limit {
		res.EvalRuns = res.EvalRuns[:limit]
	}
	for i := range res.EvalRuns {
		res.EvalRuns[i].OutputTail = cut(res.EvalRuns[i].OutputTail)
		res.EvalRuns[i].Command = cut(res.EvalRuns[i].Command)
		res.EvalRuns[i].Error = cut(res.EvalRuns[i].Error)
		if t := res.EvalRuns[i].Tests; t != nil {
			t.Error = cut(t.Error)
		}
	}
	if len(res.RubricScores) > limit {
		res.RubricScores = res.RubricScores[:limit]
	}
	if len(res.BlockingDimensions) > limit {
		res.BlockingDimensions = res.BlockingDimensions[:limit]
	}
	if len(res.Notes) > limit {
		res.Notes = res.Notes[:limit]
	}
	for i := range res.Notes {
		res.Notes[i] = cut(res.Notes[i])
	}
}

// cut shortens s to compactTextBytes on a rune boundary, saying how much was cut.
func cut(s string) string {
	if len(s) <= compactTextBytes {
		return s
	}
	kept := text.Cut(s, compactTextBytes)
	return kept + fmt.Sprintf("… (%d more bytes)", len(s)-len(kept))
}

// checkWriteSize refuses to write data as name when it is over limit, the size its readers accept.
func checkWriteSize(name string, data []byte, limit int64) error {
	if int64(len(data)) > limit {
		return fmt.Errorf("%s: %d bytes would exceed the limit of %d bytes that the gate reads back (max_contract_bytes): nothing of this run was written", name, len(data), limit)
	}
	return nil
}

// indentedLen is the size raw takes in record.json at depth (record.Bytes indents two spaces a
// level).
func indentedLen(raw []byte, depth int) int64 {
	var buf bytes.Buffer
	prefix := strings.Repeat("  ", depth)
	if err := json.Indent(&buf, raw, prefix, "  "); err != nil {
		return int64(len(raw))
	}
	return int64(buf.Len())
}
