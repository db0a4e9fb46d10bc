package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/vocab"
)

// complete runs cobra's hidden __complete command in-process and returns the values offered
// (the lines before the ":directive" line).
func complete(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	return completeWith(t, "__complete", dir, args...)
}

// completeWith is complete through request, __complete or __completeNoDesc.
func completeWith(t *testing.T, request, dir string, args ...string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(t.Context(), append([]string{request, "-C", dir}, args...), strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	var values []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, ":") {
			break
		}
		values = append(values, line)
	}
	return values
}

// completionProject is a project whose tasks directory holds two tasks and every kind of entry
// that is not one: a symbolic link to a task, a bad name, a directory without a contract, a file,
// and a symbolic link out of .geas.
func completionProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tasks := filepath.Join(dir, ".geas", "missions", "m1", "tasks")
	for _, task := range []string{"t1", "t2", "t 4"} {
		require.NoError(t, os.MkdirAll(filepath.Join(tasks, task), 0o755))
		b, err := contract.Skeleton{TaskID: "t1", Profile: vocab.ArtifactOnly}.Build("contract.json")
		require.NoError(t, err)
		b = bytes.Replace(b, []byte(`"status": "drafted"`), []byte(`"status": "ready"`), 1)
		require.NoError(t, os.WriteFile(filepath.Join(tasks, task, "contract.json"), b, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(tasks, "t5"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tasks, "t6"), nil, 0o644))
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "contract.json"), []byte("{}"), 0o644))
	if err := os.Symlink("t1", filepath.Join(tasks, "t3")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	require.NoError(t, os.Symlink(outside, filepath.Join(tasks, "leak")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas", "missions", "m2", "tasks", "u1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "missions", "m2", "tasks", "u1", "contract.json"), []byte("{}"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, ".geas", "missions", "m3")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas", "state"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "state", "run.json"), []byte(`{"mission_id":"m1"}`), 0o644))
	return dir
}

// TestCompletionsAreRegisteredForCompletionRequestsOnly: both of cobra's completion requests get
// the completion functions, which Run registers for them alone (they cost every other command's
// start-up about 0.5 ms).
func TestCompletionsAreRegisteredForCompletionRequestsOnly(t *testing.T) {
	dir := completionProject(t)
	for _, request := range []string{"__complete", "__completeNoDesc"} {
		assert.Equal(t, []string{"t1", "t2"}, completeWith(t, request, dir, "gate", "--task", ""), request)
		assert.Equal(t, []string{"json", "junit"}, completeWith(t, request, dir, "gate", "--format", "j"), request)
	}
	root := newRootCmd(&globalOptions{})
	gate, _, err := root.Find([]string{"gate"})
	require.NoError(t, err)
	_, registered := gate.GetFlagCompletionFunc("task")
	assert.False(t, registered, "a command tree built for any other command has no completion functions")
}

// TestCompletionOffersTaskIDs: --task and --id offer the task ids a command would accept, from the
// mission's tasks directory only: no symlinked, badly named or contract-less entry, nothing from
// outside .geas, and only ids with the typed prefix.
func TestCompletionOffersTaskIDs(t *testing.T) {
	dir := completionProject(t)
	assert.Equal(t, []string{"t1", "t2"}, complete(t, dir, "gate", "--task", ""))
	assert.Equal(t, []string{"t1", "t2"}, complete(t, dir, "task", "transition", "--id", ""))
	assert.Equal(t, []string{"t2"}, complete(t, dir, "task", "show", "--task", "t2"))
	assert.Empty(t, complete(t, dir, "gate", "--task", "x"))
	assert.Equal(t, []string{"u1"}, complete(t, dir, "gate", "--mission", "m2", "--task", ""), "--mission picks the mission")
	assert.Empty(t, complete(t, dir, "gate", "--mission", "../m1", "--task", ""), "a bad mission id offers nothing")
	assert.Empty(t, complete(t, dir, "gate", "--mission", "m3", "--task", ""), "a symlinked mission offers nothing")
	assert.Empty(t, complete(t, t.TempDir(), "gate", "--task", ""), "no project: nothing")
}

func TestCompletionOffersMissionsStatesAndNames(t *testing.T) {
	dir := completionProject(t)
	assert.Equal(t, []string{"m1", "m2"}, complete(t, dir, "gate", "--mission", ""), "m3 is a symlink")
	assert.Equal(t, []string{"implementing", "blocked", "escalated", "cancelled"}, complete(t, dir, "task", "transition", "--id", "t1", "--to", ""),
		"the edges from t1's state (ready)")
	all := complete(t, dir, "task", "transition", "--to", "")
	assert.Contains(t, all, "passed")
	assert.NotContains(t, all, "verified", "only the gate moves a task to verified")
	assert.Equal(t, []string{"implementer", "reviewer", "tester", "authority"}, complete(t, dir, "evidence", "add", "--role", ""))
	assert.Equal(t, []string{"artifact_only"}, complete(t, dir, "task", "new", "--profile", "a"))
	schemas := complete(t, dir, "schema", "")
	assert.Contains(t, schemas, "task-contract")
	assert.Contains(t, schemas, "_defs")
	assert.Empty(t, complete(t, dir, "schema", "record", ""), "schema takes one NAME")
}

// TestCompletionOffersTheFormatsEachCommandAccepts: --format offers exactly what the command
// accepts: each offered format gets past the format check, and each format not offered is refused
// by it.
func TestCompletionOffersTheFormatsEachCommandAccepts(t *testing.T) {
	dir := t.TempDir()
	assert.Equal(t, []string{"text", "json", "junit", "github", "sarif"}, complete(t, dir, "gate", "--format", ""))
	assert.Equal(t, []string{"text", "json", "junit", "github", "sarif"}, complete(t, dir, "gate", "verify", "--format", ""))
	assert.Equal(t, []string{"text", "json"}, complete(t, dir, "task", "show", "--format", ""))
	assert.Equal(t, []string{"junit"}, complete(t, dir, "gate", "--format", "j"+"u"))
	for _, path := range [][]string{{"gate"}, {"gate", "verify"}, {"task", "show"}, {"schema"}, {"version"}, {"init"}} {
		offered := complete(t, dir, append(path, "--format", "")...)
		for _, f := range []string{"text", "json", "junit", "github", "sarif", "JSON"} {
			var out, errb bytes.Buffer
			args := append([]string{"-C", filepath.Join(dir, "nonexistent"), "--format", f}, path...)
			Run(t.Context(), args, strings.NewReader(""), &out, &errb)
			refused := strings.Contains(errb.String(), "--format")
			assert.Equal(t, !contains(offered, f), refused, "geas --format %s %v: offered %v, stderr %s", f, path, offered, errb.String())
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
