package schemas

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtureDir = "../testdata/schemas"

// fixtures lists every file under testdata/schemas/<kind>/. A fixture without fragments must be
// accepted; one with fragments must be rejected with a *ValidationError whose text contains each.
var fixtures = []struct {
	kind Kind
	file string
	want []string
}{
	// task-contract
	{Contract, "valid-minimal.json", nil},
	{Contract, "valid-extensions.json", nil},
	// geas v1.4.0's own examples, unchanged: routing by slots (and types), no envelope.
	{Contract, "geas-v1.4-software.json", nil},
	{Contract, "geas-v1.4-content.json", nil},
	{Contract, "geas-v1.4-research.json", nil},
	// A contract that names no slot is geas v1.0's, whose envelope and agent types are required.
	{Contract, "invalid-v1-without-envelope.json", []string{
		`/artifact_id: required field "artifact_id" is missing`,
		`/artifact_type: required field "artifact_type" is missing`,
		`/producer_type: required field "producer_type" is missing`,
		`/version: required field "version" is missing`,
	}},
	{Contract, "invalid-v1.4-one-slot.json", []string{`/routing/required_reviewer_slots: required field "required_reviewer_slots" is missing`}},
	{Contract, "invalid-slot.json", []string{
		`/routing/primary_worker_slot: value must be one of "implementer", "quality", "risk", "operations", "communication", found "builder"`,
		`/routing/required_reviewer_slots/1: value must be one of`,
	}},
	{Contract, "invalid-v1.4-type-name.json", []string{`/routing/primary_worker_type: "Software Engineer" does not match the pattern`}},
	{Contract, "task-contract.example.json", []string{
		`/scope/paths: unknown field "paths"`,
		`/scope/surfaces: required field "surfaces" is missing`,
	}},
	{Contract, "invalid-eval-command-typo.json", []string{`/eval_command: unknown field "eval_command"`}},
	{Contract, "invalid-threshold-without-value.json", []string{`/acceptance_criteria/0/check/value: required field "value" is missing`}},
	{Contract, "invalid-script-check-field.json", []string{
		`/acceptance_criteria/0/check/cmd: unknown field "cmd"`,
		`/acceptance_criteria/0/check/command: required field "command" is missing`,
	}},
	{Contract, "invalid-detector-type.json", []string{`/acceptance_criteria/0/check/type: value must be one of "script", "file_exists", "regex_match", "threshold", "judge", found "grep"`}},
	{Contract, "invalid-detector-without-type.json", []string{`/acceptance_criteria/0/check/type: required field "type" is missing`}},
	{Contract, "invalid-judge-min-score.json", []string{`/acceptance_criteria/0/check/min_score: must be <= 5 but found 6`}},
	{Contract, "invalid-threshold-op.json", []string{`/acceptance_criteria/0/check/op: value must be one of "gt", "gte", "lt", "lte", "eq", found ">="`}},
	{Contract, "invalid-eval-timeout.json", []string{`/eval_timeout: "10 minutes" is not a Go duration`}},
	{Contract, "invalid-eval-command-object.json", []string{
		`/eval_commands/0/expect_exit: must be <= 255 but found 256`,
		`/eval_commands/0/shell: unknown field "shell"`,
		`/eval_commands/0/timeout: "-5s" is not a Go duration`,
	}},
	{Contract, "invalid-blank-eval-command.json", []string{`/eval_commands/0: "  " is blank`}},
	{Contract, "invalid-eval-command-without-run.json", []string{`/eval_commands/0/run: required field "run" is missing`}},
	{Contract, "invalid-eval-command-maps.json", []string{
		`/eval_commands/0/env/CGO_ENABLED: expected string, but got number`,
		`/eval_commands/0/metrics/coverage: expected string, but got number`,
	}},
	{Contract, "invalid-empty-criterion.json", []string{`/acceptance_criteria/1: must not be empty`}},
	{Contract, "invalid-no-criteria.json", []string{`/acceptance_criteria: must have at least one item`}},
	{Contract, "invalid-criterion-object.json", []string{
		`/acceptance_criteria/0/id: "AC 1" does not match the pattern`,
		`/acceptance_criteria/0/weight: unknown field "weight"`,
	}},
	{Contract, "invalid-evaluator.json", []string{
		`/rubric/dimensions/0/evaluator: value must be one of`,
		`found "qa"`,
		`/rubric/dimensions/1/evaluator: must have at least one item`,
	}},
	{Contract, "invalid-status.json", []string{`/status: value must be one of "drafted",`, `found "done"`}},
	{Contract, "invalid-extension-enums.json", []string{
		`/escalation_policy: value must be one of "design-authority-review", "product-authority-decision", "pivot", found "ask-the-user"`,
		`/judge_independence: value must be one of "enforce", "strict", "off", found "lenient"`,
		`/stub_cap: must be >= 0 but found -1`,
	}},
	{Contract, "invalid-scope-shared.json", []string{`/scope/shared: expected array, but got string`}},
	{Contract, "invalid-missing-required.json", []string{
		`/routing: required field "routing" is missing`,
		`/status: required field "status" is missing`,
	}},

	// record
	{Record, "valid-minimal.json", nil},
	{Record, "valid-extensions.json", nil},
	{Record, "geas-v1.4-software.json", nil},
	{Record, "geas-v1.4-content.json", nil},
	{Record, "geas-v1.4-research.json", nil},
	{Record, "invalid-self-check-without-cases.json", []string{
		`/self_check/untested_paths: required field "untested_paths" is missing`,
		`/self_check/unverified_cases: required field "unverified_cases" is missing`,
	}},
	{Record, "record.example.json", nil},
	// geas v1.0's root (SPEC §3): integration and the gate history live in integration.json and
	// gate-history.jsonl, whose contents record.ParseIntegration and the history reader check; a
	// record in the earlier layout is read by record.Parse, not by this schema.
	{Record, "invalid-integration.json", []string{`/integration: unknown field "integration"`}},
	{Record, "invalid-gate-history-entry.json", []string{`/gate_history: unknown field "gate_history"`}},
	{Record, "invalid-possible-stubs.json", []string{
		`/self_check/possible_stubs/0: must not be empty`,
		`/self_check/possible_stubs/1/line: must be >= 1 but found 0`,
		`/self_check/possible_stubs/2/path: required field "path" is missing`,
		`/self_check/possible_stubs/3: expected string, but got number`,
	}},
	{Record, "invalid-unknown-section.json", []string{`/notes: unknown field "notes"`}},
	{Record, "invalid-self-check.json", []string{
		`/self_check/confidence: must be <= 5 but found 6`,
		`/self_check/known_risks: expected array, but got string`,
		`/self_check/summary: must not be empty`,
		`/self_check/untested_paths: required field "untested_paths" is missing`,
	}},
	{Record, "invalid-gate-result.json", []string{
		`/gate_result/causes/0/code: required field "code" is missing`,
		`/gate_result/eval_runs/0/exit_code: expected integer or null, but got string`,
		`/gate_result/next_action: value must be one of "proceed", "fix", "escalate", "resolve_block", "investigate_error", found "retry"`,
		`/gate_result/retry_budget_after: must be >= 0 but found -1`,
		`/gate_result/started_at: "2026-04-02T11:00:00.123Z" is not a UTC timestamp`,
		`/gate_result/transition/to: required field "to" is missing`,
		`/gate_result/verdict: value must be one of "pass", "fail", "block", "error", found "passed"`,
	}},
	{Record, "invalid-geas-required.json", []string{
		`/closure/change_summary: required field "change_summary" is missing`,
		`/closure/reviews: required field "reviews" is missing`,
		`/implementation_contract/planned_actions: required field "planned_actions" is missing`,
		`/implementation_contract/status: required field "status" is missing`,
		`/verdict/rationale: required field "rationale" is missing`,
	}},
	{Record, "invalid-challenge-concern.json", []string{
		`/challenge_review/blocking: expected boolean, but got string`,
		`/challenge_review/concerns/0/severity: value must be one of "blocking", "non_blocking", found "major"`,
		`/challenge_review/concerns/1: expected string, but got number`,
	}},
	{Record, "invalid-envelope.json", []string{
		`/task_id: required field "task_id" is missing`,
		`/version: value must be "1.0", found "2.0"`,
	}},

	// evidence
	{Evidence, "valid-minimal.json", nil},
	{Evidence, "valid-extensions.json", nil},
	{Evidence, "geas-v1.4-software.json", nil},
	{Evidence, "geas-v1.4-content.json", nil},
	{Evidence, "geas-v1.4-research.json", nil},
	// geas v1.4.0 dropped v1.0's role conditions; only the verdict of a review stays required.
	{Evidence, "valid-reviewer-without-concerns.json", nil},
	{Evidence, "valid-tester-without-results.json", nil},
	{Evidence, "invalid-reviewer-without-verdict.json", []string{`/verdict: required field "verdict" is missing`}},
	{Evidence, "evidence.example.json", nil},
	{Evidence, "invalid-rubric-score.json", []string{`/rubric_scores/0/score: must be <= 5 but found 7`}},
	{Evidence, "invalid-risk-handling.json", []string{
		`/risk_handling/0/status: value must be one of "mitigated", "accepted", "deferred", found "ignored"`,
		`/risk_handling/1/debtid: unknown field "debtid"`,
		`/risk_handling/1/risk: required field "risk" is missing`,
	}},
	{Evidence, "invalid-judgment.json", []string{
		`/judgments/0/passed: expected boolean, but got string`,
		`/judgments/0/scor: unknown field "scor"`,
		`/judgments/0/score: must be >= 1 but found 0`,
	}},
	{Evidence, "invalid-metrics.json", []string{`/metrics/coverage: expected number, but got string`}},
	{Evidence, "invalid-role.json", []string{`/role: value must be one of "implementer", "reviewer", "tester", "authority", found "builder"`}},
	{Evidence, "invalid-missing-role.json", []string{
		`/role: required field "role" is missing`,
		`/summary: required field "summary" is missing`,
	}},
	{Evidence, "invalid-field-types.json", []string{
		`/created_at: "yesterday" is not a UTC timestamp of the form 2026-04-01T09:00:00Z`,
		`/criteria_results/0/id: expected string, but got number`,
		`/criteria_results/0/passed: expected boolean, but got string`,
		`/provider_id: expected string, but got number`,
	}},

	// debt-register
	{DebtRegister, "valid-minimal.json", nil},
	{DebtRegister, "valid-full.json", nil},
	{DebtRegister, "geas-v1.4.example.json", nil},
	{DebtRegister, "invalid-item.json", []string{
		`/items/0/due: unknown field "due"`,
		`/items/0/severity: value must be one of "low", "normal", "high", "critical", found "medium"`,
	}},
	{DebtRegister, "invalid-envelope.json", []string{
		`/artifact_type: value must be "debt_register", found "debt"`,
		`/scope: value must be one of "task", "phase", "mission", found "global"`,
	}},
	{DebtRegister, "invalid-rollup.json", []string{
		`/rollup_by_severity/low: must be >= 0 but found -1`,
		`/rollup_by_severity/medium: unknown field "medium"`,
		`/updated_at: "2026-04-02" is not a UTC timestamp`,
	}},
	{DebtRegister, "invalid-without-items.json", []string{`/items: required field "items" is missing`}},

	// decision
	{Decision, "valid-minimal.json", nil},
	{Decision, "valid-full.json", nil},
	{Decision, "invalid-envelope.json", []string{
		`/artifact_id: "../escape" is not an id`,
		`/artifact_type: value must be "decision_record", found "decision"`,
		`/version: value must be "1.0", found "1"`,
	}},
	{Decision, "invalid-decided-without-decision.json", []string{`/decision: required field "decision" is missing`}},
	{Decision, "invalid-fields.json", []string{
		`/created_at: "2026-04-02 13:00:00" is not a UTC timestamp`,
		`/escalation_policy: value must be one of "design-authority-review", "product-authority-decision", "pivot", found "vote"`,
		`/notes: unknown field "notes"`,
		`/options: expected array, but got string`,
		`/status: value must be one of "pending", "decided", "superseded", found "open"`,
		`/task_id: "task 2" is not an id`,
	}},
	{Decision, "invalid-missing-required.json", []string{
		`/decision_type: required field "decision_type" is missing`,
		`/title: required field "title" is missing`,
	}},

	// event
	{Event, "valid-minimal.json", nil},
	{Event, "valid-full.json", nil},
	{Event, "invalid-event-type.json", []string{`/event_type: "GateResult" does not match the pattern '^[a-z][a-z0-9_]*$'`}},
	{Event, "invalid-timestamp.json", []string{`/timestamp: "2026-04-02T11:00:05.123+02:00" is not a UTC timestamp`}},
	{Event, "invalid-fields.json", []string{
		`/agent: must not be empty`,
		`/data: expected object, but got array`,
		`/level: unknown field "level"`,
		`/mission_id: "" is not an id`,
		`/task_id: "../task" is not an id`,
	}},
	{Event, "invalid-without-timestamp.json", []string{`/timestamp: required field "timestamp" is missing`}},

	// gate-policy
	{GatePolicy, "valid-minimal.json", nil},
	{GatePolicy, "valid-full.json", nil},
	{GatePolicy, "invalid-typo.json", []string{`/eval_timout: unknown field "eval_timout"`}},
	{GatePolicy, "invalid-stub-cap.json", []string{
		`/stub_cap/high: must be >= 0 but found -1`,
		`/stub_cap/medium: unknown field "medium"`,
	}},
	{GatePolicy, "invalid-limits.json", []string{
		`/consecutive_error_limit: must be >= 1 but found 0`,
		`/eval_timeout: "forever" is not a Go duration`,
		`/max_evidence_bytes: must be >= 1024 but found 512`,
		`/output_tail_bytes: must be >= 256 but found 100`,
	}},
	{GatePolicy, "invalid-evaluators.json", []string{
		`/evaluators/code_quality: must have at least one item`,
		`/evaluators/regression_safety: expected array, but got string`,
		`/evaluators/ux_clarity/0: value must be one of`,
		`found "ux-designer"`,
	}},
	{GatePolicy, "invalid-lists.json", []string{
		`/judge_independence: value must be one of "enforce", "strict", "off", found "sometimes"`,
		`/shared_globs: expected array, but got string`,
		`/stub_patterns/0: must not be empty`,
	}},
}

