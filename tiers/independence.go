package tiers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
)

// agentType is the agent type of an evidence file (SPEC §4.3).
func (r *run) agentType(e *evidence.Evidence) string {
	return evidence.AgentType(e.Agent, r.known)
}

// isBuilder reports evidence written by the implementer: role implementer, or an agent of the
// contract's primary worker type. Such evidence never satisfies a check on its own (SPEC §2.1).
func (r *run) isBuilder(e *evidence.Evidence) bool {
	if e.Role == evidence.Implementer {
		return true
	}
	pw := r.in.Contract.Routing.PrimaryWorkerType
	return pw != "" && (e.Agent == pw || r.agentType(e) == pw)
}

// builderProviders are the provider_ids of the implementer's evidence files.
func (r *run) builderProviders() []string {
	var out []string
	for _, e := range r.in.Evidence {
		if r.isBuilder(e) && e.ProviderID != "" && !slices.Contains(out, e.ProviderID) {
			out = append(out, e.ProviderID)
		}
	}
	return out
}

// independence is the outcome of comparing a judge's provider with the builder's (SPEC §5.4).
type independence struct {
	refused bool   // the source may not count; the check blocks with judge_not_independent
	warn    string // a non-blocking note (unknown providers under enforce)
	detail  string // why it was refused
}

// judgeIndependence compares the provider of one source (a judgment's own provider_id, else its
// evidence file's) with the builder's providers under the contract's mode.
func (r *run) judgeIndependence(provider, source string) independence {
	mode := r.in.Contract.EffectiveJudgeIndependence(r.in.Policy.JudgeIndependence)
	if mode == contract.Off {
		return independence{}
	}
	builders := r.builderProviders()
	if provider != "" && slices.Contains(builders, provider) {
		return independence{refused: true, detail: fmt.Sprintf("judgment refused: judge and builder both ran on %s (%s)", provider, source)}
	}
	if provider == "" || len(builders) == 0 {
		what := "the judge's provider is unknown"
		if provider != "" {
			what = "the builder's provider is unknown"
		}
		if mode == contract.Strict {
			return independence{refused: true, detail: fmt.Sprintf("judgment refused under judge_independence strict: %s (%s)", what, source)}
		}
		return independence{warn: fmt.Sprintf("%s (%s); independence not proven", what, source)}
	}
	return independence{}
}

// independent returns the evidence files that may satisfy checks: not the builder's.
func (r *run) independent() []*evidence.Evidence {
	var out []*evidence.Evidence
	for _, e := range r.in.Evidence {
		if !r.isBuilder(e) {
			out = append(out, e)
		}
	}
	return out
}

func (r *run) evidenceNames() []string {
	names := make([]string, len(r.in.Evidence))
	for i, e := range r.in.Evidence {
		names[i] = e.Name
	}
	return names
}

func joinLimited(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}
