package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/geas-dev/geas/vocab"
)

// Skeleton describes a new contract: what geas task new fills in. Empty fields take the defaults
// that SkeletonDefaults documents.
type Skeleton struct {
	TaskID      string
	Title       string
	Goal        string
	Profile     vocab.Profile
	Risk        vocab.Risk
	Criteria    []string
	Evals       []string
	Surfaces    []string
	Worker      string
	Reviewers   []string
	Dimensions  []Dimension
	RetryBudget int
	// Base is base_snapshot: a full commit SHA, or "" for a task without a base (artifact_only and
	// closure_ready only; implementation_change needs one).
	Base      string
	CreatedAt time.Time
}

// PlaceholderCriterion is the criterion of a contract made without any: nothing satisfies it
// until a reviewer reports on it, so a task cannot pass on an unwritten bar (the gate blocks it
// with criterion_unverified).
const PlaceholderCriterion = "Replace this with what must be true when the task is done (geas task new --criterion TEXT)"

// The defaults of a skeleton (geas task new's flags say them too).
const (
	DefaultSkeletonWorker   = "software-engineer"
	DefaultSkeletonReviewer = "design-authority"
	DefaultSkeletonBudget   = 3
)

// skeletonDoc is contract.json in the order of geas v1.0's example: the geas envelope (the fields
// the gate never reads), then the task.
type skeletonDoc struct {
	Version            string    `json:"version"`
	ArtifactType       string    `json:"artifact_type"`
	ArtifactID         string    `json:"artifact_id"`
	ProducerType       string    `json:"producer_type"`
	CreatedAt          string    `json:"created_at"`
	TaskID             string    `json:"task_id"`
	Title              string    `json:"title"`
	Goal               string    `json:"goal"`
	TaskKind           string    `json:"task_kind"`
	RiskLevel          string    `json:"risk_level"`
	GateProfile        string    `json:"gate_profile"`
	VoteRoundPolicy    string    `json:"vote_round_policy"`
	AcceptanceCriteria []string  `json:"acceptance_criteria"`
	EvalCommands       []string  `json:"eval_commands"`
	Rubric             rubricDoc `json:"rubric"`
	RetryBudget        int       `json:"retry_budget"`
	Scope              Scope     `json:"scope"`
	Routing            Routing   `json:"routing"`
	BaseSnapshot       string    `json:"base_snapshot"`
	Status             string    `json:"status"`
}

type rubricDoc struct {
	Dimensions []dimensionDoc `json:"dimensions"`
}

type dimensionDoc struct {
	Name      string `json:"name"`
	Threshold int    `json:"threshold"`
}

// taskKinds is the geas task_kind a profile's skeleton carries (boilerplate the gate never reads).
var taskKinds = map[vocab.Profile]string{
	vocab.ImplementationChange: "implementation",
	vocab.ArtifactOnly:         "documentation",
	vocab.ClosureReady:         "delivery",
}

// defaultDimensions is the rubric of a skeleton without --dimension: one dimension that the
// default reviewer (design-authority) scores by the evaluator table of SPEC §10.
var defaultDimensions = map[vocab.Profile]string{
	vocab.ImplementationChange: "code_quality",
	vocab.ArtifactOnly:         "output_quality",
	vocab.ClosureReady:         "output_quality",
}

// Build returns the contract.json of s, in state drafted, validated by Parse (so geas validate
// accepts it). The file name in errors is file.
func (s Skeleton) Build(file string) ([]byte, error) {
	if s.Profile == "" {
		s.Profile = vocab.ImplementationChange
	}
	if s.Risk == "" {
		s.Risk = vocab.RiskNormal
	}
	kind, ok := taskKinds[s.Profile]
	if !ok {
		return nil, fmt.Errorf("unknown gate profile %q: implementation_change, artifact_only or closure_ready", s.Profile)
	}
	if s.Profile == vocab.ImplementationChange && s.Base == "" {
		return nil, fmt.Errorf("an implementation_change task needs a base_snapshot (the commit its change starts from)")
	}
	doc := skeletonDoc{
		Version: "1.0", ArtifactType: "task_contract", ArtifactID: "tc-" + s.TaskID,
		ProducerType: "orchestration-authority", CreatedAt: s.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
		TaskID: s.TaskID, Title: or(s.Title, "Task "+s.TaskID), TaskKind: kind,
		RiskLevel: string(s.Risk), GateProfile: string(s.Profile), VoteRoundPolicy: "auto",
		AcceptanceCriteria: s.Criteria, EvalCommands: s.Evals,
		RetryBudget: s.RetryBudget, Scope: Scope{Surfaces: s.Surfaces},
		Routing:      Routing{PrimaryWorkerType: or(s.Worker, DefaultSkeletonWorker), RequiredReviewerTypes: s.Reviewers},
		BaseSnapshot: s.Base, Status: string(vocab.Drafted),
	}
	doc.Goal = or(s.Goal, doc.Title)
	if len(doc.AcceptanceCriteria) == 0 {
		doc.AcceptanceCriteria = []string{PlaceholderCriterion}
	}
	if doc.EvalCommands == nil {
		doc.EvalCommands = []string{}
	}
	if doc.Scope.Surfaces == nil {
		doc.Scope.Surfaces = []string{}
	}
	if len(doc.Routing.RequiredReviewerTypes) == 0 {
		doc.Routing.RequiredReviewerTypes = []string{DefaultSkeletonReviewer}
	}
	for _, d := range s.Dimensions {
		doc.Rubric.Dimensions = append(doc.Rubric.Dimensions, dimensionDoc{Name: d.Name, Threshold: d.Threshold})
	}
	if len(doc.Rubric.Dimensions) == 0 {
		doc.Rubric.Dimensions = []dimensionDoc{{Name: defaultDimensions[s.Profile], Threshold: 3}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if _, err := Parse(file, buf.Bytes()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