func readFixture(t testing.TB, k Kind, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, string(k), file))
	require.NoError(t, err)
	return b
}

// assertLines checks that every line of a validation error names the file, a JSON pointer and a
// message, in that order.
func assertLines(t *testing.T, file string, err error) {
	t.Helper()
	line := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `: /\S*: .+$`)
	for _, l := range strings.Split(err.Error(), "\n") {
		assert.Regexp(t, line, l)
	}
}

func TestFixtures(t *testing.T) {
	for _, tc := range fixtures {
		t.Run(string(tc.kind)+"/"+tc.file, func(t *testing.T) {
			err := Validate(tc.kind, tc.file, readFixture(t, tc.kind, tc.file))
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.kind, ve.Kind)
			assert.Equal(t, tc.file, ve.File)
			for _, w := range tc.want {
				if strings.HasPrefix(w, "/") {
					w = tc.file + ": " + w // a fragment naming a pointer starts a line
				}
				assert.Contains(t, err.Error(), w)
			}
			assertLines(t, tc.file, err)
		})
	}
}

// TestEveryFixtureIsInTheTable keeps the fixture directory and the table in step: a fixture nobody
// asserts on proves nothing.
func TestEveryFixtureIsInTheTable(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range fixtures {
		listed[string(tc.kind)+"/"+tc.file] = true
	}
	kinds := map[Kind]int{}
	err := filepath.WalkDir(fixtureDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		rel, err := filepath.Rel(fixtureDir, p)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "geas-v1/") || strings.HasPrefix(rel, "geas-v1.4/") {
			return nil
		}
		assert.True(t, listed[rel], "fixture %s has no row in the fixtures table", rel)
		k, ok := ParseKind(strings.Split(rel, "/")[0])
		assert.True(t, ok, "fixture %s is not under a kind directory", rel)
		kinds[k]++
		return nil
	})
	require.NoError(t, err)
	for _, k := range Kinds() {
		valid, invalid := 0, 0
		for _, tc := range fixtures {
			if tc.kind == k && tc.want == nil {
				valid++
			} else if tc.kind == k {
				invalid++
			}
		}
		assert.GreaterOrEqual(t, valid, 2, "%s needs a minimal and a full valid fixture", k)
		assert.GreaterOrEqual(t, invalid, 3, "%s needs several invalid fixtures", k)
	}
}

