package tiers

import (
	"fmt"
	"slices"
)

// Verdict is the answer of one gate run: pass, fail, block or error.
type Verdict string

// The verdicts a check can force. There is deliberately no exported constant for a pass: a passing
// verdict is built in exactly one place, decide (SPEC §2.2).
const (
	VerdictFail  Verdict = "fail"
	VerdictBlock Verdict = "block"
	VerdictError Verdict = "error"
)

// IsPass reports whether v is a passing verdict.
func (v Verdict) IsPass() bool { return v == "pass" }

// ExitCode maps a verdict to geas gate's exit code: 0 pass, 1 fail, 2 block, 3 error.
func (v Verdict) ExitCode() int {
	switch v {
	case VerdictFail:
		return 1
	case VerdictBlock:
		return 2
	case VerdictError:
		return 3
	}
	if v.IsPass() {
		return 0
	}
	return 3
}

// decide applies SPEC §6 to the checks of a run: precedence error > block > fail > pass over every
// blocking check that ran; warn never blocks; a run in which no blocking check ran is a block with
// cause nothing_to_satisfy (silence is not success). It returns every blocking check that did not
// pass as a cause, worst first. It is the only function that builds a passing verdict.
func decide(checks []Check) (Verdict, []Cause) {
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
			code = string(status)
		}
		causes = append(causes, Cause{Code: code, Check: c.Name, Detail: c.Evidence, status: status})
	}
	if ran == 0 {
		return VerdictBlock, []Cause{{Code: CauseNothingToSatisfy, Check: "gate",
			Detail: "no blocking check ran; nothing to satisfy", status: StatusBlock}}
	}
	slices.SortStableFunc(causes, func(a, b Cause) int { return b.status.rank() - a.status.rank() })
	switch worst {
	case StatusError:
		return VerdictError, causes
	case StatusBlock:
		return VerdictBlock, causes
	case StatusFail:
		return VerdictFail, causes
	case StatusPass:
		return Verdict("pass"), nil
	}
	panic(fmt.Sprintf("decide: unexpected status %q", worst))
}
