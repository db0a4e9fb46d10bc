package tiers

import (
	"context"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// boundResult is one criteria_results entry bound to a criterion.
type boundResult struct {
	e   *evidence.Evidence
	res evidence.CriterionResult
}

// boundJudgment is one judgment bound to a criterion.
type boundJudgment struct {
	e *evidence.Evidence
	j evidence.Judgment
}

// partAFacts is what part A found: its checks, the script detectors' runs, the claims so far
// (those of tier 1 and those the detectors contradicted), and the code that changed the working
// tree so far ("" when none did).
type partAFacts struct {
	checks    []Check
	runs      []EvalRun
	claims    claims
	changedBy string
}

// partA checks every acceptance criterion (SPEC §5.3 Part A): by its detector if it has one, else
// by independent evidence. The implementer's own criteria_results are shown but never count. Each
// criteria_results entry and each judgment binds to at most one criterion (bindCriteria).
//
// The detectors run first, in criterion order: a detector that fails contradicts every independent
// file that claims the criterion passed, and a contradicted file's entries do not count for the
// criteria judged by evidence (SPEC §5.2a.7). The checks are listed in criterion order.
func partA(ctx context.Context, pass *Pass) partAFacts {
	f := partAFacts{claims: pass.claims.clone(), changedBy: pass.changedBy}
	bound := bindCriteria(pass)
	crs := pass.in.Contract.AcceptanceCriteria
	byCriterion := make([][]Check, len(crs))
	for i, cr := range crs {
		idx := i + 1
		if cr.Check == nil {
			continue
		}
		if f.changedBy != "" && readsTree(cr.Check.Type) {
			byCriterion[i] = []Check{skippedCheck(2, "criterion:"+criterionLabel(idx, cr),
				fmt.Sprintf("%s %q: %s detector", criterionLabel(idx, cr), cr.Criterion, cr.Check.Type),
				"not run: "+f.changedBy+" changed the working tree, so what this detector reads is not the commit's")}
			continue
		}
		c, dw, run := detect(ctx, pass, &bound, idx, cr)
		if run != nil {
			f.runs = append(f.runs, *run)
		}
		f.claims.contradictByDetector(pass, bound.results[i], idx, cr, c)
		byCriterion[i] = append([]Check{c}, dw...)
		if cr.Check.Type == contract.DetectScript {
			if ch := afterDetector(pass, f.changedBy, criterionLabel(idx, cr), scriptLabel(cr.Check)); ch != nil {
				byCriterion[i] = append(byCriterion[i], *ch)
				f.changedBy = fmt.Sprintf("the script detector of %s `%s`", criterionLabel(idx, cr), scriptLabel(cr.Check))
			}
		}
	}
	// One check or a few a criterion: room for them all, so that thousands of criteria are not
	// copied again and again as the list grows.
	f.checks = make([]Check, 0, len(crs)+len(bound.warns))
	for i, cr := range crs {
		if cr.Check == nil {
			byCriterion[i] = []Check{criterionByEvidence(pass, bound.results[i], f.claims.setAside, i+1, cr, &bound)}
		}
		f.checks = append(f.checks, byCriterion[i]...)
	}
	f.checks = append(f.checks, bound.warns...)
	f.checks = append(f.checks, f.claims.warnings(2)...)
	return f
}

// afterDetector is called by part A after a script detector ran: a script detector runs code
// too, so it may not rewrite what a later detector reads (SPEC §5.1). A detector that changed a
// tracked file, or left an untracked one, makes the run worktree_mismatch, naming it; the
// detectors after it that read files or run code are not run (readsTree). It returns the check
// once, for the first detector that changed the tree (changedBy names code that changed it
// before: then nil).
func afterDetector(pass *Pass, changedBy, label, command string) *Check {
	if !pass.haveBase || changedBy != "" || pass.repo == nil {
		return nil
	}
	const name, text = "worktree_after_detector", "the script detectors leave the working tree at the integration head"
	return afterCode(pass, 2, name, text, fmt.Sprintf("the script detector of %s `%s`", label, command))
}

// readsTree reports whether a detector of type t reads the working tree or runs code in it: after
// the tree changed under a script detector, such a detector would judge what the script left, not
// the commit, so it is not run. threshold and judge read what tier 1 measured and the evidence.
func readsTree(t string) bool {
	return t == contract.DetectScript || t == contract.DetectRegexMatch || t == contract.DetectFileExists
}

// criteriaBinding is, per criterion, the evidence entries bound to it (SPEC §5.3 A), the
// ambiguous_result warnings of the entries that bind to none, and the independent
// criteria_results entries that bind to nothing at all (named where a criterion lacks evidence).
type criteriaBinding struct {
	results   [][]boundResult
	judgments [][]boundJudgment
	warns     []Check
	unmatched []unmatchedResult
	// unmatchedNote is what unmatchedNote returned, built on first use
	unmatchedNote *string
}

// unmatchedResult is criteria_results entry k of e, which binds to no criterion.
type unmatchedResult struct {
	e *evidence.Evidence
	k int
}

// maxUnmatchedNamed bounds the unmatched entries a check names.
const maxUnmatchedNamed = 5

// note names the independent entries that bind to no criterion, with what each was probably meant
// for ("" when there are none), for the evidence of a criterion no entry confirms: the entry the
// author meant for it is often one of them. Built once, from at most maxUnmatchedNamed entries.
func (b *criteriaBinding) note(crs []contract.Criterion) string {
	if b.unmatchedNote != nil {
		return *b.unmatchedNote
	}
	var names []string
	var sg *suggester
	for _, u := range b.unmatched[:min(len(b.unmatched), maxUnmatchedNamed)] {
		if sg == nil {
			sg = criteriaSuggester(crs)
		}
		names = append(names, unmatchedCriterion(u.e.Name, u.k, u.e.CriteriaResults[u.k], sg).Message)
	}
	if more := len(b.unmatched) - len(names); more > 0 {
		names = append(names, fmt.Sprintf("and %d more entries that match no criterion", more))
	}
	note := ""
	if len(names) > 0 {
		note = "; " + strings.Join(names, "; ")
	}
	b.unmatchedNote = &note
	return note
}

// bindCriteria binds every criteria_results entry and every judgment of every evidence file to
// the criterion the rules of SPEC §5.3 A name, once per run, with an ambiguous_result warning for
// each entry that one rule would bind to two criteria (it binds to none).
func bindCriteria(pass *Pass) criteriaBinding {
	crs := pass.in.Contract.AcceptanceCriteria
	b := newBinder("AC", criteriaItems(crs))
	out := criteriaBinding{results: make([][]boundResult, len(crs)), judgments: make([][]boundJudgment, len(crs))}
	label := func(i int) string { return criterionLabel(i+1, crs[i]) }
	ambiguous := func(e *evidence.Evidence, field string, k int, shown string, bd binding) {
		out.warns = append(out.warns, warnCheck(2, fmt.Sprintf("%s:%s/%d", field, e.Name, k),
			"an evidence entry binds to at most one criterion",
			fmt.Sprintf("%s %s[%d] %q: %s", e.Name, field, k, text.Truncate(shown, 80), b.ambiguity(bd, label)), vocab.CauseAmbiguousResult))
	}
	for _, e := range pass.in.Evidence {
		for k, res := range e.CriteriaResults {
			bd := b.bind(res.ID, res.Criterion)
			switch {
			case bd.item >= 0:
				out.results[bd.item] = append(out.results[bd.item], boundResult{e, res})
			case len(bd.ambiguous) > 0:
				shown := res.Criterion
				if res.ID != "" {
					shown = "id " + res.ID
				}
				ambiguous(e, "criteria_results", k, shown, bd)
			case !pass.builder[e]:
				out.unmatched = append(out.unmatched, unmatchedResult{e, k})
			}
		}
		for k, j := range e.Judgments {
			bd := b.bind("", j.Check)
			switch {
			case bd.item >= 0:
				out.judgments[bd.item] = append(out.judgments[bd.item], boundJudgment{e, j})
			case len(bd.ambiguous) > 0:
				ambiguous(e, "judgments", k, j.Check, bd)
			}
		}
	}
	return out
}

// criterionByEvidence checks criterion idx by the criteria_results entries bound to it (bound):
// independent, and not set aside (aside) by a contradiction. A criterion without an independent
// pass names the independent entries that bind to no criterion (binding.note); they count for
// nothing.
func criterionByEvidence(pass *Pass, bound []boundResult, aside map[*evidence.Evidence]bool, idx int, cr contract.Criterion, binding *criteriaBinding) Check {
	label := criterionLabel(idx, cr)
	name := "criterion:" + label
	text := fmt.Sprintf("%s %q is confirmed by independent evidence", label, cr.Criterion)
	var passed, failed, own, setAside []string
	for _, br := range bound {
		e, res := br.e, br.res
		if aside[e] {
			setAside = append(setAside, e.Name)
			continue
		}
		verdict := "passed"
		if !res.Passed {
			verdict = "failed"
		}
		entry := e.Name + " " + verdict
		if res.Details != "" {
			entry += " (" + oneLine(res.Details) + ")"
		}
		switch {
		case pass.builder[e]:
			own = append(own, entry)
		case res.Passed:
			passed = append(passed, entry)
		default:
			failed = append(failed, entry)
		}
	}
	note := ""
	if len(own) > 0 {
		note = "; the implementer's own claim is not counted: " + strings.Join(own, ", ")
	}
	if len(setAside) > 0 {
		note += "; not counted, their claims contradicted by the gate's measurements: " + limitedList(setAside, 20)
	}
	if len(passed) == 0 {
		note += binding.note(pass.in.Contract.AcceptanceCriteria)
	}
	switch {
	case len(failed) > 0:
		return failCheck(2, name, text, limitedList(append(failed, passed...), 20)+note, StatusFail, vocab.CauseCriterionFailed)
	case len(passed) == 0 && len(setAside) > 0:
		// Only a contradicted file vouched for it. A measurement of this run failed (that is what
		// contradicted the file), so the verdict is a fail: setting the liar's entries aside must
		// never make it a milder block that spends no retry.
		return failCheck(2, name, text, "no independent criteria_results entry for "+label+" counts"+note, StatusFail, vocab.CauseCriterionUnverified)
	case len(passed) == 0:
		return failCheck(2, name, text, "no independent criteria_results entry for "+label+note, StatusBlock, vocab.CauseCriterionUnverified)
	}
	return passCheck(2, name, text, limitedList(passed, 20)+note)
}

// limitedList joins at most max entries with "; ", saying how many more there are: an evidence
// string stays readable, and bounded, however many entries bind to one criterion.
func limitedList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:max], "; ") + fmt.Sprintf("; and %d more", len(items)-max)
}