func TestGeasExamples(t *testing.T) {
	t.Run("record example is accepted", func(t *testing.T) {
		assert.NoError(t, Validate(Record, "record.example.json", readFixture(t, Record, "record.example.json")))
	})
	t.Run("evidence example is accepted", func(t *testing.T) {
		assert.NoError(t, Validate(Evidence, "evidence.example.json", readFixture(t, Evidence, "evidence.example.json")))
	})
	t.Run("task contract example is rejected for its scope", func(t *testing.T) {
		err := Validate(Contract, "task-contract.example.json", readFixture(t, Contract, "task-contract.example.json"))
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Contains(t, err.Error(), "scope")
		assert.Contains(t, err.Error(), "/scope/paths")
		for _, p := range ve.Problems {
			assert.True(t, strings.HasPrefix(p.Pointer, "/scope/"), "only scope is wrong, got %s: %s", p.Pointer, p.Message)
		}
	})
}

// withField returns the fixture with one top-level field set.
func withField(t *testing.T, k Kind, file, key string, value any) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(readFixture(t, k, file), &doc))
	doc[key] = value
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

func TestUnknownFieldsAreErrors(t *testing.T) {
	cases := []struct {
		name string
		kind Kind
		file string
		key  string
	}{
		{"contract typo eval_command", Contract, "valid-extensions.json", "eval_command"},
		{"contract typo accepted_criteria", Contract, "valid-minimal.json", "accepted_criteria"},
		{"record section typo", Record, "valid-extensions.json", "gate_results"},
		{"decision", Decision, "valid-full.json", "decison"},
		{"event", Event, "valid-full.json", "payload"},
		{"gate policy", GatePolicy, "valid-full.json", "stub_caps"},
		{"debt register", DebtRegister, "valid-full.json", "owner"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.kind, tc.file, withField(t, tc.kind, tc.file, tc.key, []string{"x"}))
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, []Problem{{Pointer: "/" + tc.key, Message: `unknown field "` + tc.key + `" (not in the schema)`}}, ve.Problems)
		})
	}
}

func TestDetectorErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name  string
		check map[string]any
		want  []string
	}{
		{"threshold without value", map[string]any{"type": "threshold", "metric": "x", "op": "gte"}, []string{`/acceptance_criteria/0/check/value: required field "value" is missing`}},
		{"script with a bad expect_exit", map[string]any{"type": "script", "command": "true", "expect_exit": -1}, []string{`/acceptance_criteria/0/check/expect_exit: must be >= 0 but found -1`}},
		{"script with a threshold field", map[string]any{"type": "script", "command": "true", "metric": "x"}, []string{`/acceptance_criteria/0/check/metric: unknown field "metric"`}},
		{"file_exists without path", map[string]any{"type": "file_exists", "non_empty": "yes"}, []string{`/acceptance_criteria/0/check/non_empty: expected boolean, but got string`, `/acceptance_criteria/0/check/path: required field "path" is missing`}},
		{"regex_match without pattern", map[string]any{"type": "regex_match", "artifact": "out.txt"}, []string{`/acceptance_criteria/0/check/pattern: required field "pattern" is missing`}},
		{"judge without standard", map[string]any{"type": "judge", "min_score": 0.5}, []string{`/acceptance_criteria/0/check/min_score: must be >= 1 but found 0.5`, `/acceptance_criteria/0/check/standard: required field "standard" is missing`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			criteria := []any{map[string]any{"id": "AC1", "criterion": "it works", "check": tc.check}}
			err := Validate(Contract, "contract.json", withField(t, Contract, "valid-minimal.json", "acceptance_criteria", criteria))
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Len(t, ve.Problems, len(tc.want), "no noise from the other detector types: %v", err)
		})
	}
}

