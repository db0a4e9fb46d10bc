package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// recordedAll is a geas gate --all outcome over the recorded runs (t1 to t4, gated; t4 a recheck)
// and every entry that is not a gate run: a task not ready, a cancelled one, and an entry that
// cannot be read as a task (an error result no run produced), whose names and reasons carry
// control characters the text table must not print.
func recordedAll(t *testing.T) *All {
	t.Helper()
	results := recordedResults(t)
	results[3].Recheck = true
	a := &All{Mission: &gate.Mission{Ignored: []string{".DS_Store", "._\x1b[31mx"}}, ID: "m1", DryRun: true}
	for _, res := range results {
		a.Tasks = append(a.Tasks, &gate.MissionTask{TaskID: res.TaskID, Outcome: string(res.Verdict), State: "integrated", Result: res, Ran: true})
	}
	unreadable := &tiers.Result{MissionID: "m1", TaskID: "bad\tname", Verdict: vocab.VerdictError,
		Causes:     []tiers.Cause{{Code: vocab.CauseTaskUnreadable, Check: "task_dir", Detail: "a symlink"}},
		Checks:     []tiers.Check{{Name: "task_dir", Tier: 0, Text: "the task directory entry can be read as a task", Status: tiers.StatusError, Blocking: true, Evidence: "a symlink", Code: vocab.CauseTaskUnreadable}},
		NextAction: tiers.NextInvestigateErr}
	a.Tasks = append(a.Tasks,
		&gate.MissionTask{TaskID: "t5", Outcome: "not_ready", State: "implementing", Reason: "state implementing; profile implementation_change is gated from integrated"},
		&gate.MissionTask{TaskID: "t6", Outcome: "cancelled", State: "cancelled", Reason: "not counted: cancelled by\nauthority"},
		&gate.MissionTask{TaskID: "bad\tname", Outcome: "error", Reason: "a symlink\x1b]0;x\a", Result: unreadable},
	)
	a.Overall = gate.Overall{PassRate: 0.2, Counts: map[string]int{"pass": 1, "fail": 1, "block": 1, "error": 2, "not_ready": 1, "cancelled": 1},
		Counted: 6, ExitCode: 3, Reason: "1 of 6 tasks pass; every task must pass (1 cancelled, not counted)"}
	return a
}

// recordedVerify is a geas gate verify --apply outcome with a task of each status, what --apply
// did about the revoked one, and a skipped task.
func recordedVerify(t *testing.T) *Verify {
	t.Helper()
	results := recordedResults(t)
	v := &Verify{Verification: &gate.Verification{Intact: 1, Revoked: 1, Tampered: 1,
		Skipped: []gate.Skipped{{TaskID: "t9", Reason: "state implementing: not verified or passed: nothing to verify"}}}, ID: "m1", Apply: true}
	v.Tasks = []gate.Verified{
		{VerifyReport: &gate.VerifyReport{MissionID: "m1", TaskID: "t2", State: "verified", Status: gate.VerifyIntact, Result: results[1]}},
		{VerifyReport: &gate.VerifyReport{MissionID: "m1", TaskID: "t1", State: "verified", Status: gate.VerifyRevoked, Causes: results[0].Causes, Result: results[0]},
			Applied: &gate.Revocation{Recorded: true, Hash: "0123456789abcdef0123", Transition: &tiers.Transition{From: "verified", To: "integrated"}, Note: "the revoked event was not logged (disk full): the next command on the task logs it"}},
		{VerifyReport: &gate.VerifyReport{MissionID: "m1", TaskID: "t3", State: "passed", Status: gate.VerifyTampered, Problems: []string{"entry 2: hash abc != recorded def", "gate_result is not the last run"}},
			Applied: &gate.Revocation{Note: "tampered records are never changed by --apply: investigate them"}},
	}
	return v
}

// TestGoldenAll renders the --all outcome in every format and compares stdout, and what junit
// sends to stderr, with their golden files.
func TestGoldenAll(t *testing.T) {
	for _, tc := range []struct{ format, golden, diag string }{
		{format: Text, golden: "all.txt"},
		{format: JSON, golden: "all.json"},
		{format: JUnit, golden: "all.junit.xml", diag: "all.junit.stderr.txt"},
		{format: GitHub, golden: "all.github.txt"},
		{format: SARIF, golden: "all.sarif"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out, diag bytes.Buffer
			require.NoError(t, For(tc.format).All(&out, &diag, recordedAll(t)))
			checkGolden(t, tc.golden, out.Bytes())
			if tc.diag == "" {
				assert.Empty(t, diag.String(), "only junit writes beside its document")
				return
			}
			checkGolden(t, tc.diag, diag.Bytes())
		})
	}
}

// TestGoldenVerify renders the verify outcome in every format and compares each with its golden
// file.
func TestGoldenVerify(t *testing.T) {
	for _, tc := range []struct{ format, golden string }{
		{format: Text, golden: "verify.txt"},
		{format: JSON, golden: "verify.json"},
		{format: JUnit, golden: "verify.junit.xml"},
		{format: GitHub, golden: "verify.github.txt"},
		{format: SARIF, golden: "verify.sarif"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, For(tc.format).Verify(&out, recordedVerify(t)))
			checkGolden(t, tc.golden, out.Bytes())
		})
	}
	t.Run("verify.github-summary.md", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, WriteGitHubVerifySummary(&out, recordedVerify(t)))
		checkGolden(t, "verify.github-summary.md", out.Bytes())
	})
}

// TestNoTaskIsAnEmptyList: --all over an empty tasks directory prints "tasks": [], not null.
func TestNoTaskIsAnEmptyList(t *testing.T) {
	var out bytes.Buffer
	a := &All{Mission: &gate.Mission{Overall: gate.Overall{Counts: map[string]int{}, ExitCode: 2, Reason: "no task to count"}}}
	require.NoError(t, For(JSON).All(&out, nil, a))
	assert.Contains(t, out.String(), `"tasks": []`)
	assert.Nil(t, a.Tasks, "the document given is not changed")
}
