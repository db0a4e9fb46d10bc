package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/tiers"
)

// Verify is what geas gate verify prints: what gate.Verify (and gate.Revoke with --apply) found,
// whose JSON is the --format json document.
type Verify struct {
	*gate.Verification
	ID    string `json:"-"` // the mission's id, for the text summary
	Apply bool   `json:"-"` // --apply was given
}

// writeVerifyText prints one line per task, what --apply did, the skipped tasks and a summary.
func writeVerifyText(w io.Writer, out *Verify) {
	for _, t := range out.Tasks {
		switch t.Status {
		case gate.VerifyIntact:
			fmt.Fprintf(w, "intact %s\n", t.TaskID)
		case gate.VerifyRevoked:
			fmt.Fprintf(w, "revoked %s: %s\n", t.TaskID, causesText(t.Causes))
		case gate.VerifyTampered:
			fmt.Fprintf(w, "tampered %s: %s\n", t.TaskID, strings.Join(t.Problems, "; "))
		}
		if t.VerifyReport != nil && len(t.ClaimsContradicted) > 0 {
			fmt.Fprintf(w, "  contradicted claims: %s\n", t.ClaimsContradicted)
		}
		if a := t.Applied; a != nil {
			var parts []string
			if a.Recorded {
				parts = append(parts, fmt.Sprintf("revocation %s recorded (hash %.12s)", t.Result.RunID, a.Hash))
			}
			if tr := a.Transition; tr != nil {
				parts = append(parts, fmt.Sprintf("task moved %s -> %s", tr.From, tr.To))
			}
			if a.Note != "" {
				parts = append(parts, a.Note)
			}
			fmt.Fprintf(w, "  applied: %s\n", strings.Join(parts, "; "))
		}
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.TaskID, s.Reason)
	}
	fmt.Fprintln(w, verifyLine(out))
}

// verifyLine is the summary of a verify: how many tasks were checked, and what was found.
func verifyLine(out *Verify) string {
	n := len(out.Tasks)
	line := fmt.Sprintf("verify: mission %s, %d task(s) checked: %d intact, %d revoked, %d tampered", out.ID, n, out.Intact, out.Revoked, out.Tampered)
	if len(out.Skipped) > 0 {
		line += fmt.Sprintf(", %d skipped", len(out.Skipped))
	}
	if n == 0 {
		line += " (no task is verified or passed)"
	}
	if out.Revoked > 0 && !out.Apply {
		line += "; run with --apply to record the revocations"
	}
	return line
}

// causesText is "code (check: detail); ..." for every cause.
func causesText(causes []tiers.Cause) string {
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%s (%s: %s)", c.Code, c.Check, c.Detail)
	}
	return strings.Join(parts, "; ")
}