func TestRubricScoreOutOfRangeIsRejected(t *testing.T) {
	for _, score := range []any{7, 0, 5.5, -1} {
		body := withField(t, Evidence, "valid-minimal.json", "rubric_scores", []any{map[string]any{"dimension": "code_quality", "score": score}})
		err := Validate(Evidence, "design-authority.json", body)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Contains(t, err.Error(), "/rubric_scores/0/score")
	}
}

func TestDecodeRejectsAmbiguousJSON(t *testing.T) {
	cases := []struct {
		name, data, want string
	}{
		{"duplicate top-level key", `{"task_id":"a","task_id":"b"}`, `duplicate key "task_id" in object /`},
		{"duplicate nested key", `{"scope":{"surfaces":[],"surfaces":["x"]}}`, `duplicate key "surfaces" in object /scope`},
		{"duplicate key in array item", `{"a":[{},{"k":1,"k":1}]}`, `duplicate key "k" in object /a/1`},
		{"trailing value", `{} {}`, "data after the JSON value"},
		{"trailing garbage", `{"a":1}x`, "data after the JSON value"},
		{"empty", ``, "empty document"},
		{"truncated", `{"a":`, "invalid JSON"},
		{"not JSON", `version: 1.0`, "invalid JSON"},
		// encoding/json would read these bytes as U+FFFD: the file would say one thing and the
		// decoded text another.
		{"invalid UTF-8 in a string", "{\"summary\":\"ok \xff\xfe\"}", "invalid JSON at byte 15: invalid UTF-8"},
		{"truncated UTF-8 sequence", "{\"a\":\"\xe2\x82\"}", "invalid UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("f.json", []byte(tc.data))
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "f.json: "), err.Error())
			for _, k := range Kinds() {
				err := Validate(k, "f.json", []byte(tc.data))
				assert.ErrorAs(t, err, &se, "kind %s", k)
			}
		})
	}
}

