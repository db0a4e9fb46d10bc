package cmd

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runInProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(t.Context(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestVersionFlagAndCommandAgree: geas --version prints what geas version prints, in text and in
// JSON: the version, the Go version, and the geas v1.0 and v1.4.0 formats read from the schemas.
func TestVersionFlagAndCommandAgree(t *testing.T) {
	code, text, stderr := runInProcess(t, "version")
	require.Equal(t, 0, code, stderr)
	code, flag, _ := runInProcess(t, "--version")
	require.Equal(t, 0, code)
	assert.Equal(t, text, flag)
	assert.True(t, strings.HasPrefix(text, "geas "+buildVersion().Short+"\n"), text)
	assert.Contains(t, text, runtime.Version())
	assert.Contains(t, text, "reads     geas v1.0 files: task-contract, record, evidence")
	assert.Contains(t, text, "reads     geas v1.4.0 files: task-contract, record, evidence, debt-register\n")

	for _, args := range [][]string{{"--format", "json", "version"}, {"--format", "json", "--version"}} {
		code, out, stderr := runInProcess(t, args...)
		require.Equal(t, 0, code, stderr)
		var v versionInfo
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		assert.Equal(t, runtime.Version(), v.Go)
		assert.Equal(t, modulePath, v.Module)
		assert.NotEmpty(t, v.Version)
		assert.Contains(t, v.Formats, formatVersion{Schema: "task-contract", Version: "1.0"})
		assert.Contains(t, v.Formats, formatVersion{Schema: "record", Version: "1.0"})
		assert.Contains(t, v.Formats, formatVersion{Schema: "task-contract", Version: "1.4.0"})
		assert.NotContains(t, v.Formats, formatVersion{Schema: "gate-policy", Version: "1.4.0"})
		assert.Equal(t, geasVersion(), v.Short, "the MCP server reports the same version")
	}
	code, _, stderr = runInProcess(t, "version", "extra")
	assert.Equal(t, ExitUsage, code, stderr)
	code, _, stderr = runInProcess(t, "gate", "--version")
	assert.Equal(t, ExitUsage, code, "--version is the root's flag: %s", stderr)
}

func TestShortVersion(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		v    versionInfo
		want string
	}{
		{versionInfo{Version: "v1.2.3", Revision: "0123456789abcdef", Modified: &yes}, "v1.2.3"},
		{versionInfo{Version: "(devel)"}, "devel"},
		{versionInfo{Version: "(devel)", Revision: "0123456789abcdef0123", Modified: &no}, "devel-0123456789ab"},
		{versionInfo{Version: "(devel)", Revision: "0123456789abcdef0123", Modified: &yes}, "devel-0123456789ab-dirty"},
		{versionInfo{Version: "(devel)", Revision: "abc"}, "devel-abc"},
	} {
		assert.Equal(t, tc.want, shortVersion(tc.v))
	}
	var b bytes.Buffer
	writeVersionText(&b, versionInfo{Version: "(devel)", Short: "devel-0123", Module: modulePath, Revision: "0123",
		Time: "2026-12-01T09:00:00Z", Modified: &yes, Go: "go1.26", Platform: "linux/amd64"})
	assert.Contains(t, b.String(), "revision  0123 (2026-12-01T09:00:00Z, modified)\n")
}

// TestOnlyUnstampedBuildsSayHowToGetAVersion: a build with a module version or a commit names
// it and says nothing more; one with neither says how to get a build that does.
func TestOnlyUnstampedBuildsSayHowToGetAVersion(t *testing.T) {
	modified := true
	for _, tc := range []struct {
		name string
		v    versionInfo
		note bool
	}{
		{"a release", versionInfo{Version: "v1.2.3", Module: modulePath}, false},
		{"a checkout with its commit", versionInfo{Version: "(devel)", Module: modulePath, Revision: "0123456789abcdef", Modified: &modified}, false},
		{"neither", versionInfo{Version: "(devel)", Module: modulePath}, true},
	} {
		tc.v.Note = unstampedNote(tc.v)
		var b bytes.Buffer
		writeVersionText(&b, tc.v)
		if tc.note {
			assert.Contains(t, b.String(), "  note      this build names no version or commit: install a release with `go install "+modulePath+"/cmd/geas@latest`", tc.name)
		} else {
			assert.Empty(t, tc.v.Note, tc.name)
			assert.NotContains(t, b.String(), "note", tc.name)
		}
	}
}
