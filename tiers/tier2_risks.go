package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// knownRisks are self_check.known_risks ∪ implementation_contract.known_risks, first spelling kept.
func knownRisks(pass *Pass) []string {
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
	if sc := pass.in.Facts.SelfCheck; sc != nil {
		add(sc.KnownRisks)
	}
	if ic := pass.in.Facts.Implementation; ic != nil {
		add(ic.KnownRisks)
	}
	return risks
}

type debtItem struct {
	ID     string `json:"debt_id"`
	Status string `json:"status"`
}

// readDebtRegister decodes the mission's debt register as Gather read it, before tier 1 (SPEC §7.4: an
// eval command that writes the register cannot change what part C judges); a missing register has
// no items. A debt_id listed more than once maps to duplicateDebt with its statuses: it is not a
// valid target (SPEC §5.3 C), since which of its items counts would depend on their order.
func readDebtRegister(pass *Pass) (map[string]string, error) {
	name := debtRegisterPath(pass.in.Mission)
	data, err := pass.in.DebtData, pass.in.DebtErr
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var reg struct {
		Items []debtItem `json:"items"`
	}
	if err := schemas.DecodeExact(schemas.DebtRegister, ".geas/"+name, data, &reg); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range reg.Items {
		if prev, dup := out[it.ID]; dup {
			out[it.ID] = duplicateDebt + strings.TrimPrefix(prev, duplicateDebt) + ", " + it.Status
			continue
		}
		out[it.ID] = it.Status
	}
	return out, nil
}

// duplicateDebt prefixes the statuses of a debt_id listed more than once in the register.
const duplicateDebt = "listed more than once: "

// partC checks that every known risk is handled (SPEC §5.3 Part C). Each risk_handling entry binds
// to at most one risk, by the rules of Part A; the implementer's own handling is shown but never
// counts, whatever its status.
func partC(pass *Pass) (out []Check) {
	risks := knownRisks(pass)
	if len(risks) == 0 {
		out = append(out, skippedCheck(2, "known_risks", "every known risk is handled", "no known risks declared"))
		return
	}
	items := make([]matchItem, len(risks))
	for i, k := range risks {
		items[i] = matchItem{Text: k}
	}
	b := newBinder("R", items)
	type boundHandling struct {
		e *evidence.Evidence
		h evidence.RiskHandling
	}
	bound := make([][]boundHandling, len(risks))
	var warns []Check
	for _, e := range pass.in.Evidence {
		for k, h := range e.RiskHandling {
			bd := b.bind("", h.Risk)
			switch {
			case bd.item >= 0:
				bound[bd.item] = append(bound[bd.item], boundHandling{e, h})
			case len(bd.ambiguous) > 0:
				warns = append(warns, warnCheck(2, fmt.Sprintf("risk_handling:%s/%d", e.Name, k),
					"a risk_handling entry binds to at most one known risk",
					fmt.Sprintf("%s risk_handling[%d] %q: %s", e.Name, k, text.Truncate(h.Risk, 80),
						b.ambiguity(bd, func(i int) string { return fmt.Sprintf("R%d", i+1) })), vocab.CauseAmbiguousResult))
			}
		}
	}
	var debt map[string]string
	var debtErr error
	for i, risk := range risks {
		idx := i + 1
		name := fmt.Sprintf("risk:R%d", idx)
		text := fmt.Sprintf("known risk R%d %q is mitigated, accepted or deferred", idx, risk)
		var tried, refused, own []string
		handled := ""
		for _, bh := range bound[i] {
			e, h := bh.e, bh.h
			if pass.builder[e] {
				own = append(own, fmt.Sprintf("%s %s", e.Name, h.Status))
				continue
			}
			ok, why, ind := riskHandled(pass, e, h, &debt, &debtErr)
			if ok {
				handled = why
				if ind.warn != "" {
					out = append(out, warnCheck(2, name+":independence", "the accepting agent and the builder ran on different providers", ind.warn, vocab.CauseProviderUnknown))
				}
				break
			}
			if ind.refused {
				refused = append(refused, why)
			}
			tried = append(tried, why)
		}
		note := ""
		if len(own) > 0 {
			note = "; the implementer cannot handle its own risk, not counted: " + limitedList(own, 10)
		}
		switch {
		case handled != "":
			out = append(out, passCheck(2, name, text, handled+note))
		case len(refused) > 0:
			out = append(out, failCheck(2, name, text, limitedList(tried, 20)+note, StatusBlock, vocab.CauseJudgeNotIndependent))
		case debtErr != nil && len(tried) > 0:
			out = append(out, failCheck(2, name, text, "debt register unreadable: "+oneLine(debtErr.Error()), StatusError, vocab.CauseRiskUnhandled))
		case len(tried) > 0:
			out = append(out, failCheck(2, name, text, limitedList(tried, 20)+note, StatusFail, vocab.CauseRiskUnhandled))
		case len(own) > 0:
			out = append(out, failCheck(2, name, text, "no independent risk_handling entry for this risk"+note, StatusFail, vocab.CauseRiskUnhandled))
		default:
			out = append(out, failCheck(2, name, text, "no risk_handling entry for this risk in any evidence file", StatusFail, vocab.CauseRiskUnhandled))
		}
	}
	out = append(out, warns...)
	return
}

// riskHandled judges one risk_handling entry and says why it does or does not count.
func riskHandled(pass *Pass, e *evidence.Evidence, h evidence.RiskHandling, debt *map[string]string, debtErr *error) (bool, string, independence) {
	switch h.Status {
	case "mitigated":
		if blank(h.Evidence) {
			return false, e.Name + " says mitigated but gives no evidence", independence{}
		}
		return true, fmt.Sprintf("mitigated per %s: %s", e.Name, oneLine(h.Evidence)), independence{}
	case "accepted":
		if blank(h.Rationale) {
			return false, e.Name + " accepts the risk without a rationale", independence{}
		}
		ind := judgeIndependence(pass, e.ProviderID, e.Name)
		if ind.refused {
			return false, "acceptance by " + e.Name + " refused: " + ind.detail, ind
		}
		return true, fmt.Sprintf("accepted by %s: %s", e.Name, oneLine(h.Rationale)), ind
	case "deferred":
		if h.DebtID == "" {
			return false, e.Name + " defers the risk without a debt_id", independence{}
		}
		if *debt == nil && *debtErr == nil {
			*debt, *debtErr = readDebtRegister(pass)
		}
		if *debtErr != nil {
			return false, "debt register unreadable", independence{}
		}
		st, ok := (*debt)[h.DebtID]
		switch {
		case strings.HasPrefix(st, duplicateDebt):
			return false, fmt.Sprintf("%s defers to debt %s, which the debt register lists more than once (statuses %s): not a valid target", e.Name, h.DebtID, strings.TrimPrefix(st, duplicateDebt)), independence{}
		case !ok:
			return false, fmt.Sprintf("%s defers to debt %s, which is not in the mission's debt register", e.Name, h.DebtID), independence{}
		case st == "open" || st == "accepted" || st == "scheduled":
			return true, fmt.Sprintf("deferred per %s to debt %s (%s)", e.Name, h.DebtID, st), independence{}
		}
		return false, fmt.Sprintf("%s defers to debt %s, whose status is %s (needs open, accepted or scheduled)", e.Name, h.DebtID, st), independence{}
	}
	return false, fmt.Sprintf("%s has unknown status %q", e.Name, h.Status), independence{}
}

// blank reports text with nothing a reader sees: white space, invisible format characters (a
// zero-width space, a joiner, a byte order mark) and combining marks only.
func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r)
	}) == ""
}
