package tiers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

var allStatuses = []Status{StatusPass, StatusFail, StatusBlock, StatusError, StatusWarn, StatusSkipped}

// blockingCheck is a check of the given status as the builders make it: warn and skipped are
// never blocking.
func blockingCheck(s Status, name string) Check {
	switch s {
	case StatusPass:
		return passCheck(2, name, "t", "ok")
	case StatusWarn:
		return warnCheck(2, name, "t", "hm", "some_warning")
	case StatusSkipped:
		return skippedCheck(2, name, "t", "not run")
	}
	return failCheck(2, name, "t", "bad", s, vocab.CauseCode("code_"+string(s)))
}

// TestDecidePrecedence enumerates every combination of check statuses (each present or not) and
// checks SPEC §6: error > block > fail > pass over the blocking checks that ran; warn and skipped
// never count; no blocking check at all is block/nothing_to_satisfy.
func TestDecidePrecedence(t *testing.T) {
	t.Parallel()
	for mask := 0; mask < 1<<len(allStatuses); mask++ {
		var checks []Check
		var names []string
		present := map[Status]bool{}
		for i, s := range allStatuses {
			if mask&(1<<i) != 0 {
				checks = append(checks, blockingCheck(s, "c-"+string(s)))
				names = append(names, string(s))
				present[s] = true
			}
		}
		t.Run("{"+strings.Join(names, ",")+"}", func(t *testing.T) {
			v, causes := decide(checks)
			switch {
			case present[StatusError]:
				assert.Equal(t, vocab.VerdictError, v)
			case present[StatusBlock]:
				assert.Equal(t, vocab.VerdictBlock, v)
			case present[StatusFail]:
				assert.Equal(t, vocab.VerdictFail, v)
			case present[StatusPass]:
				assert.True(t, v.IsPass(), "got %s", v)
				assert.Empty(t, causes)
				return
			default: // only warn and skipped, or nothing
				assert.Equal(t, vocab.VerdictBlock, v)
				require.Len(t, causes, 1)
				assert.Equal(t, vocab.CauseNothingToSatisfy, causes[0].Code)
				return
			}
			assert.False(t, v.IsPass())
			var want []vocab.CauseCode
			for _, s := range []Status{StatusError, StatusBlock, StatusFail} {
				if present[s] {
					want = append(want, vocab.CauseCode("code_"+string(s)))
				}
			}
			assert.Equal(t, want, causeCodes(causes), "every blocking check that did not pass, worst first")
		})
	}
}

func TestDecideCauses(t *testing.T) {
	t.Parallel()
	checks := []Check{
		failCheck(2, "rubric:a", "t", "score 2 < threshold 3", StatusFail, vocab.CauseBelowThreshold),
		passCheck(0, "contract_valid", "t", "valid"),
		failCheck(2, "criterion:AC1", "t", "no entry", StatusBlock, vocab.CauseCriterionUnverified),
		warnCheck(0, "base_pinned", "t", "unpinned", "base_unpinned"),
		failCheck(2, "scope", "t", "lib/x.go", StatusFail, vocab.CauseScopeViolation),
		failCheck(1, "eval_command_1", "t", "cannot start", StatusError, vocab.CauseEvalUnstartable),
		failCheck(2, "criterion:AC2", "t", "none", StatusBlock, ""),
		{Name: "nonblocking-fail", Status: StatusFail, Blocking: false, Code: "ignored"},
	}
	v, causes := decide(checks)
	assert.Equal(t, vocab.VerdictError, v)
	assert.Equal(t, []Cause{
		{Code: vocab.CauseEvalUnstartable, Check: "eval_command_1", Detail: "cannot start", status: StatusError},
		{Code: vocab.CauseCriterionUnverified, Check: "criterion:AC1", Detail: "no entry", status: StatusBlock},
		{Code: "block", Check: "criterion:AC2", Detail: "none", status: StatusBlock},
		{Code: vocab.CauseBelowThreshold, Check: "rubric:a", Detail: "score 2 < threshold 3", status: StatusFail},
		{Code: vocab.CauseScopeViolation, Check: "scope", Detail: "lib/x.go", status: StatusFail},
	}, causes, "worst first, check order within a status; a check without a code is named by its status")
}