func TestDecodeKeepsNumbersExact(t *testing.T) {
	v, err := Decode("f.json", []byte(`{"n": 12345678901234567890}`))
	require.NoError(t, err)
	assert.Equal(t, json.Number("12345678901234567890"), v.(map[string]any)["n"])
}

func TestEverySchemaCompiles(t *testing.T) {
	all, err := compileAll()
	require.NoError(t, err)
	assert.Len(t, all, len(Kinds()))
	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			err := Validate(k, "empty.json", []byte(`{}`))
			if err != nil {
				var ve *ValidationError
				assert.ErrorAs(t, err, &ve)
			}
			src, err := Source(k)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(src, &doc))
			assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
			assert.Equal(t, string(k)+".schema.json", doc["$id"], "relative $id equal to the file name")
		})
	}
	_, err = Source("nope")
	assert.Error(t, err)
	assert.Error(t, Validate("nope", "f.json", []byte(`{}`)))
}

func TestValidateValueAcceptsBuiltValues(t *testing.T) {
	ok := map[string]any{"timestamp": "2026-04-02T11:00:05Z", "event_type": "gate_result", "data": map[string]any{"retry_budget_after": float64(1)}}
	assert.NoError(t, ValidateValue(Event, "events.jsonl:3", ok))
	bad := map[string]any{"output_tail_bytes": float64(10)}
	err := ValidateValue(GatePolicy, "gate-policy.json", bad)
	assert.EqualError(t, err, "gate-policy.json: /output_tail_bytes: must be >= 256 but found 10")
}

func TestRootProblemsUseSlash(t *testing.T) {
	err := Validate(Event, "events.jsonl:1", []byte(`[]`))
	assert.EqualError(t, err, "events.jsonl:1: /: expected object, but got array")
}

// TestPointersNameOddKeys checks that keys with quotes, commas, slashes, tildes and spaces come out
// as RFC 6901 pointers naming the real key.
func TestPointersNameOddKeys(t *testing.T) {
	err := Validate(GatePolicy, "p.json", []byte(`{"a', 'b": 1, "x/y~z": 2, "with space": 3, "q\"uote": 4}`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	var ptrs []string
	for _, p := range ve.Problems {
		ptrs = append(ptrs, p.Pointer)
	}
	assert.ElementsMatch(t, []string{`/a', 'b`, `/q"uote`, `/with space`, `/x~1y~0z`}, ptrs)
	assert.Contains(t, err.Error(), `p.json: /a', 'b: unknown field "a', 'b"`)

	err = Validate(Contract, "c.json", withField(t, Contract, "valid-extensions.json", "eval_commands",
		[]any{map[string]any{"run": "x", "env": map[string]any{"A B": 1}}}))
	assert.Contains(t, err.Error(), "c.json: /eval_commands/0/env/A B: expected string, but got number")
}

func TestProblemsAreOrderedByPointer(t *testing.T) {
	criteria := make([]any, 12)
	for i := range criteria {
		criteria[i] = "criterion"
	}
	criteria[2], criteria[10] = "", ""
	err := Validate(Contract, "c.json", withField(t, Contract, "valid-minimal.json", "acceptance_criteria", criteria))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 2)
	assert.Equal(t, "/acceptance_criteria/2", ve.Problems[0].Pointer)
	assert.Equal(t, "/acceptance_criteria/10", ve.Problems[1].Pointer)
}

func TestLongValuesAreShortened(t *testing.T) {
	err := Validate(Event, "e.json", []byte(`{"timestamp":"`+strings.Repeat("9", 500)+`","event_type":"x"}`))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 200)
	assert.Contains(t, err.Error(), `9..." is not a UTC timestamp`)
}

