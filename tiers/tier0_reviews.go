package tiers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geas-dev/geas/vocab"
)

// refusals maps each evidence verdict that refuses approval to the status it gives the run (SPEC
// §5.1): a reviewer asking for changes or a tester sending the work back to iterate (geas v1.0) or
// failing it (v1.3) is a fail; a reviewer that is blocked, or a tester that escalates, blocks or
// errors, is a block.
var refusals = map[string]Status{
	"changes_requested": StatusFail,
	"iterate":           StatusFail,
	"fail":              StatusFail,
	"blocked":           StatusBlock,
	"escalate":          StatusBlock,
	"block":             StatusBlock,
	"error":             StatusBlock,
}

// reviewVerdicts reads the own verdict of every required reviewer's and every tester's evidence
// file (SPEC §5.1, §2.1). Every file of an agent type counts: one refusal among several files of
// that type is a refusal, whatever the others say. The builder's own files are not reviews.
func reviewVerdicts(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	const text = "every required reviewer's and tester's own verdict is not a refusal"
	required := pass.in.Contract.Routing.RequiredReviewerTypes
	var read []string
	refused := false
	for _, e := range pass.in.Evidence {
		if pass.builder[e] {
			continue
		}
		typ := pass.agentType[e]
		if e.Role != vocab.Tester && !slices.Contains(required, typ) && !foldedType(e.Agent, required) {
			continue
		}
		who := e.Agent
		if typ != "" && typ != e.Agent {
			who = fmt.Sprintf("%s (agent type %s)", e.Agent, typ)
		}
		v := e.Verdict
		if v == "" {
			v = "none"
		}
		read = append(read, fmt.Sprintf("%s %s", e.Name, v))
		st, ok := refusals[e.Verdict]
		if !ok {
			continue
		}
		refused = true
		code := vocab.CauseReviewRejected
		if st == StatusBlock {
			code = vocab.CauseReviewBlocked
		}
		name := "verdict:" + e.Name
		add(failCheck(0, name, text, fmt.Sprintf("%s, role %s, wrote %s with verdict %q: a refusal is not approval", who, e.Role, e.Name, e.Verdict), st, code))
	}
	switch {
	case refused:
	case len(read) == 0:
		add(skippedCheck(0, "review_verdicts", text, "no reviewer or tester evidence to read"))
	default:
		add(passCheck(0, "review_verdicts", text, "verdicts read: "+strings.Join(read, ", ")))
	}
	return
}

// foldedType reports whether agent names one of types after trimming and case folding
// ("Design-Authority-Review" is a design-authority file): a refusal is read whatever the case of
// the agent field, even where the exact type match that satisfies a required review would not be.
func foldedType(agent string, types []string) bool {
	a := foldID(agent)
	for _, t := range types {
		if ft := foldID(t); ft != "" && (a == ft || strings.HasPrefix(a, ft+"-")) {
			return true
		}
	}
	return false
}
