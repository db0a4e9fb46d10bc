package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "contract", name))
	require.NoError(t, err)
	return b
}

func TestParseFull(t *testing.T) {
	c, err := Parse("full.json", readFixture(t, "full.json"))
	require.NoError(t, err)
	assert.Equal(t, "full", c.TaskID)
	assert.Equal(t, vocab.RiskHigh, c.RiskLevel)
	assert.Equal(t, 15*time.Minute, c.EvalTimeout)
	require.Len(t, c.EvalCommands, 2)
	assert.Equal(t, EvalCommand{Run: "make test"}, c.EvalCommands[0])
	assert.Equal(t, "src", c.EvalCommands[1].Workdir)
	assert.Equal(t, "coverage: ([0-9.]+)%", c.EvalCommands[1].Metrics["coverage"])
	require.Len(t, c.AcceptanceCriteria, 6)
	assert.Equal(t, Criterion{Criterion: "AC1 plain text"}, c.AcceptanceCriteria[0])
	assert.Equal(t, DetectScript, c.AcceptanceCriteria[1].Check.Type)
	assert.Equal(t, []string{"-x"}, c.AcceptanceCriteria[1].Check.Args)
	assert.True(t, c.AcceptanceCriteria[2].Check.NonEmpty)
	assert.Equal(t, 80.0, c.AcceptanceCriteria[4].Check.Value)
	require.NotNil(t, c.AcceptanceCriteria[5].Check.MinScore)
	assert.Equal(t, 4.0, *c.AcceptanceCriteria[5].Check.MinScore)
	assert.Equal(t, []string{"qa-engineer", "technical-writer"}, c.Rubric.Dimensions[1].Evaluators)
	assert.Equal(t, []string{"qa-engineer"}, c.Rubric.Dimensions[2].Evaluators)
	assert.Nil(t, c.Rubric.Dimensions[0].Evaluators)
	assert.Equal(t, []string{"Makefile"}, c.Scope.Shared)
	assert.Equal(t, Pivot, c.EscalationPolicy)
	require.NotNil(t, c.StubCap)
	assert.Equal(t, 1, *c.StubCap)
	assert.Equal(t, Strict, c.EffectiveJudgeIndependence(""))
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("example.json", readFixture(t, "example.json"))
	require.NoError(t, err)
	assert.Equal(t, DefaultEvalTimeout, c.EvalTimeout)
	assert.Equal(t, DesignAuthorityReview, c.EscalationPolicy)
	assert.Equal(t, Enforce, c.EffectiveJudgeIndependence(""))
	assert.Equal(t, Off, c.EffectiveJudgeIndependence(Off))
	assert.Nil(t, c.StubCap)
	assert.Equal(t, vocab.Integrated, c.Status)
}