func TestParseKind(t *testing.T) {
	cases := []struct {
		in   string
		want Kind
		ok   bool
	}{
		{"task-contract", Contract, true},
		{"task-contract.schema.json", Contract, true},
		{"contract", Contract, true},
		{"task_contract", Contract, true},
		{"record", Record, true},
		{"record.schema.json", Record, true},
		{"evidence", Evidence, true},
		{"debt-register", DebtRegister, true},
		{"debt", DebtRegister, true},
		{"debt_register", DebtRegister, true},
		{"decision", Decision, true},
		{"decision_record", Decision, true},
		{"decision-record", Decision, true},
		{"event", Event, true},
		{"gate-policy", GatePolicy, true},
		{"policy", GatePolicy, true},
		{"gate_policy.json", GatePolicy, true},
		{"_defs", "", false},
		{"", "", false},
		{"Record", "", false},
		{"tasks", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			k, ok := ParseKind(tc.in)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, k)
		})
	}
	for _, k := range Kinds() {
		got, ok := ParseKind(string(k))
		assert.True(t, ok)
		assert.Equal(t, k, got)
	}
}

func TestKindForFile(t *testing.T) {
	cases := []struct {
		in   string
		want Kind
		ok   bool
	}{
		{".geas/missions/m1/tasks/t1/contract.json", Contract, true},
		{"t1.contract.json", Contract, true},
		{".geas/missions/m1/tasks/t1/record.json", Record, true},
		{"backup.record.json", Record, true},
		{".geas/missions/m1/tasks/t1/evidence/qa-engineer.json", Evidence, true},
		{`.geas\missions\m1\tasks\t1\evidence\design-authority-review.json`, Evidence, true},
		{"qa.evidence.json", Evidence, true},
		{".geas/missions/m1/evolution/debt-register.json", DebtRegister, true},
		{".geas/missions/m1/decisions/pending/dec-1.json", Decision, true},
		{".geas/missions/m1/decisions/dec-2.json", Decision, true},
		{"dec-3.decision.json", Decision, true},
		{".geas/gate-policy.json", GatePolicy, true},
		{".geas/gate-policy.example.json", GatePolicy, true},
		{"line-4.event.json", Event, true},
		{"evidence.json", Evidence, true},
		{"task-contract.schema.json", Contract, true},
		{"README.md", "", false},
		{".geas/state/run.json", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			k, ok := KindForFile(tc.in)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, k)
		})
	}
}

// TestSchemasKeepEveryGeasField compares each embedded schema that extends a geas schema with the
// originals of geas v1.0 and of geas v1.4.0: every property either defines is still defined, every
// object either closes is still closed, and every required list is unchanged apart from the
// documented relaxations (which are what the union of the two versions needs: a field one version
// requires and the other does not).
func TestSchemasKeepEveryGeasField(t *testing.T) {
	relaxed := map[string]map[string][]string{
		"geas-v1": {
			"record/properties/implementation_contract":          {"non_goals"},
			"record/properties/closure":                          {"open_risks", "debt_items"},
			"record/properties/closure/properties/reviews/items": {"reviewer_type", "status"},
			"record/properties/self_check":                       {"untested_paths"},
			"record":                                             {"version"},
			"evidence":                                           {"version"},
			"debt-register":                                      {"version", "artifact_type", "artifact_id", "producer_type"},
			"task-contract":                                      {"version", "artifact_type", "artifact_id", "producer_type"}, // required by shape, below
			"task-contract/properties/routing":                   {"primary_worker_type", "required_reviewer_types"},
		},
		"geas-v1.4": {
			"record/properties/implementation_contract": {"non_goals"},
			"record/properties/closure":                 {"open_risks", "debt_items"},
			"record/properties/self_check":              {"unverified_cases"},
			"task-contract/properties/routing":          {"primary_worker_slot", "required_reviewer_slots"}, // required by shape, below
		},
	}
	for _, dir := range []string{"geas-v1", "geas-v1.4"} {
		for _, k := range []Kind{Contract, Record, Evidence, DebtRegister} {
			t.Run(dir+"/"+string(k), func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(fixtureDir, dir, string(k)+".schema.json"))
				require.NoError(t, err)
				var geas, ours map[string]any
				require.NoError(t, json.Unmarshal(b, &geas))
				src, err := Source(k)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(src, &ours))
				compareSchemas(t, string(k), geas, ours, ours, relaxed[dir])
			})
		}
	}
}