func TestDecideNothingToSatisfy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		checks []Check
	}{
		{"no checks", nil},
		{"only skipped", []Check{skippedCheck(1, "eval_commands", "t", "no eval_commands configured")}},
		{"only warnings", []Check{warnCheck(0, "base_pinned", "t", "e", "base_unpinned"), warnCheck(2, "scope:shared", "t", "e", "scope_shared")}},
		{"non-blocking passes", []Check{{Name: "info", Status: StatusPass, Passed: true, Blocking: false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, causes := decide(tc.checks)
			assert.Equal(t, vocab.VerdictBlock, v)
			assert.Equal(t, []Cause{{Code: vocab.CauseNothingToSatisfy, Check: "gate", Detail: "no blocking check ran; nothing to satisfy", status: StatusBlock}}, causes)
		})
	}
}

// TestDecideUnknownStatusFailsClosed: a blocking check whose status the gate does not know is
// treated as an error, never as a pass.
func TestDecideUnknownStatusFailsClosed(t *testing.T) {
	t.Parallel()
	for _, s := range []Status{"", "PASS", "passed", "ok"} {
		t.Run(string(s), func(t *testing.T) {
			v, causes := decide([]Check{passCheck(0, "contract_valid", "t", "valid"), {Name: "odd", Status: s, Blocking: true}})
			assert.Equal(t, vocab.VerdictError, v)
			require.Len(t, causes, 1)
			assert.Equal(t, "odd", causes[0].Check)
			assert.Equal(t, vocab.CauseCode("error"), causes[0].Code)
		})
	}
}

func TestVerdictExitCode(t *testing.T) {
	t.Parallel()
	pass, _ := decide([]Check{passCheck(0, "x", "t", "e")})
	assert.Equal(t, 0, pass.ExitCode())
	assert.Equal(t, 1, vocab.VerdictFail.ExitCode())
	assert.Equal(t, 2, vocab.VerdictBlock.ExitCode())
	assert.Equal(t, 3, vocab.VerdictError.ExitCode())
	assert.Equal(t, 3, vocab.Verdict("").ExitCode(), "an unknown verdict is an error")
	assert.Equal(t, 3, vocab.Verdict("PASS").ExitCode())
	assert.False(t, vocab.Verdict("PASS").IsPass())
	assert.False(t, vocab.Verdict("").IsPass())
}

func TestTierResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		checks []Check
		notRun string
		want   TierResult
	}{
		{"no checks", nil, "", TierResult{Status: StatusSkipped, Details: "no checks ran"}},
		{"only a skipped check", []Check{skippedCheck(1, "eval_commands", "t", "no eval_commands configured")}, "",
			TierResult{Status: StatusSkipped, Details: "no eval_commands configured"}},
		{"not run", []Check{passCheck(1, "a", "t", "e")}, "not run: tier 0 did not pass", TierResult{Status: StatusSkipped, Details: "not run: tier 0 did not pass"}},
		{"all pass", []Check{passCheck(1, "a", "t", "e"), passCheck(1, "b", "t", "e")}, "", TierResult{Status: StatusPass, Details: "2 of 2 checks passed"}},
		{"a warning does not lower a pass", []Check{passCheck(1, "a", "t", "e"), warnCheck(1, "w", "t", "e", "x")}, "",
			TierResult{Status: StatusPass, Details: "1 of 1 checks passed, 1 warning"}},
		{"only warnings", []Check{warnCheck(1, "w", "t", "e", "x")}, "", TierResult{Status: StatusSkipped, Details: "no checks ran"}},
		{"worst status", []Check{
			passCheck(1, "a", "t", "e"), failCheck(1, "b", "t", "e", StatusFail, "x"),
			failCheck(1, "c", "t", "e", StatusBlock, "y"), skippedCheck(1, "d", "t", "e"),
		}, "", TierResult{Status: StatusBlock, Details: "1 of 3 checks passed"}},
		{"error is worst", []Check{failCheck(1, "b", "t", "e", StatusBlock, "x"), failCheck(1, "c", "t", "e", StatusError, "y")}, "",
			TierResult{Status: StatusError, Details: "0 of 2 checks passed"}},
		{"other tiers do not count", []Check{passCheck(1, "a", "t", "e"), failCheck(0, "b", "t", "e", StatusError, "x"), failCheck(2, "c", "t", "e", StatusFail, "y")}, "",
			TierResult{Status: StatusPass, Details: "1 of 1 checks passed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tierResult(tc.checks, 1, tc.notRun))
		})
	}
}
