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

// agentType is the agent type of an evidence file (SPEC §4.3).
func (pass *Pass) agentType(e *evidence.Evidence) string {
	return evidence.AgentType(e.Agent, pass.known)
}

// isBuilder reports evidence written by the implementer: role implementer, or an agent of the
// contract's primary worker type (for a contract that names only geas v1.4.0's worker slot, an
// agent of any type that fills the slot in geas's profiles: contract.Routing.WorkerFromSlot). Such evidence never satisfies a check on its own (SPEC §2.1).
// Agent names are compared after trimming and case folding: "Software-Engineer" and
// " software-engineer-2" are the primary worker software-engineer as much as the exact name is.
func (pass *Pass) isBuilder(e *evidence.Evidence) bool {
	return isBuilderOf(pass.in.Contract, pass.known, e.Agent, e.Role)
}

// isBuilderOf is isBuilder for an agent writing in role under contract c, known the agent types.
func isBuilderOf(c *contract.Contract, known []string, agent string, role vocab.Role) bool {
	if role == vocab.Implementer {
		return true
	}
	pw := foldID(c.Routing.PrimaryWorkerType)
	if pw == "" {
		return false
	}
	a := foldID(agent)
	if a == pw || strings.HasPrefix(a, pw+"-") || evidence.AgentType(agent, known) == c.Routing.PrimaryWorkerType {
		return true
	}
	if c.Routing.WorkerFromSlot {
		// "research-analyst" builds for the slot "implementer": the contract does not say which
		// of the slot's types builds, so none of them reviews.
		typ := evidence.AgentType(a, evidence.KnownTypes(known...))
		return typ != "" && contract.ProfileSlots[typ] == c.Routing.PrimaryWorkerSlot
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
		if !pass.isBuilder(e) {
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
		if pass.isBuilder(e) && providerKey(e.ProviderID) == key && e.ProviderID != judge {
			return fmt.Sprintf("%s (the builder's %q)", judge, e.ProviderID)
		}
	}
	return judge
}

// independent returns the evidence files that may satisfy checks: not the builder's.
func (pass *Pass) independent() []*evidence.Evidence {
	var out []*evidence.Evidence
	for _, e := range pass.in.Evidence {
		if !pass.isBuilder(e) {
			out = append(out, e)
		}
	}
	return out
}

func (pass *Pass) evidenceNames() []string {
	names := make([]string, len(pass.in.Evidence))
	for i, e := range pass.in.Evidence {
		names[i] = e.Name
	}
	return names
}
