package tiers

import (
	"fmt"
	"strings"

	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// maxRulesChanges bounds how many changed fields the rules check names.
const maxRulesChanges = 20

// rulesCheck compares the task's rules with the pinned rules (SPEC §4.4): the latest approval's
// rules_sha256, or, before any approval, that of the task's first recorded gate run. Rules that
// differ block (rules_changed), naming each changed field with its pinned and current value, until
// an authority approves them with geas task approve. The pin is the history entry, never the
// pinned copy beside the contract, which only serves to name the changes.
// pinSignature is the signature problem of the entry that pins the rules (f.Pin), when the
// history is signed and that entry's HMAC does not verify; nil otherwise.
func pinSignature(f *record.Facts) *record.ChainError {
	for _, bad := range f.BadSignatures {
		if bad.Index == f.Pin.Index {
			return bad
		}
	}
	return nil
}

func rulesCheck(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	in := pass.in
	if in.Record == nil || in.RulesErr != nil {
		return // record_invalid, contract_invalid or policy_invalid already stops the run
	}
	const name = "rules_pinned"
	text := "the rules (contract without status and timestamps, plus the gate policy) equal the pinned rules"
	policyFrom := in.PolicyFrom
	if policyFrom == "" {
		policyFrom = "built-in defaults, no .geas/" + policy.File
	}
	if strings.HasPrefix(policyFrom, "built-in defaults: ") {
		// A policy file is there but does not judge this task (the work added it): say so where
		// every output shows it, so that nobody believes it applies.
		add(warnCheck(0, "policy_not_judging", "the gate policy that judges a task with a base is the one its base commit holds",
			strings.TrimPrefix(policyFrom, "built-in defaults: ")+"; the built-in defaults judge this task: commit the policy before the task's base to make it apply",
			vocab.CausePolicyNotInBase))
	}
	pin, ok := in.Facts.Pin, in.Facts.Pinned
	if !ok {
		ev := fmt.Sprintf("nothing pinned the rules yet: this run pins rules_sha256 %s; policy: %s", short(in.RulesSHA256), policyFrom)
		if pass.opts.DryRun || pass.opts.Verify {
			ev = fmt.Sprintf("nothing pinned the rules yet (rules_sha256 %s); a recorded run pins them; policy: %s", short(in.RulesSHA256), policyFrom)
		}
		add(passCheck(0, name, text, ev))
		return
	}
	if bad := pinSignature(in.Facts); bad != nil {
		add(failCheck(0, name, text, fmt.Sprintf("the history entry %d that pins the rules (%s) does not verify: %s; an authority must approve the rules again",
			pin.Index+1, pin.By, bad.Reason), StatusBlock, vocab.CauseRulesChanged))
		return
	}
	if pin.RulesSHA256 == in.RulesSHA256 {
		add(passCheck(0, name, text, fmt.Sprintf("rules_sha256 %s equals the pin (%s); policy: %s", short(in.RulesSHA256), pin.By, policyFrom)))
		return
	}
	ev := fmt.Sprintf("rules_sha256 %s differs from the pinned %s (%s); policy: %s", short(in.RulesSHA256), short(pin.RulesSHA256), pin.By, policyFrom)
	if pinned, why := record.ReadPinned(in.Geas, in.TaskDir, pin.RulesSHA256, PinnedMaxBytes); pinned == nil {
		ev += "; " + why + ", so the changed fields cannot be named"
		if b, ok := in.Rules["base"].(map[string]any); ok {
			ev += fmt.Sprintf("; base_snapshot %s now resolves to %s", showValue(b["base_snapshot"]), resolution(b))
		}
	} else {
		changes := rulesDiff(pinned, in.Rules)
		if len(changes) > maxRulesChanges {
			changes = append(changes[:maxRulesChanges:maxRulesChanges], fmt.Sprintf("and %d more", len(changes)-maxRulesChanges))
		}
		ev += "; changed: " + strings.Join(changes, "; ")
	}
	ev += "; an authority must approve the new rules (geas task approve)"
	add(failCheck(0, name, text, ev, StatusBlock, vocab.CauseRulesChanged))
	return
}
