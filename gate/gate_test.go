package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// TestOnlyAuthoritiesGrant: an authority, or an agent named after one, may grant; anyone else
// is refused with the list of who can.
func TestOnlyAuthoritiesGrant(t *testing.T) {
	for _, by := range []string{"product-authority", "orchestration-authority", "design-authority-review"} {
		assert.NoError(t, CheckAuthority(by, "grant retries"), by)
	}
	for _, by := range []string{"software-engineer", "qa-engineer", "authority"} {
		err := CheckAuthority(by, "grant retries")
		require.Error(t, err, by)
		assert.Contains(t, err.Error(), by+" may not grant retries: only orchestration-authority, product-authority, design-authority can")
	}
}

// TestMissionOutcome: --all succeeds only when every counted task passes (or the share asked for
// does); the exit code is the worst outcome's, and nothing to count is not a success.
func TestMissionOutcome(t *testing.T) {
	ran := func(v vocab.Verdict) *MissionTask {
		return &MissionTask{Outcome: string(v), Result: &tiers.Result{Verdict: v}, Ran: true}
	}
	notReady := &MissionTask{Outcome: OutcomeNotReady}
	cancelled := &MissionTask{Outcome: OutcomeCancelled}
	for _, tc := range []struct {
		name    string
		tasks   []*MissionTask
		rate    float64
		success bool
		code    int
	}{
		{"all pass", []*MissionTask{ran(vocab.Verdict("pass")), ran(vocab.Verdict("pass")), cancelled}, 0, true, 0},
		{"one fail", []*MissionTask{ran(vocab.Verdict("pass")), ran(vocab.VerdictFail)}, 0, false, 1},
		{"not ready is a block", []*MissionTask{ran(vocab.VerdictFail), notReady}, 0, false, 2},
		{"error is worst", []*MissionTask{ran(vocab.VerdictBlock), ran(vocab.VerdictError), ran(vocab.VerdictFail)}, 0, false, 3},
		{"rate met", []*MissionTask{ran(vocab.Verdict("pass")), ran(vocab.VerdictFail)}, 0.5, true, 0},
		{"rate missed", []*MissionTask{ran(vocab.Verdict("pass")), ran(vocab.Verdict("pass")), ran(vocab.VerdictFail)}, 0.9, false, 1},
		{"nothing to count", []*MissionTask{cancelled}, 0, false, 2},
		{"no task", nil, 0, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ov := summarize(tc.tasks, tc.rate)
			assert.Equal(t, tc.success, ov.Success, ov.Reason)
			assert.Equal(t, tc.code, ov.ExitCode, ov.Reason)
		})
	}
}

// TestStandInResultsNeverPass: the results --all shows for an unreadable entry or a run that
// could not complete are error verdicts with their cause, in every tier, never a pass.
func TestStandInResultsNeverPass(t *testing.T) {
	at := unreadable("m1", &MissionTask{TaskID: "t1"}, "a symlink")
	failed := runFailed(Task{Mission: "m1", ID: "t2"}, os.ErrPermission)
	for code, res := range map[vocab.CauseCode]*tiers.Result{vocab.CauseTaskUnreadable: at.Result, vocab.CauseGateRunFailed: failed} {
		assert.Equal(t, vocab.VerdictError, res.Verdict, code)
		require.Len(t, res.Causes, 1, code)
		assert.Equal(t, code, res.Causes[0].Code)
		assert.Equal(t, tiers.StatusError, res.TierResults["tier_0"].Status, code)
		assert.Equal(t, tiers.StatusSkipped, res.TierResults["tier_1"].Status, code)
		assert.Equal(t, 3, ExitCode(res), code)
		_, err := res.JSON()
		assert.NoError(t, err, "%s: the stand-in is a valid result document", code)
	}
	assert.Equal(t, string(vocab.VerdictError), at.Outcome)
	assert.Equal(t, "a symlink", at.Reason)
}

// TestLogDirRefusesPlantedEntries: a run's log directory is made through the .geas root; a
// symlink planted in place of gate-logs or in the run's directory is refused, and the logs of an
// unrecorded run are moved aside, never written over.
func TestLogDirRefusesPlantedEntries(t *testing.T) {
	dir := t.TempDir()
	geas, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer geas.Close()
	const logDir = "missions/m1/tasks/t1/gate-logs/gate-1"

	root, err := openLogDir(geas, logDir)
	require.NoError(t, err)
	require.NoError(t, root.WriteFile("eval-1.log", []byte("old"), 0o644))
	root.Close()
	root, err = openLogDir(geas, logDir)
	require.NoError(t, err, "the logs of a run that was never recorded are kept aside")
	root.Close()
	old, err := os.ReadFile(filepath.Join(dir, logDir+".stale-1", "eval-1.log"))
	require.NoError(t, err)
	assert.Equal(t, "old", string(old))
	entries, err := os.ReadDir(filepath.Join(dir, logDir))
	require.NoError(t, err)
	assert.Empty(t, entries, "the run starts with an empty log directory")

	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, logDir, "eval-2.log")))
	_, err = openLogDir(geas, logDir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a symlink, not a log the gate wrote")

	other := "missions/m1/tasks/t2/gate-logs"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "missions/m1/tasks/t2"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "missions"), filepath.Join(dir, other)))
	_, err = openLogDir(geas, other+"/gate-1")
	assert.Error(t, err, "gate-logs that is a symlink is not a directory the gate trusts")
}

// TestUnknownMission names the mission and the directory that is missing.
func TestUnknownMission(t *testing.T) {
	err := &UnknownMissionError{Mission: "m9"}
	assert.Equal(t, `no mission "m9" (no .geas/missions/m9/tasks directory)`, err.Error())
}
