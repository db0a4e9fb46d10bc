package schemas

import (
	"encoding/json"
	"slices"
)

// GeasV14 is the format version of geas v1.4.0, the last geas v1 release. Its files carry no
// version of their own (its schemas dropped the envelope; its CLI still writes "version": "1.0"
// into contracts and evidence), so a file is told to be v1.4.0's by its shape (FormatOf).
const GeasV14 = "1.4.0"

// v14Kinds are the kinds whose embedded schema also reads geas v1.4.0's files: the union of the
// two versions, each relaxation documented in the schema's description or $comment.
var v14Kinds = []Kind{Contract, Record, Evidence, DebtRegister}

// FormatVersions returns the geas format versions whose files kind k reads, oldest first: the
// "version" const of its schema (FormatVersion, "1.0") and GeasV14 where the schema reads geas
// v1.4.0's files too. It is empty for a kind of the gate's own (decision, event, gate policy).
func FormatVersions(k Kind) []string {
	var out []string
	if v := FormatVersion(k); v != "" {
		out = append(out, v)
	}
	if slices.Contains(v14Kinds, k) {
		out = append(out, GeasV14)
	}
	return out
}

// FormatOf says which geas release's file data (a valid document of kind k) is, by its shape: ""
// for a kind with one version or none, else GeasV14 when the document has a field only geas
// v1.4.0 defines or lacks the version geas v1.0 requires, else FormatVersion(k). Which one it is
// changes nothing the gate checks (the schema of k is the union of both): it is what geas
// validate reports.
//
//   - contract: a routing that names primary_worker_slot or required_reviewer_slots is v1.4.0's
//     (the schema requires both then, and v1.0's envelope otherwise);
//   - evidence: artifact_refs or revision_ref, or no version (the v1.4.0 CLI writes "1.0");
//   - record: self_check.unverified_cases, or no version;
//   - debt register: no version.
func FormatOf(k Kind, data []byte) string {
	if !slices.Contains(v14Kinds, k) {
		return ""
	}
	var doc struct {
		Version      *json.RawMessage `json:"version"`
		ArtifactRefs *json.RawMessage `json:"artifact_refs"`
		RevisionRef  *json.RawMessage `json:"revision_ref"`
		Routing      struct {
			PrimaryWorkerSlot     *json.RawMessage `json:"primary_worker_slot"`
			RequiredReviewerSlots *json.RawMessage `json:"required_reviewer_slots"`
		} `json:"routing"`
		SelfCheck struct {
			UnverifiedCases *json.RawMessage `json:"unverified_cases"`
		} `json:"self_check"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	v14 := false
	switch k {
	case Contract:
		v14 = doc.Routing.PrimaryWorkerSlot != nil || doc.Routing.RequiredReviewerSlots != nil
	case Evidence:
		v14 = doc.ArtifactRefs != nil || doc.RevisionRef != nil || doc.Version == nil
	case Record:
		v14 = doc.SelfCheck.UnverifiedCases != nil || doc.Version == nil
	case DebtRegister:
		v14 = doc.Version == nil
	}
	if v14 {
		return GeasV14
	}
	return FormatVersion(k)
}
