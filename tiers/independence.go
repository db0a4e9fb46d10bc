package tiers

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// judges is who wrote a run's evidence, found once when the run starts (judgesOf) and read by
// every check: each file's agent type (SPEC §4.3), the builder's files (isBuilderOf), and the
// files that may satisfy checks, the others, in the evidence's order.
type judges struct {
	known       []string                      // the agent types evidence names resolve to
	agentType   map[*evidence.Evidence]string // each evidence file's agent type
	builder     map[*evidence.Evidence]bool   // the implementer's files
	independent []*evidence.Evidence          // the files that may satisfy checks: not the builder's
}

// judgesOf is the judges of evidence evs under contract c (nil: an invalid contract, whose run
// judges no evidence: the agent types alone). Agent names are compared after trimming and case
// folding (isBuilderOf).
func judgesOf(c *contract.Contract, evs []*evidence.Evidence) judges {
	var extra []string
	if c != nil {
		extra = append([]string{c.Routing.PrimaryWorkerType}, c.Routing.RequiredReviewerTypes...)
	}
	j := judges{known: evidence.KnownTypes(extra...)}
	if c == nil {
		return j
	}
	j.agentType = make(map[*evidence.Evidence]string, len(evs))
	j.builder = make(map[*evidence.Evidence]bool, len(evs))
	for _, e := range evs {
		j.agentType[e] = evidence.AgentType(e.Agent, j.known)
	}
	for _, e := range evs {
		if isBuilderTyped(c, j.known, e.Agent, j.agentType[e], e.Role) {
			j.builder[e] = true
		} else {
			j.independent = append(j.independent, e)
		}
	}
	return j
}

// isBuilderOf reports whether an agent writing in role under contract c, known the agent types,
// is the implementer: role implementer, or an agent of the contract's primary worker type (for a
// contract that names only geas v1.4.0's worker slot, an agent of any type that fills the slot in
// geas's profiles: contract.Routing.WorkerFromSlot). Its evidence never satisfies a check on its
// own (SPEC §2.1). Agent names are compared after trimming and case folding: "Software-Engineer"
// and " software-engineer-2" are the primary worker software-engineer as much as the exact name is.
func isBuilderOf(c *contract.Contract, known []string, agent string, role vocab.Role) bool {
	return isBuilderTyped(c, known, agent, evidence.AgentType(agent, known), role)
}

// isBuilderTyped is isBuilderOf for an agent whose type (evidence.AgentType of agent and known)
// is typ.
func isBuilderTyped(c *contract.Contract, known []string, agent, typ string, role vocab.Role) bool {
	if role == vocab.Implementer {
		return true
	}
	pw := foldID(c.Routing.PrimaryWorkerType)
	if pw == "" {
		return false
	}
	a := foldID(agent)
	if a == pw || strings.HasPrefix(a, pw+"-") || typ == c.Routing.PrimaryWorkerType {
		return true
	}
	if c.Routing.WorkerFromSlot {
		// "research-analyst" builds for the slot "implementer": the contract does not say which
		// of the slot's types builds, so none of them reviews.
		slotType := evidence.AgentType(a, evidence.KnownTypes(known...))
		return slotType != "" && contract.ProfileSlots[slotType] == c.Routing.PrimaryWorkerSlot
	}
	return false
}

// foldID is an identifier as compared for identity: fullwidth letters read as ASCII, invisible
// format characters (zero-width spaces and joiners, bidi marks) and combining marks dropped,
// underscores and unicode dashes read as "-", letters case-folded and surrounding space trimmed,
// so that ids that read the same compare equal ("ｓoftware_engineer" and "software‐engineer" are
// software-engineer). cmd's event log folds the gate's own name by the same rules.
func foldID(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0 // fullwidth forms read as their ASCII characters
		}
		switch {
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r):
			return -1
		case r == '_' || unicode.Is(unicode.Pd, r):
			return '-'
		}
		return unicode.ToLower(r)
	}, s)
	return strings.TrimSpace(s)
}

// providerKey is the form in which provider ids are compared (SPEC §5.4): trimmed and case-folded,
// and for the form "provider/model" its provider part, so that "anthropic/opus" and
// "Anthropic/sonnet" are one provider. The provider part is taken whenever an id has the form,
// also when the other id is a bare provider ("anthropic/opus" and "anthropic" are one provider):
// stricter than comparing the whole ids, and never more lenient.
func providerKey(id string) string {
	k := foldID(id)
	if p, _, ok := strings.Cut(k, "/"); ok {
		k = strings.TrimSpace(p)
	}
	return k
}

// builderProviders are the provider keys (providerKey) of the implementer's evidence files.
func builderProviders(pass *Pass) []string {
	var out []string
	for _, e := range pass.in.Evidence {
		if !pass.builder[e] {
			continue
		}
		if k := providerKey(e.ProviderID); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
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
func judgeIndependence(pass *Pass, provider, source string) independence {
	mode := pass.in.Contract.EffectiveJudgeIndependence(pass.in.Policy.JudgeIndependence)
	if mode == contract.Off {
		return independence{}
	}
	builders := builderProviders(pass)
	key := providerKey(provider)
	if key != "" && slices.Contains(builders, key) {
		return independence{refused: true, detail: fmt.Sprintf("judgment refused: judge and builder both ran on %s (%s)", sameProvider(pass, key, provider), source)}
	}
	if key == "" || len(builders) == 0 {
		what := "the judge's provider is unknown"
		if key != "" {
			what = "the builder's provider is unknown"
		}
		if mode == contract.Strict {
			return independence{refused: true, detail: fmt.Sprintf("judgment refused under judge_independence strict: %s (%s)", what, source)}
		}
		return independence{warn: fmt.Sprintf("%s (%s); independence not proven", what, source)}
	}
	return independence{}
}

// sameProvider names the provider a judge shares with the builder: the judge's id as written, and
// the builder's when it is written differently ("Claude" and "claude ").
func sameProvider(pass *Pass, key, judge string) string {
	for _, e := range pass.in.Evidence {
		if pass.builder[e] && providerKey(e.ProviderID) == key && e.ProviderID != judge {
			return fmt.Sprintf("%s (the builder's %q)", judge, e.ProviderID)
		}
	}
	return judge
}

func (pass *Pass) evidenceNames() []string {
	names := make([]string, len(pass.in.Evidence))
	for i, e := range pass.in.Evidence {
		names[i] = e.Name
	}
	return names
}
