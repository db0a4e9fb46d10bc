package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// TestWhoWroteTheEvidenceIsFoundOnceAsEachCheckWouldFindIt: the judges a run finds when it starts
// name as the builder's exactly the files isBuilderOf names (however the worker's name is
// spelled), type each file as evidence.AgentType does, and leave every other file independent, in
// the evidence's order; the builder's files are never independent.
func TestWhoWroteTheEvidenceIsFoundOnceAsEachCheckWouldFindIt(t *testing.T) {
	t.Parallel()
	c := unitContract()
	evs := []*evidence.Evidence{
		qa(),
		builder(),
		ev("se2.json", " Software-Engineer-2", vocab.Reviewer, "provider-x"),
		ev("se3.json", "ｓoftware_engineer", vocab.Tester, "provider-y"),
		design(),
		ev("impl.json", "design-authority", vocab.Implementer, "provider-c"),
		ev("other.json", "someone-else", vocab.Reviewer, ""),
	}
	j := judgesOf(c, evs)
	known := evidence.KnownTypes(append([]string{c.Routing.PrimaryWorkerType}, c.Routing.RequiredReviewerTypes...)...)
	assert.Equal(t, known, j.known)
	var independent []string
	for _, e := range evs {
		assert.Equal(t, evidence.AgentType(e.Agent, known), j.agentType[e], e.Name)
		assert.Equal(t, isBuilderOf(c, known, e.Agent, e.Role), j.builder[e], e.Name)
		if !j.builder[e] {
			independent = append(independent, e.Name)
		}
	}
	assert.Equal(t, []string{"qa-engineer.json", "design-authority.json", "other.json"}, independent)
	var got []string
	for _, e := range j.independent {
		got = append(got, e.Name)
	}
	assert.Equal(t, independent, got)

	// Without a contract nothing is independent: no file can satisfy a check.
	none := judgesOf(nil, evs)
	assert.Empty(t, none.independent)
	assert.Equal(t, evidence.KnownTypes(), none.known)

	// A contract that names only the worker slot: every type of the slot builds.
	slot := &contract.Contract{Routing: contract.Routing{PrimaryWorkerSlot: "implementer", PrimaryWorkerType: "implementer", WorkerFromSlot: true}}
	js := judgesOf(slot, []*evidence.Evidence{ev("ra.json", "Research_Analyst", vocab.Reviewer, "p"), qa()})
	assert.Len(t, js.independent, 1)
	assert.Equal(t, "qa-engineer.json", js.independent[0].Name)
}