// TestAContractIsReadByItsShape: the contract fields each version requires and the other does not
// are required by shape, so that a contract of either version misses none of its own: one that
// names a slot needs both slots, any other needs geas v1.0's envelope and both agent types.
func TestAContractIsReadByItsShape(t *testing.T) {
	v14 := withField(t, Contract, "geas-v1.4-software.json", "routing", map[string]any{"primary_worker_slot": "implementer", "required_reviewer_slots": []any{"quality"}})
	require.NoError(t, Validate(Contract, "c.json", v14), "slots without types and without the envelope")
	v10 := withField(t, Contract, "valid-minimal.json", "routing", map[string]any{"primary_worker_type": "software-engineer", "required_reviewer_types": []any{"qa-engineer"}})
	require.NoError(t, Validate(Contract, "c.json", v10), "types with the envelope")
	// The v1.0 shape keeps v1.0's closed list of agent types; the v1.4.0 shape takes any name.
	err := Validate(Contract, "c.json", withField(t, Contract, "valid-minimal.json", "routing", map[string]any{"primary_worker_type": "data-engineer", "required_reviewer_types": []any{"qa-engineer"}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/routing/primary_worker_type: value must be one of")
	require.NoError(t, Validate(Contract, "c.json", withField(t, Contract, "geas-v1.4-software.json", "routing", map[string]any{
		"primary_worker_slot": "implementer", "required_reviewer_slots": []any{"quality"}, "primary_worker_type": "data-engineer"})))
	// Types alone without the envelope are neither version.
	err = Validate(Contract, "c.json", withField(t, Contract, "geas-v1.4-software.json", "routing", map[string]any{"primary_worker_type": "software-engineer", "required_reviewer_types": []any{"qa-engineer"}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `/version: required field "version" is missing`)
}

func compareSchemas(t *testing.T, at string, geas, ours, root map[string]any, relaxed map[string][]string) {
	t.Helper()
	if ref, ok := ours["$ref"].(string); ok && strings.HasPrefix(ref, "#/$defs/") && geas["properties"] != nil {
		def, _ := root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		require.NotNil(t, def, "%s: $ref %s", at, ref)
		ours = def
	}
	if geas["additionalProperties"] == false {
		assert.Equal(t, false, ours["additionalProperties"], "%s must stay closed", at)
	}
	gr, _ := geas["required"].([]any)
	or, _ := ours["required"].([]any)
	for _, r := range gr {
		if !slices.Contains(relaxed[at], r.(string)) {
			assert.Contains(t, or, r, "%s: geas requires %v", at, r)
		}
	}
	for _, r := range or {
		assert.Contains(t, gr, r, "%s: %v is required here but not by geas", at, r)
	}
	gp, _ := geas["properties"].(map[string]any)
	op, _ := ours["properties"].(map[string]any)
	for name, g := range gp {
		o, ok := op[name]
		if !assert.True(t, ok, "%s: geas property %s is missing", at, name) {
			continue
		}
		gm, _ := g.(map[string]any)
		om, _ := o.(map[string]any)
		compareSchemas(t, at+"/properties/"+name, gm, om, root, relaxed)
	}
	if gi, ok := geas["items"].(map[string]any); ok && gi["properties"] != nil {
		oi, _ := ours["items"].(map[string]any)
		compareSchemas(t, at+"/items", gi, oi, root, relaxed)
	}
}

// FuzzValidate feeds arbitrary bytes to every schema: validation never panics, a document that does
// not decode is never accepted, and every error is one of the two documented types.
func FuzzValidate(f *testing.F) {
	err := filepath.WalkDir(fixtureDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
		return err
	})
	require.NoError(f, err)
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{} []`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, decodeErr := Decode("fuzz.json", data)
		for _, k := range Kinds() {
			err := Validate(k, "fuzz.json", data)
			if decodeErr != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("%s: undecodable input accepted or misreported: %v", k, err)
				}
				continue
			}
			if err == nil {
				continue
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("%s: unexpected error type %T: %v", k, err, err)
			}
			if len(ve.Problems) == 0 {
				t.Fatalf("%s: validation error without problems", k)
			}
		}
	})
}
