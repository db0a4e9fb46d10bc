package evidence

import (
	"slices"
	"strings"
)

// GeasAgentTypes are the agent types of geas v1.0.
var GeasAgentTypes = []string{
	"orchestration-authority", "product-authority", "design-authority", "challenger",
	"software-engineer", "qa-engineer", "security-engineer", "platform-engineer",
	"technical-writer", "literature-analyst", "research-analyst", "methodology-reviewer",
	"research-integrity-reviewer", "research-engineer", "research-writer",
}

// AgentType returns the agent type of an evidence file's agent field: the longest known type that
// equals it or prefixes it followed by "-" ("design-authority-review" is design-authority). It
// returns "" when no known type fits.
func AgentType(agent string, known []string) string {
	best := ""
	for _, k := range known {
		if (agent == k || strings.HasPrefix(agent, k+"-")) && len(k) > len(best) {
			best = k
		}
	}
	return best
}

// KnownTypes is GeasAgentTypes plus extra (the types a contract names), without duplicates.
func KnownTypes(extra ...string) []string {
	out := slices.Clone(GeasAgentTypes)
	for _, t := range extra {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
