package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

const debtRegisterFile = ".geas/missions/m1/evolution/debt-register.json"

// debtRegister has one item per debt status.
const debtRegister = `{
  "version": "1.0", "artifact_type": "debt_register", "artifact_id": "debt-m1",
  "producer_type": "design-authority", "scope": "mission",
  "items": [
    {"debt_id": "d-open", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "open"},
    {"debt_id": "d-accepted", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "accepted"},
    {"debt_id": "d-scheduled", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "scheduled"},
    {"debt_id": "d-resolved", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "resolved"},
    {"debt_id": "d-dropped", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "dropped"}
  ]
}`

// debtRegisterTwice lists d-twice twice, resolved then open: which one counts would depend on order.
const debtRegisterTwice = `{
  "version": "1.0", "artifact_type": "debt_register", "artifact_id": "debt-m1",
  "producer_type": "design-authority", "scope": "mission",
  "items": [
    {"debt_id": "d-twice", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "resolved"},
    {"debt_id": "d-twice", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "open"}
  ]
}`

const debtRegisterTwiceOpenFirst = `{
  "version": "1.0", "artifact_type": "debt_register", "artifact_id": "debt-m1",
  "producer_type": "design-authority", "scope": "mission",
  "items": [
    {"debt_id": "d-twice", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "open"},
    {"debt_id": "d-twice", "severity": "low", "kind": "risk", "title": "t", "description": "d", "status": "resolved"}
  ]
}`

func handling(e *evidence.Evidence, hs ...evidence.RiskHandling) *evidence.Evidence {
	e.RiskHandling = hs
	return e
}

func TestKnownRisks(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	rec := unitRecord(t, map[string]any{
		"self_check": selfCheck(4, map[string]any{"known_risks": []string{"Stale cache", "slow start"}}),
		"implementation_contract": map[string]any{
			"planned_actions": []string{"a"}, "status": "approved",
			"known_risks": []string{"  stale   CACHE ", "no Windows support"},
		},
	})
	r := u.run(unitContract(), rec)
	assert.Equal(t, []string{"Stale cache", "slow start", "no Windows support"}, knownRisks(r), "the union, first spelling kept")
}

