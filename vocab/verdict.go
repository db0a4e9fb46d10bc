package vocab

// Verdict is the answer of one gate run: pass, fail, block or error.
type Verdict string

// The verdicts a check can force. There is deliberately no exported constant for a pass: a passing
// verdict is built in exactly one place, the pipeline's decide (SPEC §2.2).
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
