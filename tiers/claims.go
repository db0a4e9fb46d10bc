package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// Contradiction is a claim of an independent evidence file that the gate's own measurement of the
// same thing contradicts (SPEC §5.2a.7): a tester's verdict pass while an eval command failed, a
// criteria_results entry passed: true for a criterion whose detector failed, a metric that
// satisfies a threshold the measured value does not.
type Contradiction struct {
	Agent       string `json:"agent"`
	Evidence    string `json:"evidence"`
	Claim       string `json:"claim"`
	Measurement string `json:"measurement"`
}

// maxContradictionsShown bounds the contradictions a result lists and the warnings a run adds:
// evidence files are the agents' to multiply, so past the bound they are counted, not listed.
const maxContradictionsShown = 20

// contradict records that e's claim is contradicted by measurement. From then on, e's
// criteria_results and rubric_scores do not count in this run (setAside).
func (pass *Pass) contradict(e *evidence.Evidence, claim, measurement string) {
	if pass.setAside == nil {
		pass.setAside = map[*evidence.Evidence]bool{}
	}
	pass.setAside[e] = true
	pass.contradictions = append(pass.contradictions, Contradiction{
		Agent: e.Agent, Evidence: e.Name, Claim: truncate(claim, 200), Measurement: truncate(measurement, 300),
	})
}

// contradictTesters records every independent tester whose verdict says the work passes as
// contradicted when an eval command of this run failed (a fail or a timeout: a command that
// could not start measured nothing).
func (pass *Pass) contradictTesters(runs []EvalRun) {
	for i, run := range runs {
		if run.Status != StatusFail {
			continue
		}
		measured := fmt.Sprintf("eval command %d `%s` exited %s", i+1, truncate(run.Command, 120), exitText(run.ExitCode, run.Error))
		if run.TimedOut {
			measured = fmt.Sprintf("eval command %d `%s` timed out", i+1, truncate(run.Command, 120))
		}
		for _, e := range pass.independent() {
			if e.Role == vocab.Tester && e.Verdict == testerPassVerdict {
				pass.contradict(e, "verdict pass", measured)
			}
		}
		return
	}
}

// contradictByDetector records, for a criterion whose detector failed (c), every independent
// criteria_results entry that claims the criterion passed, and every independent metric that
// satisfies the threshold the measured value did not.
func (pass *Pass) contradictByDetector(idx int, cr contract.Criterion, c Check) {
	if c.Status != StatusFail || c.Code != vocab.CauseCriterionFailed {
		return
	}
	label := criterionLabel(idx, cr)
	measured := fmt.Sprintf("the %s detector of %s failed: %s", cr.Check.Type, label, truncate(c.Evidence, 200))
	for _, br := range pass.boundResults[idx-1] {
		if br.res.Passed && !pass.isBuilder(br.e) && !pass.setAside[br.e] {
			pass.contradict(br.e, fmt.Sprintf("criteria_results %s passed", label), measured)
		}
	}
	d := cr.Check
	if d.Type != contract.DetectThreshold {
		return
	}
	measuredVal, measuredOK := pass.metrics[d.Metric]
	for _, e := range pass.independent() {
		v, ok := e.Metrics[d.Metric]
		if !ok || !measuredOK || pass.setAside[e] {
			continue // without a measurement the evidence metric itself was judged: nothing contradicts it
		}
		if holds, err := compare(v, d.Op, d.Value); err != nil || !holds {
			continue
		}
		m := fmt.Sprintf("the fresh run measured %s = %s", d.Metric, fmtNum(measuredVal))
		pass.contradict(e, fmt.Sprintf("metric %s = %s (%s %s %s)", d.Metric, fmtNum(v), d.Metric, opSymbol(d.Op), fmtNum(d.Value)), m)
	}
}

// contradictionChecks are the claim_contradicted warnings of the contradictions found since the
// last call, in tier tier: one each up to maxContradictionsShown in the run.
func (pass *Pass) contradictionChecks(tier int) []Check {
	var out []Check
	for ; pass.claimsWarned < len(pass.contradictions) && pass.claimsWarned < maxContradictionsShown; pass.claimsWarned++ {
		c := pass.contradictions[pass.claimsWarned]
		out = append(out, warnCheck(tier, "claims:"+c.Evidence, claimsText,
			fmt.Sprintf("%s (agent %s) claims %s, but %s; its criteria_results and rubric_scores are not counted in this run", c.Evidence, c.Agent, c.Claim, c.Measurement),
			vocab.CauseClaimContradicted))
	}
	return out
}

// moreContradictions is the one warning that counts the contradictions past maxContradictionsShown,
// or nil.
func (pass *Pass) moreContradictions() []Check {
	if len(pass.contradictions) <= maxContradictionsShown {
		return nil
	}
	return []Check{warnCheck(2, "claims:more", claimsText,
		fmt.Sprintf("and %d more contradicted claims", len(pass.contradictions)-maxContradictionsShown), vocab.CauseClaimContradicted)}
}

const claimsText = "independent evidence agrees with the gate's own measurements"

// shownContradictions is the bounded list a result carries.
func (pass *Pass) shownContradictions() []Contradiction {
	if len(pass.contradictions) > maxContradictionsShown {
		return pass.contradictions[:maxContradictionsShown]
	}
	return pass.contradictions
}

// maxTallyAgents bounds the agents a history entry's tally names; the rest are counted under
// tallyOthers, so agent names an evidence writer multiplies cannot grow the history.
const (
	maxTallyAgents = 20
	tallyOthers    = "(other agents)"
)

// contradictionTally counts contradicted claims per agent, for the history entry (SPEC §5.2a.7).
func contradictionTally(cs []Contradiction) map[string]int {
	if len(cs) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, c := range cs {
		if _, ok := out[c.Agent]; !ok && len(out) >= maxTallyAgents {
			out[tallyOthers]++
			continue
		}
		out[c.Agent]++
	}
	return out
}