func TestPartCRisks(t *testing.T) {
	t.Parallel()
	type entry = evidence.RiskHandling
	mitigated := func(risk, ev string) entry { return entry{Risk: risk, Status: "mitigated", Evidence: ev} }
	accepted := func(risk, why string) entry { return entry{Risk: risk, Status: "accepted", Rationale: why} }
	deferred := func(risk, debt string) entry { return entry{Risk: risk, Status: "deferred", DebtID: debt} }
	sameProvider := ev("design-authority.json", "design-authority", vocab.Reviewer, "provider-a")

	tests := []struct {
		name     string
		register string // "" leaves the mission without a debt register
		ev       []*evidence.Evidence
		status   Status
		evidence string
	}{
		{"mitigated with evidence", "", []*evidence.Evidence{handling(qa(), mitigated("stale cache", "cache keyed by mtime; test TestCacheMtime"))},
			StatusPass, "mitigated per qa-engineer.json: cache keyed by mtime; test TestCacheMtime"},
		{"mitigated by the implementer", "", []*evidence.Evidence{handling(builder(), mitigated("stale cache", "cache keyed by mtime"))},
			StatusFail, "no independent risk_handling entry for this risk; the implementer cannot handle its own risk, not counted: software-engineer.json mitigated"},
		{"mitigated without evidence", "", []*evidence.Evidence{handling(qa(), mitigated("stale cache", "  "))},
			StatusFail, "qa-engineer.json says mitigated but gives no evidence"},
		{"accepted by a reviewer", "", []*evidence.Evidence{handling(design(), accepted("stale cache", "a restart clears it"))},
			StatusPass, "accepted by design-authority.json: a restart clears it"},
		{"accepted without a rationale", "", []*evidence.Evidence{handling(design(), accepted("stale cache", ""))},
			StatusFail, "design-authority.json accepts the risk without a rationale"},
		{"accepted by the implementer", "", []*evidence.Evidence{handling(builder(), accepted("stale cache", "fine by me"))},
			StatusFail, "the implementer cannot handle its own risk, not counted: software-engineer.json accepted"},
		{"accepted on the builder's provider", "", []*evidence.Evidence{handling(sameProvider, accepted("stale cache", "fine"))},
			StatusBlock, "acceptance by design-authority.json refused: judgment refused: judge and builder both ran on provider-a"},
		{"deferred to open debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-open"))},
			StatusPass, "deferred per design-authority.json to debt d-open (open)"},
		{"deferred by the implementer", debtRegister, []*evidence.Evidence{handling(builder(), deferred("stale cache", "d-open"))},
			StatusFail, "the implementer cannot handle its own risk, not counted: software-engineer.json deferred"},
		{"deferred to a debt_id listed twice", debtRegisterTwice, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-twice"))},
			StatusFail, "defers to debt d-twice, which the debt register lists more than once (statuses resolved, open): not a valid target"},
		{"deferred to a debt_id listed twice, open first", debtRegisterTwiceOpenFirst, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-twice"))},
			StatusFail, "lists more than once (statuses open, resolved)"},
		{"deferred to accepted debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-accepted"))},
			StatusPass, "to debt d-accepted (accepted)"},
		{"deferred to scheduled debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-scheduled"))},
			StatusPass, "to debt d-scheduled (scheduled)"},
		{"deferred to resolved debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-resolved"))},
			StatusFail, "defers to debt d-resolved, whose status is resolved (needs open, accepted or scheduled)"},
		{"deferred to dropped debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-dropped"))},
			StatusFail, "whose status is dropped"},
		{"deferred to unknown debt", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-nope"))},
			StatusFail, "defers to debt d-nope, which is not in the mission's debt register"},
		{"deferred without a register", "", []*evidence.Evidence{handling(design(), deferred("stale cache", "d-open"))},
			StatusFail, "which is not in the mission's debt register"},
		{"deferred without a debt_id", debtRegister, []*evidence.Evidence{handling(design(), deferred("stale cache", ""))},
			StatusFail, "defers the risk without a debt_id"},
		{"deferred with an unreadable register", `{"items": "nope"}`, []*evidence.Evidence{handling(design(), deferred("stale cache", "d-open"))},
			StatusError, "debt register unreadable"},
		{"no handling", debtRegister, []*evidence.Evidence{qa()},
			StatusFail, "no risk_handling entry for this risk in any evidence file"},
		{"handling of another risk", "", []*evidence.Evidence{handling(design(), mitigated("R2", "done"), mitigated("stale caches", "done"))},
			StatusFail, "no risk_handling entry"},
		{"matched by R1", "", []*evidence.Evidence{handling(design(), mitigated("R1", "fixed"))},
			StatusPass, "mitigated per design-authority.json: fixed"},
		{"matched by risk 1 with text", "", []*evidence.Evidence{handling(design(), mitigated("Risk 1: cache", "fixed"))},
			StatusPass, "mitigated per"},
		{"matched by normalized text", "", []*evidence.Evidence{handling(design(), mitigated("  STALE\tcache ", "fixed"))},
			StatusPass, "mitigated per"},
		{"a valid entry after an invalid one", debtRegister, []*evidence.Evidence{
			handling(builder(), accepted("stale cache", "mine")), handling(design(), deferred("stale cache", "d-open"))},
			StatusPass, "deferred per design-authority.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newUnitProject(t)
			if tc.register != "" {
				u.write(debtRegisterFile, tc.register)
			}
			rec := unitRecord(t, map[string]any{"self_check": selfCheck(4, map[string]any{"known_risks": []string{"stale cache"}})})
			r := u.run(unitContract(), rec, append([]*evidence.Evidence{builder()}, tc.ev...)...)
			c := findCheck(t, partC(r), "risk:R1")
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, tc.evidence)
			assert.Equal(t, `known risk R1 "stale cache" is mitigated, accepted or deferred`, c.Text)
			switch tc.status {
			case StatusBlock:
				assert.Equal(t, vocab.CauseJudgeNotIndependent, c.Code)
			case StatusFail:
				assert.Equal(t, vocab.CauseRiskUnhandled, c.Code)
			}
		})
	}
}

func TestPartCNoKnownRisks(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	r := u.run(unitContract(), unitRecord(t, map[string]any{"self_check": selfCheck(4, nil)}), builder())
	assert.Equal(t, []Check{skippedCheck(2, "known_risks", "every known risk is handled", "no known risks declared")}, partC(r))
}

func TestPartCEveryRiskIsChecked(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	rec := unitRecord(t, map[string]any{
		"self_check": selfCheck(4, map[string]any{"known_risks": []string{"stale cache"}}),
		"implementation_contract": map[string]any{
			"planned_actions": []string{"a"}, "status": "approved", "known_risks": []string{"slow start"},
		},
	})
	d := handling(design(), evidence.RiskHandling{Risk: "R2", Status: "mitigated", Evidence: "lazy init"})
	r := u.run(unitContract(), rec, builder(), d)
	assert.Equal(t, []string{"risk:R1=fail", "risk:R2=pass"}, checkNames(partC(r)))
}
