package vocab

import "encoding/json"

// Profile is a contract's gate_profile: which tiers of the pipeline run (SPEC §5) and which state
// a task must be in to be gated. The empty Profile is the unknown one (a run whose contract could
// not be read): it is written as null.
type Profile string

// Gate profiles (the gateProfile enum of the contract schema).
const (
	// ImplementationChange runs tier 0, tier 1 and every part of tier 2; the task must be integrated.
	ImplementationChange Profile = "implementation_change"
	// ArtifactOnly skips tier 1 (no mechanical verification) but runs every part of tier 2.
	ArtifactOnly Profile = "artifact_only"
	// ClosureReady skips tier 1 and runs only part A of tier 2 (the criteria).
	ClosureReady Profile = "closure_ready"
)

// MarshalJSON writes an unknown profile as null.
func (p Profile) MarshalJSON() ([]byte, error) {
	if p == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(p))
}

// UnmarshalJSON reads null as the unknown profile.
func (p *Profile) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = ""
		return nil
	}
	return json.Unmarshal(b, (*string)(p))
}

// Role is an evidence file's role: what the agent that wrote it did for the task.
type Role string

// Roles of an evidence file.
const (
	// Implementer built the change.
	Implementer Role = "implementer"
	// Reviewer reviewed it.
	Reviewer Role = "reviewer"
	// Tester tested it.
	Tester Role = "tester"
	// Authority decided about it (orchestration, product or design authority).
	Authority Role = "authority"
)

// Risk is a contract's risk_level.
type Risk string

// Risk levels (the riskLevel enum of the contract schema).
const (
	RiskLow      Risk = "low"
	RiskNormal   Risk = "normal"
	RiskHigh     Risk = "high"
	RiskCritical Risk = "critical"
)
