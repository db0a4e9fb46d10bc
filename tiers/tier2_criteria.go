package tiers

import (
	"context"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/contract"
)

// partA checks every acceptance criterion (SPEC §5.3 Part A): by its detector if it has one, else
// by independent evidence. The implementer's own criteria_results are shown but never count.
func (r *run) partA(ctx context.Context) {
	for i, cr := range r.in.Contract.AcceptanceCriteria {
		idx := i + 1
		if cr.Check != nil {
			c, warns := r.detect(ctx, idx, cr)
			r.checks = append(r.checks, c)
			r.checks = append(r.checks, warns...)
			continue
		}
		r.checks = append(r.checks, r.criterionByEvidence(idx, cr))
	}
}

func (r *run) criterionByEvidence(idx int, cr contract.Criterion) Check {
	label := criterionLabel(idx, cr)
	name := "criterion:" + label
	text := fmt.Sprintf("%s %q is confirmed by independent evidence", label, cr.Criterion)
	var passed, failed, own []string
	for _, e := range r.in.Evidence {
		for _, res := range e.CriteriaResults {
			if !criterionMatches(res, idx, cr) {
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
			case r.isBuilder(e):
				own = append(own, entry)
			case res.Passed:
				passed = append(passed, entry)
			default:
				failed = append(failed, entry)
			}
		}
	}
	note := ""
	if len(own) > 0 {
		note = "; the implementer's own claim is not counted: " + strings.Join(own, ", ")
	}
	switch {
	case len(failed) > 0:
		return failCheck(2, name, text, strings.Join(append(failed, passed...), "; ")+note, StatusFail, CauseCriterionFailed)
	case len(passed) == 0:
		return failCheck(2, name, text, "no independent criteria_results entry for "+label+note, StatusBlock, CauseCriterionUnverified)
	}
	return passCheck(2, name, text, strings.Join(passed, "; ")+note)
}
