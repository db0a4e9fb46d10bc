package tiers

import (
	"fmt"
	"slices"

	"github.com/geas-dev/geas/vocab"
)

// decide applies SPEC §6 to the checks of a run: precedence error > block > fail > pass over every
// blocking check that ran; warn never blocks; a run in which no blocking check ran is a block with
// cause nothing_to_satisfy (silence is not success). It returns every blocking check that did not
// pass as a cause, worst first. It is the only function that builds a passing verdict.
func decide(checks []Check) (vocab.Verdict, []Cause) {
	ran := 0
	worst := StatusPass
	var causes []Cause
	for _, c := range checks {
		if !c.Blocking || c.Status == StatusSkipped || c.Status == StatusWarn {
			continue
		}
		ran++
		if c.Status == StatusPass {
			continue
		}
		status := c.Status
		if status.rank() == 0 {
			status = StatusError // a status the gate does not know is a check it cannot read: fail closed
		}
		if status.rank() > worst.rank() {
			worst = status
		}
		code := c.Code
		if code == "" {
			code = vocab.CauseCode(status)
		}
		causes = append(causes, Cause{Code: code, Check: c.Name, Detail: c.Evidence, status: status})
	}
	if ran == 0 {
		return vocab.VerdictBlock, []Cause{{Code: vocab.CauseNothingToSatisfy, Check: "gate",
			Detail: "no blocking check ran; nothing to satisfy", status: StatusBlock}}
	}
	slices.SortStableFunc(causes, func(a, b Cause) int { return b.status.rank() - a.status.rank() })
	switch worst {
	case StatusError:
		return vocab.VerdictError, causes
	case StatusBlock:
		return vocab.VerdictBlock, causes
	case StatusFail:
		return vocab.VerdictFail, causes
	case StatusPass:
		return vocab.Verdict("pass"), nil
	}
	panic(fmt.Sprintf("decide: unexpected status %q", worst))
}

// Redecide adds c, a tier-0 check, to res after its last tier-0 check and decides res again from
// its checks: the verdict and causes (decide), tier_0's result and the summary. Nothing else of res
// changes. The recheck of a finished task (gate.Recheck) adds its check recorded_pass so.
func Redecide(res *Result, c Check) {
	// After the last tier-0 check, so the report reads in tier order.
	at := 0
	for i, ch := range res.Checks {
		if ch.Tier == 0 {
			at = i + 1
		}
	}
	res.Checks = slices.Insert(res.Checks, at, c)
	res.Verdict, res.Causes = decide(res.Checks)
	if res.Causes == nil {
		res.Causes = []Cause{}
	}
	res.TierResults["tier_0"] = tierResult(res.Checks, 0, "")
	res.Summary = summarize(res.Checks)
}