// edit returns the full fixture with one top-level key replaced (or deleted when v is nil).
func edit(t *testing.T, key string, v any) []byte {
	var m map[string]any
	require.NoError(t, json.Unmarshal(readFixture(t, "full.json"), &m))
	if v == nil {
		delete(m, key)
	} else {
		m[key] = v
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestParseRejects(t *testing.T) {
	crit := func(check map[string]any) []any {
		return []any{map[string]any{"criterion": "c", "check": check}}
	}
	for _, tc := range []struct {
		name string
		data []byte
		want []string // fragments of the error text
	}{
		{"typo eval_command", edit(t, "eval_command", "make"), []string{"c.json: /eval_command: "}},
		{"missing status", edit(t, "status", nil), []string{"/status"}},
		{"scope.paths as in geas v1 example", edit(t, "scope", map[string]any{"paths": []string{"src/"}}), []string{"/scope/paths", "/scope/surfaces"}},
		{"bad eval timeout", edit(t, "eval_timeout", "forever"), []string{"/eval_timeout"}},
		{"zero eval timeout", edit(t, "eval_timeout", "0s"), []string{"/eval_timeout"}},
		{"metric regex without group", edit(t, "eval_commands", []any{map[string]any{"run": "x", "metrics": map[string]string{"m": "[0-9]+"}}}), []string{"/eval_commands/0/metrics/m", "exactly one capture group"}},
		{"metric regex invalid", edit(t, "eval_commands", []any{map[string]any{"run": "x", "metrics": map[string]string{"m": "(["}}}), []string{"/eval_commands/0/metrics/m", "bad regex"}},
		{"workdir escapes", edit(t, "eval_commands", []any{map[string]any{"run": "x", "workdir": "../.."}}), []string{"/eval_commands/0/workdir", "escapes"}},
		{"absolute workdir", edit(t, "eval_commands", []any{map[string]any{"run": "x", "workdir": "/tmp"}}), []string{"/eval_commands/0/workdir", "absolute"}},
		{"blank command", edit(t, "eval_commands", []any{"   "}), []string{"/eval_commands/0"}},
		{"unknown results format", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": "xunit"}}), []string{"/eval_commands/0/results"}},
		{"results object without junit", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"tap": "x"}}}), []string{"/eval_commands/0/results"}},
		{"folded results key", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"junit": "a.xml", "JUnit": "b.xml"}}}), []string{"/eval_commands/0/results"}},
		{"results format in capitals", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": "TAP"}}), []string{"/eval_commands/0/results"}},
		{"junit glob escapes", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"junit": "../out/*.xml"}}}), []string{"/eval_commands/0/results/junit", "escapes"}},
		{"junit glob absolute", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"junit": "/tmp/*.xml"}}}), []string{"/eval_commands/0/results/junit", "absolute"}},
		{"junit glob malformed", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"junit": "r/[.xml"}}}), []string{"/eval_commands/0/results/junit", "malformed glob"}},
		{"junit glob empty", edit(t, "eval_commands", []any{map[string]any{"run": "x", "results": map[string]any{"junit": ""}}}), []string{"/eval_commands/0/results"}},
		{"path escapes", edit(t, "acceptance_criteria", crit(map[string]any{"type": "file_exists", "path": "a/../../b"})), []string{"/acceptance_criteria/0/check/path"}},
		{"artifact absolute", edit(t, "acceptance_criteria", crit(map[string]any{"type": "regex_match", "artifact": "/etc/passwd", "pattern": "x"})), []string{"/acceptance_criteria/0/check/artifact"}},
		{"threshold without value", edit(t, "acceptance_criteria", crit(map[string]any{"type": "threshold", "metric": "x", "op": "gte"})), []string{"value"}},
		{"unknown detector", edit(t, "acceptance_criteria", crit(map[string]any{"type": "vibes"})), []string{"/acceptance_criteria/0/check"}},
		{"duplicate criterion id", edit(t, "acceptance_criteria", []any{map[string]any{"id": "a", "criterion": "x"}, map[string]any{"id": "a", "criterion": "y"}}), []string{"/acceptance_criteria/1/id", "duplicate"}},
		{"duplicate dimension", edit(t, "rubric", map[string]any{"dimensions": []any{map[string]any{"name": "a", "threshold": 1}, map[string]any{"name": "a", "threshold": 2}}}), []string{"/rubric/dimensions/1/name"}},
		{"glob escapes", edit(t, "scope", map[string]any{"surfaces": []string{"../other/**"}}), []string{"/scope/surfaces/0", "escapes"}},
		{"may_change escapes", edit(t, "tests", map[string]any{"may_change": []string{"../other/test.sh#x"}}), []string{"/tests/may_change/0", "escapes"}},
		{"protected glob malformed", edit(t, "tests", map[string]any{"protected": []string{"test/["}}), []string{"/tests/protected/0", "malformed glob"}},
		{"tests key unknown", edit(t, "tests", map[string]any{"mayChange": []string{"a"}}), []string{"/tests/mayChange"}},
		{"empty task id", edit(t, "task_id", ""), []string{"/task_id", "task id is empty"}},
		{"path-like task id", edit(t, "task_id", "../t2"), []string{"/task_id", "invalid task id"}},
		{"threshold above 5", edit(t, "rubric", map[string]any{"dimensions": []any{map[string]any{"name": "a", "threshold": 6}}}), []string{"/rubric/dimensions/0/threshold"}},
		{"negative budget", edit(t, "retry_budget", -1), []string{"/retry_budget"}},
		{"bad policy", edit(t, "escalation_policy", "shrug"), []string{"/escalation_policy"}},
		{"not json", []byte(`{"version":`), []string{"c.json: invalid JSON"}},
		{"duplicate key", []byte(`{"version":"1.0","version":"1.0"}`), []string{"duplicate key \"version\""}},
		// SPEC §2.8: a key equal to a field only under case folding makes the contract invalid.
		{"folded top-level key", edit(t, "Eval_Commands", []any{"false"}), []string{"/Eval_Commands", "only by letter case"}},
		{"folded detector key", edit(t, "acceptance_criteria", crit(map[string]any{"type": "file_exists", "path": "a", "PATH": "b"})), []string{"/acceptance_criteria/0/check/PATH", "only by letter case"}},
		{"folded evaluator key", edit(t, "rubric", map[string]any{"dimensions": []any{map[string]any{"name": "a", "threshold": 1, "Evaluator": "x"}}}), []string{"/rubric/dimensions/0/Evaluator", "only by letter case"}},
		{"folded eval command key", edit(t, "eval_commands", []any{map[string]any{"run": "true", "RUN": "false"}}), []string{"/eval_commands/0/RUN", "only by letter case"}},
		{"folded routing key", edit(t, "routing", map[string]any{"primary_worker_type": "software-engineer", "Primary_Worker_Type": "qa-engineer", "required_reviewer_types": []string{}}), []string{"/routing/Primary_Worker_Type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.json", tc.data)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				assert.True(t, strings.HasPrefix(line, "c.json: "), "every line names the file: %q", line)
			}
			var ve *schemas.ValidationError
			var se *schemas.SyntaxError
			assert.True(t, errorsAs(err, &ve) || errorsAs(err, &se), "typed error, got %T", err)
		})
	}
}

