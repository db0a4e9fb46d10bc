package tiers

import (
	"context"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
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

// partA checks every acceptance criterion (SPEC §5.3 Part A): by its detector if it has one, else
// by independent evidence. The implementer's own criteria_results are shown but never count. Each
// criteria_results entry and each judgment binds to at most one criterion (bindCriteria).
//
// The detectors run first, in criterion order: a detector that fails contradicts every independent
// file that claims the criterion passed, and a contradicted file's entries do not count for the
// criteria judged by evidence (SPEC §5.2a.7). The checks are listed in criterion order.
func (pass *Pass) partA(ctx context.Context) {
	warns := pass.bindCriteria()
	crs := pass.in.Contract.AcceptanceCriteria
	byCriterion := make([][]Check, len(crs))
	for i, cr := range crs {
		idx := i + 1
		if cr.Check == nil {
			continue
		}
		if pass.wtDirty && readsTree(cr.Check.Type) {
			byCriterion[i] = []Check{skippedCheck(2, "criterion:"+criterionLabel(idx, cr),
				fmt.Sprintf("%s %q: %s detector", criterionLabel(idx, cr), cr.Criterion, cr.Check.Type),
				"not run: "+pass.wtChangedBy+" changed the working tree, so what this detector reads is not the commit's")}
			continue
		}
		c, dw := pass.detect(ctx, idx, cr)
		pass.contradictByDetector(idx, cr, c)
		byCriterion[i] = append([]Check{c}, dw...)
		if cr.Check.Type == contract.DetectScript {
			if ch := pass.afterDetector(criterionLabel(idx, cr), scriptLabel(cr.Check)); ch != nil {
				byCriterion[i] = append(byCriterion[i], *ch)
			}
		}
	}
	for i, cr := range crs {
		if cr.Check == nil {
			byCriterion[i] = []Check{pass.criterionByEvidence(i+1, cr)}
		}
		pass.checks = append(pass.checks, byCriterion[i]...)
	}
	pass.checks = append(pass.checks, warns...)
	pass.checks = append(pass.checks, pass.contradictionChecks(2)...)
}

// readsTree reports whether a detector of type t reads the working tree or runs code in it: after
// the tree changed under a script detector, such a detector would judge what the script left, not
// the commit, so it is not run. threshold and judge read what tier 1 measured and the evidence.
func readsTree(t string) bool {
	return t == contract.DetectScript || t == contract.DetectRegexMatch || t == contract.DetectFileExists
}

// bindCriteria binds every criteria_results entry and every judgment of every evidence file to
// the criterion the rules of SPEC §5.3 A name, once per run, and returns an ambiguous_result
// warning for each entry that one rule would bind to two criteria (it binds to none).
func (pass *Pass) bindCriteria() []Check {
	crs := pass.in.Contract.AcceptanceCriteria
	b := newBinder("AC", criteriaItems(crs))
	pass.boundResults = make([][]boundResult, len(crs))
	pass.boundJudgments = make([][]boundJudgment, len(crs))
	label := func(i int) string { return criterionLabel(i+1, crs[i]) }
	var warns []Check
	ambiguous := func(e *evidence.Evidence, field string, k int, shown string, bd binding) {
		warns = append(warns, warnCheck(2, fmt.Sprintf("%s:%s/%d", field, e.Name, k),
			"an evidence entry binds to at most one criterion",
			fmt.Sprintf("%s %s[%d] %q: %s", e.Name, field, k, truncate(shown, 80), b.ambiguity(bd, label)), vocab.CauseAmbiguousResult))
	}
	for _, e := range pass.in.Evidence {
		for k, res := range e.CriteriaResults {
			bd := b.bind(res.ID, res.Criterion)
			switch {
			case bd.item >= 0:
				pass.boundResults[bd.item] = append(pass.boundResults[bd.item], boundResult{e, res})
			case len(bd.ambiguous) > 0:
				shown := res.Criterion
				if res.ID != "" {
					shown = "id " + res.ID
				}
				ambiguous(e, "criteria_results", k, shown, bd)
			}
		}
		for k, j := range e.Judgments {
			bd := b.bind("", j.Check)
			switch {
			case bd.item >= 0:
				pass.boundJudgments[bd.item] = append(pass.boundJudgments[bd.item], boundJudgment{e, j})
			case len(bd.ambiguous) > 0:
				ambiguous(e, "judgments", k, j.Check, bd)
			}
		}
	}
	return warns
}

func (pass *Pass) criterionByEvidence(idx int, cr contract.Criterion) Check {
	label := criterionLabel(idx, cr)
	name := "criterion:" + label
	text := fmt.Sprintf("%s %q is confirmed by independent evidence", label, cr.Criterion)
	var passed, failed, own, setAside []string
	for _, br := range pass.boundResults[idx-1] {
		e, res := br.e, br.res
		if pass.setAside[e] {
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
		case pass.isBuilder(e):
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
