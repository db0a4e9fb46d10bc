package tiers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/schemas"
)

// knownRisks are self_check.known_risks ∪ implementation_contract.known_risks, first spelling kept.
func (r *run) knownRisks() []string {
	var risks []string
	seen := map[string]bool{}
	add := func(list []string) {
		for _, k := range list {
			if n := normalize(k); n != "" && !seen[n] {
				seen[n] = true
				risks = append(risks, k)
			}
		}
	}
	if sc, ok := r.in.Record.SelfCheck(); ok {
		add(sc.KnownRisks)
	}
	if ic, ok := r.in.Record.ImplementationContract(); ok {
		add(ic.KnownRisks)
	}
	return risks
}

type debtItem struct {
	ID     string `json:"debt_id"`
	Status string `json:"status"`
}

// debtRegister decodes the mission's debt register as Gather read it, before tier 1 (SPEC §7.4: an
// eval command that writes the register cannot change what part C judges); a missing register has
// no items.
func (r *run) debtRegister() (map[string]string, error) {
	name := debtRegisterPath(r.in.Mission)
	data, err := r.in.DebtData, r.in.DebtErr
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := schemas.Validate(schemas.DebtRegister, ".geas/"+name, data); err != nil {
		return nil, err
	}
	var reg struct {
		Items []debtItem `json:"items"`
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range reg.Items {
		out[it.ID] = it.Status
	}
	return out, nil
}

// partC checks that every known risk is handled (SPEC §5.3 Part C).
func (r *run) partC() {
	risks := r.knownRisks()
	if len(risks) == 0 {
		r.checks = append(r.checks, skippedCheck(2, "known_risks", "every known risk is handled", "no known risks declared"))
		return
	}
	var debt map[string]string
	var debtErr error
	for i, risk := range risks {
		idx := i + 1
		name := fmt.Sprintf("risk:R%d", idx)
		text := fmt.Sprintf("known risk R%d %q is mitigated, accepted or deferred", idx, risk)
		var tried, refused []string
		handled := ""
		for _, e := range r.in.Evidence {
			for _, h := range e.RiskHandling {
				if !matchesItem("R", "", h.Risk, idx, "", risk) {
					continue
				}
				ok, why, ind := r.riskHandled(e, h, &debt, &debtErr)
				if ok {
					handled = why
					if ind.warn != "" {
						r.checks = append(r.checks, warnCheck(2, name+":independence", "the accepting agent and the builder ran on different providers", ind.warn, "provider_unknown"))
					}
					break
				}
				if ind.refused {
					refused = append(refused, why)
				}
				tried = append(tried, why)
			}
			if handled != "" {
				break
			}
		}
		switch {
		case handled != "":
			r.checks = append(r.checks, passCheck(2, name, text, handled))
		case len(refused) > 0:
			r.checks = append(r.checks, failCheck(2, name, text, strings.Join(tried, "; "), StatusBlock, CauseJudgeNotIndependent))
		case debtErr != nil && len(tried) > 0:
			r.checks = append(r.checks, failCheck(2, name, text, "debt register unreadable: "+oneLine(debtErr.Error()), StatusError, CauseRiskUnhandled))
		case len(tried) > 0:
			r.checks = append(r.checks, failCheck(2, name, text, strings.Join(tried, "; "), StatusFail, CauseRiskUnhandled))
		default:
			r.checks = append(r.checks, failCheck(2, name, text, "no risk_handling entry for this risk in any evidence file", StatusFail, CauseRiskUnhandled))
		}
	}
}

// riskHandled judges one risk_handling entry and says why it does or does not count.
func (r *run) riskHandled(e *evidence.Evidence, h evidence.RiskHandling, debt *map[string]string, debtErr *error) (bool, string, independence) {
	switch h.Status {
	case "mitigated":
		if strings.TrimSpace(h.Evidence) == "" {
			return false, e.Name + " says mitigated but gives no evidence", independence{}
		}
		return true, fmt.Sprintf("mitigated per %s: %s", e.Name, oneLine(h.Evidence)), independence{}
	case "accepted":
		if r.isBuilder(e) {
			return false, e.Name + " accepts the risk, but the implementer cannot accept its own risk", independence{}
		}
		if strings.TrimSpace(h.Rationale) == "" {
			return false, e.Name + " accepts the risk without a rationale", independence{}
		}
		ind := r.judgeIndependence(e.ProviderID, e.Name)
		if ind.refused {
			return false, "acceptance by " + e.Name + " refused: " + ind.detail, ind
		}
		return true, fmt.Sprintf("accepted by %s: %s", e.Name, oneLine(h.Rationale)), ind
	case "deferred":
		if h.DebtID == "" {
			return false, e.Name + " defers the risk without a debt_id", independence{}
		}
		if *debt == nil && *debtErr == nil {
			*debt, *debtErr = r.debtRegister()
		}
		if *debtErr != nil {
			return false, "debt register unreadable", independence{}
		}
		st, ok := (*debt)[h.DebtID]
		switch {
		case !ok:
			return false, fmt.Sprintf("%s defers to debt %s, which is not in the mission's debt register", e.Name, h.DebtID), independence{}
		case st == "open" || st == "accepted" || st == "scheduled":
			return true, fmt.Sprintf("deferred per %s to debt %s (%s)", e.Name, h.DebtID, st), independence{}
		}
		return false, fmt.Sprintf("%s defers to debt %s, whose status is %s (needs open, accepted or scheduled)", e.Name, h.DebtID, st), independence{}
	}
	return false, fmt.Sprintf("%s has unknown status %q", e.Name, h.Status), independence{}
}
