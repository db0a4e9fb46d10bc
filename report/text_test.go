package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

func TestWriteText(t *testing.T) {
	t.Parallel()
	// A dry run of the example with base_snapshot main~1, then the same with a rubric score of 2.
	res := recordedResult(t, "example-pass.json")
	var buf bytes.Buffer
	writeText(&buf, res)
	out := buf.String()
	assert.Contains(t, out, "geas gate gate-1: task t1, mission m1, profile implementation_change (dry run: nothing written)\n")
	assert.Contains(t, out, "verdict: PASS\n")
	assert.Contains(t, out, "task would move integrated -> verified\n")
	assert.Contains(t, out, "WARN  base_pinned: base_snapshot is a full commit SHA\n")
	assert.Contains(t, out, "next: proceed: the task is verified\n")

	res = recordedResult(t, "example-below-threshold.json")
	buf.Reset()
	writeText(&buf, res)
	out = buf.String()
	assert.Contains(t, out, "verdict: FAIL (below_threshold)\n")
	assert.Contains(t, out, "blocking dimensions: core_interaction\n")
	assert.Contains(t, out, "        score 2 < threshold 3 (minimum of qa-engineer.json 2)\n")
	assert.Contains(t, out, "retry budget: 3 -> 2\n")
	assert.Contains(t, out, "next: fix: address the causes above and run the gate again (2 retries left)\n")
}

// TestCauseCodesAreListedOnce: the verdict line and the advisory line name each cause code once,
// in the order the causes come, in every format that prints them.
func TestCauseCodesAreListedOnce(t *testing.T) {
	res := &tiers.Result{MissionID: "m1", TaskID: "t1", Verdict: vocab.VerdictFail,
		Causes:         []tiers.Cause{{Code: "scope_violation"}, {Code: "eval_failed"}, {Code: "scope_violation"}},
		AdvisoryCauses: []tiers.Cause{{Code: "below_threshold"}, {Code: "below_threshold"}, {Code: "stub_cap_exceeded"}},
	}
	var text, gh bytes.Buffer
	writeText(&text, res)
	assert.Contains(t, text.String(), "verdict: FAIL (scope_violation, eval_failed)\n")
	assert.Contains(t, text.String(), "advisory (stages not reached, run by --keep-going; not counted): below_threshold, stub_cap_exceeded\n")
	require.NoError(t, writeGitHub(&gh, []*tiers.Result{res}))
	assert.Contains(t, gh.String(), "::verdict FAIL (scope_violation, eval_failed);")

	res.Causes, res.AdvisoryCauses = nil, nil
	text.Reset()
	writeText(&text, res)
	assert.Contains(t, text.String(), "verdict: FAIL\n")
	assert.NotContains(t, text.String(), "advisory")
}

// TestContractErrorsOneALine: the problems of an invalid contract (and record, policy, evidence)
// are printed one a line, as geas validate prints them; other evidence with line breaks (a
// command's output) stays on one line, so it cannot print a line of the report's own.
func TestContractErrorsOneALine(t *testing.T) {
	res := &tiers.Result{MissionID: "m1", TaskID: "t1", Verdict: vocab.VerdictError, Checks: []tiers.Check{
		{Name: "contract_valid", Status: tiers.StatusError, Code: vocab.CauseContractInvalid, Text: "contract.json parses and matches the schema",
			Evidence: "contract.json: /eval_command: unknown field\r\ncontract.json: /risk_level: \x1b[31mnot one of low, normal\n\n"},
		{Name: "eval_command_1", Tier: 1, Status: tiers.StatusFail, Code: vocab.CauseEvalFailed, Text: "eval command 1",
			Evidence: "last output: ok\nverdict: PASS"},
	}}
	var buf bytes.Buffer
	writeText(&buf, res)
	assert.Contains(t, buf.String(), "  ERROR contract_valid: contract.json parses and matches the schema\n"+
		"        contract.json: /eval_command: unknown field\n"+
		"        contract.json: /risk_level: [31mnot one of low, normal\n"+
		"  FAIL  eval_command_1: eval command 1\n"+
		"        last output: ok | verdict: PASS\n")
	assert.NotContains(t, buf.String(), "\nverdict: PASS")
}
