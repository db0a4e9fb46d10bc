package tiers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/testresults"
)

// baselineRun is a run with what the cached base run is bound to: its task, base, rules and
// commands, and a .geas root in a temporary directory.
func baselineRun(t *testing.T) *Pass {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	c := &contract.Contract{EvalCommands: []contract.EvalCommand{
		{Run: "make build"},
		{Run: "go test -json ./...", Results: &contract.Results{Format: "go-test-json"}},
	}}
	return &Pass{
		env:  DefaultEnv(),
		in:   &Snapshot{Geas: root, TaskDir: "missions/m1/tasks/t1", Mission: "m1", Task: "t1", RulesSHA256: "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12", Contract: c},
		base: "1111111111111111111111111111111111111111",
	}
}

func samplePayload(r *Pass) *baselinePayload {
	return &baselinePayload{Version: baselineVersion, Task: "m1/t1", Base: r.base, RulesSHA256: r.in.RulesSHA256,
		Commands: []baselineCommand{{Command: "go test -json ./...", Results: "go-test-json", Passed: 2, Pass: []string{"p.TestA", "p.TestB"}}}}
}

func TestACachedBaseRunIsBelievedOnlyWithItsKeyAndBinding(t *testing.T) {
	key := []byte("k1")
	r := baselineRun(t)
	name := r.baselineName()
	require.NoError(t, writeBaseline(r.in.Geas, name, key, samplePayload(r)))

	// The honest control: read back with its key, bound to this task, base, rules and commands.
	p, err := readBaseline(r, name, key)
	require.NoError(t, err)
	assert.Equal(t, []string{"p.TestA", "p.TestB"}, p.Commands[0].Pass)

	// Another key: not believed.
	_, err = readBaseline(r, name, []byte("k2"))
	assert.ErrorContains(t, err, "not signed")

	// The payload edited (a passing test taken out), the MAC kept: not believed.
	path := filepath.Join(r.in.Geas.Name(), filepath.FromSlash(name))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f baselineFile
	require.NoError(t, json.Unmarshal(data, &f))
	f.Baseline = json.RawMessage(`{"version":1,"task":"m1/t1","base":"` + r.base + `","rules_sha256":"` + r.in.RulesSHA256 + `","duration_ms":1,"commands":[{"command":"go test -json ./...","results":"go-test-json","passed":1,"failed":0,"skipped":0,"pass":["p.TestA"]}]}`)
	forged, _ := json.Marshal(f)
	require.NoError(t, os.WriteFile(path, forged, 0o644))
	_, err = readBaseline(r, name, key)
	assert.ErrorContains(t, err, "not signed")

	// Genuine files replayed for another binding: another task, base, rules digest or command
	// list, each signed with the right key, are not believed.
	for what, edit := range map[string]func(p *baselinePayload){
		"task":     func(p *baselinePayload) { p.Task = "m1/t2" },
		"base":     func(p *baselinePayload) { p.Base = "2222222222222222222222222222222222222222" },
		"rules":    func(p *baselinePayload) { p.RulesSHA256 = "ff" },
		"commands": func(p *baselinePayload) { p.Commands[0].Command = "go test -json ./a" },
		"format":   func(p *baselinePayload) { p.Commands[0].Results = "tap" },
		"count":    func(p *baselinePayload) { p.Commands = nil },
		"version":  func(p *baselinePayload) { p.Version = 2 },
	} {
		p := samplePayload(r)
		edit(p)
		require.NoError(t, writeBaseline(r.in.Geas, name, key, p))
		_, err := readBaseline(r, name, key)
		assert.Error(t, err, what)
	}

	// A symlink to a genuine file, a directory, or a file past the bound: not read.
	require.NoError(t, writeBaseline(r.in.Geas, name+".real", key, samplePayload(r)))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(filepath.Base(path)+".real", path))
	_, err = readBaseline(r, name, key)
	assert.ErrorContains(t, err, "not a regular file")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	_, err = readBaseline(r, name, key)
	assert.ErrorContains(t, err, "not a regular file")
	require.NoError(t, os.Remove(path))
	big, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, big.Truncate(maxBaselineBytes+1))
	big.Close()
	_, err = readBaseline(r, name, key)
	assert.Error(t, err)
}

func TestABaseTestNotPassingAtTheHeadIsDropped(t *testing.T) {
	r := baselineRun(t)
	r.head = "3333333333333333333333333333333333333333"
	base := samplePayload(r)
	base.Commands[0].Pass = []string{"p.TestA", "p.TestB", "p.TestC"}
	head := func(names map[string]testresults.Outcome) {
		r.evalRuns = []EvalRun{{Command: "make build"}, {Command: "go test -json ./...", TestResults: &testresults.Summary{Names: names}}}
	}

	// The honest control: every base test passes, and a new one.
	head(map[string]testresults.Outcome{"p.TestA": "pass", "p.TestB": "pass", "p.TestC": "pass", "p.TestD": "pass"})
	c := dropped(r, base, "cached")
	assert.Equal(t, StatusPass, c.Status, c.Evidence)
	assert.Contains(t, c.Evidence, "the 3 tests that passed at the base")

	// Missing, skipped and failing at the head, each named.
	head(map[string]testresults.Outcome{"p.TestA": "pass", "p.TestB": "skip", "p.TestC": "fail", "p.TestD": "pass"})
	c = dropped(r, base, "cached")
	assert.Equal(t, StatusFail, c.Status)
	assert.Contains(t, c.Evidence, `2 of the 3 tests`)
	assert.Contains(t, c.Evidence, `"p.TestB" skipped`)
	assert.Contains(t, c.Evidence, `"p.TestC" failing`)
	head(map[string]testresults.Outcome{"p.TestA": "pass", "p.TestB": "pass", "p.testc": "pass", "p.TestC ": "pass"})
	c = dropped(r, base, "cached")
	assert.Equal(t, StatusFail, c.Status, "names compare exactly: a case or space variant is another test")
	assert.Contains(t, c.Evidence, `"p.TestC" missing`)

	// More than 20 dropped: 20 named, the rest counted.
	base.Commands[0].Pass = nil
	for i := range 25 {
		base.Commands[0].Pass = append(base.Commands[0].Pass, "p.T"+string(rune('a'+i)))
	}
	head(map[string]testresults.Outcome{})
	c = dropped(r, base, "cached")
	assert.Contains(t, c.Evidence, "and 5 more")
}
