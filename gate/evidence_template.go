package gate

import (
	"encoding/json"
	"fmt"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// TemplateOptions choose the evidence skeleton geas evidence template prints.
type TemplateOptions struct {
	Agent string
	// Role is the role the agent writes in; "" takes it from the contract (tiers.EvidenceRole).
	Role vocab.Role
}

// EvidenceSkeleton is an evidence file ready to fill, and what went into it.
type EvidenceSkeleton struct {
	// File is the evidence as JSON: valid against the evidence schema as it is.
	File []byte
	Role vocab.Role
	// Criteria are the ids (or texts) of the criteria judged by evidence it holds an entry for
	// (a tester's skeleton only).
	Criteria []string
	// Dimensions are the rubric dimensions whose scores by this agent the gate counts.
	Dimensions []string
}

// Placeholders of a skeleton: valid, and counting against the work until they are filled, so
// that a skeleton written unfilled never passes anything.
const (
	fillText     = "FILL IN"
	fillScore    = 1
	fillTester   = "fail"
	fillReviewer = "changes_requested"
)

// EvidenceTemplate returns a skeleton evidence file of agent for the task: agent, task_id and
// role set, for a tester a criteria_results entry for every criterion judged by evidence (by the
// id the gate binds it by, "passed": false), a rubric_scores entry for every dimension whose scores by this
// agent the gate counts (its contract or policy evaluators; score 1), and the fields its role
// requires, with a verdict that refuses. The placeholders count against the work until filled.
// It reads the contract and the working tree's gate policy; it writes nothing.
func EvidenceTemplate(t Task, o TemplateOptions) (*EvidenceSkeleton, error) {
	c, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	if err != nil {
		return nil, err
	}
	p, err := policy.Load(t.Project.Geas)
	if err != nil {
		return nil, err
	}
	sk := &EvidenceSkeleton{Role: o.Role}
	if sk.Role == "" {
		sk.Role = tiers.EvidenceRole(c, o.Agent)
	}
	obj := map[string]any{
		"version": "1.0", "agent": o.Agent, "task_id": t.ID, "role": sk.Role,
		"summary": fillText + ": what you checked and what you found",
	}
	switch sk.Role {
	case vocab.Implementer:
		obj["files_changed"] = []string{}
	case vocab.Tester:
		obj["verdict"] = fillTester
	case vocab.Reviewer:
		obj["verdict"], obj["concerns"] = fillReviewer, []string{}
	case vocab.Authority:
		obj["verdict"], obj["rationale"] = fillReviewer, fillText+": why"
	}
	// Only a tester is asked for criteria_results (the schema requires them of it): a reviewer
	// who only scores would otherwise leave a failing placeholder behind.
	if sk.Role == vocab.Tester {
		results := []evidence.CriterionResult{}
		for _, cr := range tiers.EvidenceCriteria(c) {
			results = append(results, evidence.CriterionResult{ID: cr.ID, Criterion: cr.Text, Details: fillText + ": how you checked it"})
			name := cr.ID
			if name == "" {
				name = cr.Text
			}
			sk.Criteria = append(sk.Criteria, name)
		}
		obj["criteria_results"] = results
	}
	var scores []evidence.RubricScore
	for _, d := range tiers.ScoredDimensions(c, p, o.Agent, sk.Role) {
		scores = append(scores, evidence.RubricScore{Dimension: d.Name, Score: fillScore, Rationale: fillText + ": why this score"})
		sk.Dimensions = append(sk.Dimensions, d.Name)
	}
	if len(scores) > 0 {
		obj["rubric_scores"] = scores
	}
	raw := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		if raw[k], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if sk.File, err = marshalOrdered(raw, []string{"version", "agent", "task_id", "role", "summary", "verdict", "concerns",
		"rationale", "files_changed", "criteria_results", "rubric_scores"}); err != nil {
		return nil, err
	}
	// What it prints is what evidence add accepts.
	if _, err := evidence.Parse("template", sk.File); err != nil {
		return nil, fmt.Errorf("evidence template is not valid evidence: %w", err)
	}
	return sk, nil
}
