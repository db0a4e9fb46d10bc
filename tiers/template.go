package tiers

import (
	"slices"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// What an agent's evidence file should hold for a contract, by the rules the gate counts it by:
// for geas evidence template.

// EvidenceRole is the role agent writes its evidence in under c when none is given: implementer
// for the contract's primary worker (as the gate recognises it), tester for a qa-engineer,
// reviewer for any other agent.
func EvidenceRole(c *contract.Contract, agent string) vocab.Role {
	known := judgesOf(c, nil).known // the agent types a run of c knows (SPEC §4.3)
	switch {
	case isBuilderOf(c, known, agent, ""):
		return vocab.Implementer
	case evidence.AgentType(agent, known) == "qa-engineer":
		return vocab.Tester
	}
	return vocab.Reviewer
}

// dimensionEvaluators are the agent types whose scores count for dim: the contract's, else the
// policy's (none: any independent evaluator), with the slots they fill when the contract routes
// its reviewers by geas v1.4.0 slots alone (contract.Routing.WithSlots).
func dimensionEvaluators(c *contract.Contract, dim contract.Dimension, p *policy.Policy) []string {
	if len(dim.Evaluators) > 0 {
		return dim.Evaluators
	}
	return c.Routing.WithSlots(p.Evaluators[dim.Name])
}

// ScoredDimensions are the dimensions of c whose scores by agent, writing in role, the gate counts
// (SPEC §5.3 D): those whose evaluators (the contract's, else policy p's) include the agent's
// type, or that name none. The builder's own scores never count: none for it.
func ScoredDimensions(c *contract.Contract, p policy.Policy, agent string, role vocab.Role) []contract.Dimension {
	known := judgesOf(c, nil).known // the agent types a run of c knows (SPEC §4.3)
	if isBuilderOf(c, known, agent, role) {
		return nil
	}
	typ := evidence.AgentType(agent, known)
	var out []contract.Dimension
	for _, dim := range c.Rubric.Dimensions {
		if ev := dimensionEvaluators(c, dim, &p); len(ev) == 0 || slices.Contains(ev, typ) {
			out = append(out, dim)
		}
	}
	return out
}

// EvidenceCriterion is a criterion judged by evidence, with the id an entry binds to it by ("" when
// no id binds to it alone).
type EvidenceCriterion struct {
	ID, Text string
}

// EvidenceCriteria are the criteria of c without a detector, which independent criteria_results
// entries confirm (SPEC §5.3 A), each with its id, or the label AC<n> of one without, when an
// entry with that id binds to it and to nothing else (checked by the gate's own binding: a
// criterion whose id is another's label shares it, and gets no id).
func EvidenceCriteria(c *contract.Contract) []EvidenceCriterion {
	b := newBinder("AC", criteriaItems(c.AcceptanceCriteria))
	var out []EvidenceCriterion
	for i, cr := range c.AcceptanceCriteria {
		if cr.Check != nil {
			continue
		}
		id := criterionLabel(i+1, cr)
		if b.bind(id, "").item != i {
			id = ""
		}
		out = append(out, EvidenceCriterion{ID: id, Text: cr.Criterion})
	}
	return out
}
