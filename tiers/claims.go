package tiers

import (
	"fmt"
	"maps"
	"slices"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/text"
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

// claims are the contradictions a run found so far (SPEC §5.2a.7): the stage that finds one
// returns the claims it was given with it added, never changes those of an earlier stage.
type claims struct {
	list []Contradiction
	// setAside holds the files of list, whose criteria_results and rubric_scores no longer count.
	setAside map[*evidence.Evidence]bool
	warned   int // list[:warned] have their warning check

	// What the run shows of list, folded where the contradictions are made (warnings, at the end
	// of each stage that makes them), so that the evaluation and the result read data: more is
	// the one warning that counts the contradictions past maxContradictionsShown (nil when
	// none), shown the bounded list the result carries, tally the count per agent for the
	// history entry (contradictionTally).
	more  []Check
	shown []Contradiction
	tally map[string]int
}

// clone is a copy of c that a stage may add to.
func (c claims) clone() claims {
	out := claims{list: slices.Clone(c.list), warned: c.warned, more: c.more, shown: c.shown, tally: c.tally}
	if c.setAside != nil {
		out.setAside = maps.Clone(c.setAside)
	}
	return out
}

// contradict records that e's claim is contradicted by measurement. From then on, e's
// criteria_results and rubric_scores do not count in this run (setAside).
func (c *claims) contradict(e *evidence.Evidence, claim, measurement string) {
	if c.setAside == nil {
		c.setAside = map[*evidence.Evidence]bool{}
	}
	c.setAside[e] = true
	c.list = append(c.list, Contradiction{
		Agent: e.Agent, Evidence: e.Name, Claim: text.Truncate(claim, 200), Measurement: text.Truncate(measurement, 300),
	})
}

// contradictTesters records every independent tester whose verdict says the work passes as
// contradicted when an eval command of this run failed (a fail or a timeout: a command that
// could not start measured nothing).
func (c *claims) contradictTesters(pass *Pass, runs []EvalRun) {
	for i, run := range runs {
		if run.Status != StatusFail {
			continue
		}
		measured := fmt.Sprintf("eval command %d `%s` exited %s", i+1, text.Truncate(run.Command, 120), exitText(run.ExitCode, run.Error))
		if run.TimedOut {
			measured = fmt.Sprintf("eval command %d `%s` timed out", i+1, text.Truncate(run.Command, 120))
		}
		for _, e := range pass.independent {
			if e.Role == vocab.Tester && e.Verdict == testerPassVerdict {
				c.contradict(e, "verdict pass", measured)
			}
		}
		return
	}
}

// contradictByDetector records, for a criterion whose detector failed (ch), every independent
// criteria_results entry bound to it (bound) that claims the criterion passed, and every
// independent metric that satisfies the threshold the value measured did not.
func (c *claims) contradictByDetector(pass *Pass, bound []boundResult, idx int, cr contract.Criterion, ch Check) {
	if ch.Status != StatusFail || ch.Code != vocab.CauseCriterionFailed {
		return
	}
	label := criterionLabel(idx, cr)
	measured := fmt.Sprintf("the %s detector of %s failed: %s", cr.Check.Type, label, text.Truncate(ch.Evidence, 200))
	for _, br := range bound {
		if br.res.Passed && !pass.builder[br.e] && !c.setAside[br.e] {
			c.contradict(br.e, fmt.Sprintf("criteria_results %s passed", label), measured)
		}
	}
	d := cr.Check
	if d.Type != contract.DetectThreshold {
		return
	}
	measuredVal, measuredOK := pass.metrics[d.Metric]
	for _, e := range pass.independent {
		v, ok := e.Metrics[d.Metric]
		if !ok || !measuredOK || c.setAside[e] {
			continue // without a measurement the evidence metric itself was judged: nothing contradicts it
		}
		if holds, err := compare(v, d.Op, d.Value); err != nil || !holds {
			continue
		}
		m := fmt.Sprintf("the fresh run measured %s = %s", d.Metric, fmtNum(measuredVal))
		c.contradict(e, fmt.Sprintf("metric %s = %s (%s %s %s)", d.Metric, fmtNum(v), d.Metric, opSymbol(d.Op), fmtNum(d.Value)), m)
	}
}

// warnings are the claim_contradicted warnings of the contradictions found since the last call,
// in tier tier: one each up to maxContradictionsShown in the run. It folds the claims so far into
// what the run shows of them (more, shown, tally).
func (c *claims) warnings(tier int) []Check {
	var out []Check
	for ; c.warned < len(c.list) && c.warned < maxContradictionsShown; c.warned++ {
		ct := c.list[c.warned]
		out = append(out, warnCheck(tier, "claims:"+ct.Evidence, claimsText,
			fmt.Sprintf("%s (agent %s) claims %s, but %s; its criteria_results and rubric_scores are not counted in this run", ct.Evidence, ct.Agent, ct.Claim, ct.Measurement),
			vocab.CauseClaimContradicted))
	}
	c.fold()
	return out
}

const claimsText = "independent evidence agrees with the gate's own measurements"

// fold sets what the run shows of the claims so far: the warning that counts those past
// maxContradictionsShown, the bounded list and the tally.
func (c *claims) fold() {
	c.more = nil
	if len(c.list) > maxContradictionsShown {
		c.more = []Check{warnCheck(2, "claims:more", claimsText,
			fmt.Sprintf("and %d more contradicted claims", len(c.list)-maxContradictionsShown), vocab.CauseClaimContradicted)}
	}
	c.shown = c.list[:min(len(c.list), maxContradictionsShown)]
	c.tally = contradictionTally(c.list)
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
