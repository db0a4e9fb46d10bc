package tiers

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// TestOnlyARunThatRunsCodeCanExposeTheKey: eval commands of an implementation_change, or a script
// detector of any profile, are code; a profile that skips tier 1 with commands listed, or only
// non-script detectors, runs none.
func TestOnlyARunThatRunsCodeCanExposeTheKey(t *testing.T) {
	c := unitContract()
	assert.False(t, runsCode(nil))
	assert.False(t, runsCode(c), "no eval commands, no detectors")
	c.EvalCommands = []contract.EvalCommand{{Run: "true"}}
	assert.True(t, runsCode(c))
	c.GateProfile = vocab.ArtifactOnly
	assert.False(t, runsCode(c), "tier 1 does not run for artifact_only")
	c.AcceptanceCriteria = []contract.Criterion{{ID: "AC1", Check: &contract.Detector{Type: contract.DetectFileExists, Path: "x"}}}
	assert.False(t, runsCode(c))
	c.AcceptanceCriteria = append(c.AcceptanceCriteria, contract.Criterion{ID: "AC2", Check: &contract.Detector{Type: contract.DetectScript, Command: "true"}})
	assert.True(t, runsCode(c), "a script detector runs in every profile")
}

// TestAnEvalUserThatCannotProtectTheKeyIsRefused: root, an unknown user and (for a gate that is
// not root) another user cannot be used; the gate's own user needs no switch.
func TestAnEvalUserThatCannotProtectTheKeyIsRefused(t *testing.T) {
	_, err := evalUser("root")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is root")
	_, err = evalUser("0")
	require.Error(t, err, "a numeric uid 0 is root too")
	_, err = evalUser("no-such-user-7f3a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such user")
	if os.Geteuid() != 0 {
		u, err := evalUser(itoa(os.Geteuid()))
		require.NoError(t, err)
		assert.Nil(t, u, "the gate's own user needs no switch")
	}
}

// TestEachKeySetupIsJudged: the table of reliability.md, for the setups that need no probe.
func TestEachKeySetupIsJudged(t *testing.T) {
	other := &proc.User{Name: "nobody", UID: 65534, GID: 65534}
	assert.Contains(t, exposure(record.KeyEnv, "", nil, probeResult{}), "the gate's own user")
	assert.Contains(t, exposure(record.KeyFile, "/k", nil, probeResult{}), "readable by the gate's own user")
	assert.Contains(t, exposure(record.KeyFile, "/k", other, probeResult{readable: []string{"/k"}}), "readable by eval_user nobody")
	assert.Empty(t, exposure(record.KeyFile, "/k", other, probeResult{}), "a key file the eval user cannot open is safe")
	if isLinux() {
		assert.Empty(t, exposure(record.KeyEnv, "", other, probeResult{}), "no ancestor's environment opened")
		assert.Contains(t, exposure(record.KeyEnv, "", other, probeResult{readable: []string{"/proc/1/environ"}}), "/proc/1/environ")
	} else {
		assert.Contains(t, exposure(record.KeyEnv, "", other, probeResult{}), "cannot confirm")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func isLinux() bool { return runtime.GOOS == "linux" }