// TestEvalCommandResultsForms: the three declarations of an eval command's results decode as
// written, and a command without one has none.
func TestEvalCommandResultsForms(t *testing.T) {
	c, err := Parse("c.json", edit(t, "eval_commands", []any{
		map[string]any{"run": "go test -json ./...", "results": "go-test-json"},
		map[string]any{"run": "node --test --test-reporter=tap", "results": "tap"},
		map[string]any{"run": "python3 run.py", "results": map[string]any{"junit": "reports/**/*.xml"}},
		"make test",
	}))
	require.NoError(t, err)
	want := []*Results{{Format: ResultsGoTestJSON}, {Format: ResultsTAP}, {Format: ResultsJUnit, Glob: "reports/**/*.xml"}, nil}
	for i, w := range want {
		assert.Equal(t, w, c.EvalCommands[i].Results, "command %d", i)
	}
	b, err := json.Marshal(c.EvalCommands[2])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"results":{"junit":"reports/**/*.xml"}`)
}

func TestGeasV1ExampleIsRejectedNamingScope(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "geas-v1", "task-contract.example.json"))
	if err != nil {
		b, err = os.ReadFile(filepath.Join("..", "testdata", "schemas", "task-contract", "task-contract.example.json"))
	}
	require.NoError(t, err)
	_, err = Parse("task-contract.example.json", b)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/scope")
}

func TestLoadStaysInsideRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "contract.json"), readFixture(t, "full.json"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "contract.json"), filepath.Join(dir, "contract.json")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real.json"), readFixture(t, "full.json"), 0o644))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	_, err = Load(r, "contract.json")
	assert.ErrorContains(t, err, "escapes")
	_, err = Load(r, "../x/contract.json")
	assert.Error(t, err)
	c, err := Load(r, "real.json")
	require.NoError(t, err)
	assert.Equal(t, "full", c.TaskID)
}

func TestEligibleStates(t *testing.T) {
	assert.Equal(t, []vocab.State{vocab.Integrated}, EligibleStates(vocab.ImplementationChange))
	assert.Equal(t, []vocab.State{vocab.Reviewed}, EligibleStates(vocab.ArtifactOnly))
	assert.Equal(t, []vocab.State{vocab.Reviewed, vocab.Integrated}, EligibleStates(vocab.ClosureReady))
	assert.Nil(t, EligibleStates("other"))
}

// TestParseReadsTheTestsObject: tests.may_change (paths, globs, FILE#KEY) and tests.protected.
func TestParseReadsTheTestsObject(t *testing.T) {
	c, err := Parse("c.json", edit(t, "tests", map[string]any{"may_change": []string{"test/a_test.sh", "package.json#scripts.test"}, "protected": []string{"checks/**"}}))
	require.NoError(t, err)
	assert.Equal(t, Tests{MayChange: []string{"test/a_test.sh", "package.json#scripts.test"}, Protected: []string{"checks/**"}}, c.Tests)
}

// TestSlotsStandForTheTypesAContractDoesNotName: a geas v1.4.0 contract that routes by slots alone
// is judged by its slots; one that names types beside them is judged by its types, each field on
// its own; a geas v1.0 contract is unchanged.
func TestSlotsStandForTheTypesAContractDoesNotName(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "schemas", "task-contract", "geas-v1.4-software.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	parse := func(routing map[string]any) Routing {
		t.Helper()
		doc["routing"] = routing
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		c, err := Parse("contract.json", data)
		require.NoError(t, err)
		return c.Routing
	}
	both := parse(map[string]any{
		"primary_worker_slot": "implementer", "primary_worker_type": "software-engineer",
		"required_reviewer_slots": []any{"design-authority", "quality"}, "required_reviewer_types": []any{"design-authority", "qa-engineer"},
	})
	assert.Equal(t, "software-engineer", both.PrimaryWorkerType)
	assert.Equal(t, []string{"design-authority", "qa-engineer"}, both.RequiredReviewerTypes)
	assert.Equal(t, []string{"design-authority", "quality"}, both.RequiredReviewerSlots)

	slots := parse(map[string]any{"primary_worker_slot": "implementer", "required_reviewer_slots": []any{"design-authority", "quality"}})
	assert.Equal(t, "implementer", slots.PrimaryWorkerType)
	assert.Equal(t, []string{"design-authority", "quality"}, slots.RequiredReviewerTypes)
	assert.True(t, slots.WorkerFromSlot && slots.ReviewersFromSlots)
	assert.False(t, both.WorkerFromSlot || both.ReviewersFromSlots)

	mixed := parse(map[string]any{"primary_worker_slot": "implementer", "primary_worker_type": "technical-writer", "required_reviewer_slots": []any{"quality"}})
	assert.Equal(t, "technical-writer", mixed.PrimaryWorkerType)
	assert.Equal(t, []string{"quality"}, mixed.RequiredReviewerTypes)
	assert.False(t, mixed.WorkerFromSlot)
	assert.True(t, mixed.ReviewersFromSlots)

	c, err := Parse("example.json", readFixture(t, "example.json"))
	require.NoError(t, err)
	assert.Empty(t, c.Routing.PrimaryWorkerSlot)
	assert.NotEmpty(t, c.Routing.PrimaryWorkerType)
}
