package contract

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

// TestSkeletonIsAValidDraft: every profile's skeleton parses and validates, in state drafted,
// with the geas v1 boilerplate filled in and the fields the gate reads as given.
func TestSkeletonIsAValidDraft(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.FixedZone("x", 3600))
	for _, p := range []vocab.Profile{vocab.ImplementationChange, vocab.ArtifactOnly, vocab.ClosureReady} {
		t.Run(string(p), func(t *testing.T) {
			b, err := Skeleton{TaskID: "t1", Profile: p, Base: sha, CreatedAt: at, RetryBudget: 3}.Build("contract.json")
			require.NoError(t, err)
			require.NoError(t, schemas.Validate(schemas.Contract, "contract.json", b))
			c, err := Parse("contract.json", b)
			require.NoError(t, err)
			assert.Equal(t, vocab.Drafted, c.Status)
			assert.Equal(t, p, c.GateProfile)
			assert.Equal(t, vocab.RiskNormal, c.RiskLevel)
			assert.Equal(t, sha, c.BaseSnapshot)
			require.Len(t, c.AcceptanceCriteria, 1)
			assert.Equal(t, PlaceholderCriterion, c.AcceptanceCriteria[0].Criterion)
			assert.Empty(t, c.EvalCommands)
			assert.Equal(t, []string{DefaultSkeletonReviewer}, c.Routing.RequiredReviewerTypes)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(b, &doc))
			assert.Equal(t, "2026-12-01T08:00:00Z", doc["created_at"], "UTC, the isoUtcTimestamp form")
			assert.Equal(t, "tc-t1", doc["artifact_id"])
			assert.Equal(t, "1.0", doc["version"])
		})
	}
}

func TestSkeletonCarriesTheFlags(t *testing.T) {
	s := Skeleton{
		TaskID: "hello", Title: "Say hello", Profile: vocab.ImplementationChange, Risk: vocab.RiskHigh,
		Criteria: []string{"prints hello", "exits 0"}, Evals: []string{"sh hello.sh | grep -qx hello"},
		Surfaces: []string{"hello.sh"}, Worker: "platform-engineer", Reviewers: []string{"qa-engineer"},
		Dimensions: []Dimension{{Name: "core_interaction", Threshold: 4}}, RetryBudget: 0, Base: sha,
	}
	b, err := s.Build("contract.json")
	require.NoError(t, err)
	c, err := Parse("contract.json", b)
	require.NoError(t, err)
	assert.Equal(t, "Say hello", c.Title)
	assert.Equal(t, vocab.RiskHigh, c.RiskLevel)
	require.Len(t, c.AcceptanceCriteria, 2)
	assert.Equal(t, "exits 0", c.AcceptanceCriteria[1].Criterion)
	require.Len(t, c.EvalCommands, 1)
	assert.Equal(t, "sh hello.sh | grep -qx hello", c.EvalCommands[0].Run, "no HTML escaping of | or >")
	assert.Equal(t, []string{"hello.sh"}, c.Scope.Surfaces)
	assert.Equal(t, "platform-engineer", c.Routing.PrimaryWorkerType)
	assert.Equal(t, []Dimension{{Name: "core_interaction", Threshold: 4}}, c.Rubric.Dimensions)
	assert.Equal(t, 0, c.RetryBudget)
}

// TestSkeletonRefusesWhatWouldNotValidate: a skeleton is never written invalid; what the schema
// or Parse refuses is an error naming the field.
func TestSkeletonRefusesWhatWouldNotValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Skeleton
		want string
	}{
		{"implementation_change without a base", Skeleton{TaskID: "t1"}, "needs a base_snapshot"},
		{"bad profile", Skeleton{TaskID: "t1", Profile: "Implementation_Change", Base: sha}, "unknown gate profile"},
		{"bad risk", Skeleton{TaskID: "t1", Risk: "medium", Base: sha}, "/risk_level"},
		{"bad reviewer", Skeleton{TaskID: "t1", Base: sha, Reviewers: []string{"QA-engineer"}}, "/routing/required_reviewer_types/0"},
		{"blank eval", Skeleton{TaskID: "t1", Base: sha, Evals: []string{"  "}}, "/eval_commands/0"},
		{"malformed glob", Skeleton{TaskID: "t1", Base: sha, Surfaces: []string{"src/[a"}}, "/scope/surfaces/0"},
		{"escaping glob", Skeleton{TaskID: "t1", Base: sha, Surfaces: []string{"../x"}}, "/scope/surfaces/0"},
		{"threshold out of range", Skeleton{TaskID: "t1", Base: sha, Dimensions: []Dimension{{Name: "code_quality", Threshold: 6}}}, "/rubric/dimensions/0/threshold"},
		{"bad task id", Skeleton{TaskID: "a/b", Base: sha}, "/task_id"},
		{"negative budget", Skeleton{TaskID: "t1", Base: sha, RetryBudget: -1}, "/retry_budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.s.Build("contract.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSkeletonWithoutBaseForArtifacts(t *testing.T) {
	b, err := Skeleton{TaskID: "doc", Profile: vocab.ArtifactOnly}.Build("contract.json")
	require.NoError(t, err)
	c, err := Parse("contract.json", b)
	require.NoError(t, err)
	assert.Empty(t, c.BaseSnapshot, "no base: the gate judges the implementer's files_changed")
}
