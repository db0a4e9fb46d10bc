// Package testfixture is the test fixture that the tests of tiers and gate share: the example
// task of testdata/example (task t1 of mission m1: add --verbose to the greeter) as a real project
// on disk, optionally in a git repository, and the hand edits tests make to it (files, JSON
// documents, the task's record and gate history). It never calls tiers: each package's tests add
// their own runs (Gather, Evaluate, Apply, or gate's commands) on top.
//
// It is for tests only: nothing but _test.go files imports it (TestImportRules in internal/layout
// fails otherwise), so it is never linked into geas. It stands on record's floor and imports no
// package above it: record for the names of the task's files and for EntryHash, the one definition
// of a history entry's hash, which RewriteHistory needs to forge a history as a keyless writer can.
package testfixture

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// Now is the fixed clock of every test that stamps something.
var Now = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// The example task.
const (
	Mission = "m1"
	Task    = "t1"
	TaskDir = "missions/m1/tasks/t1" // relative to .geas
)

// Fixture is a copy of the example project in a temporary directory, with the greeter sources the
// example task describes, and (optionally) a git repository holding them.
type Fixture struct {
	T    *testing.T
	Dir  string // absolute project root
	Home string // HOME of git, outside the project
}

// New makes the example task (task t1 of mission m1: add --verbose to the greeter) in a temporary
// directory, such that it passes the gate. Unlike the shared example of testdata/example it has no
// eval commands (tests that are about tier 1 add them: a process costs more than the rest of a
// run). With git, everything is committed on branch main with a fixed author and date. The project
// is copied from a template built once per test binary, so that a fixture costs a file copy rather
// than a handful of git processes; the test binary's TestMain calls RemoveTemplate.
func New(t *testing.T, withGit bool) *Fixture {
	t.Helper()
	tmpl := exampleTemplate(t)
	f := &Fixture{T: t, Dir: t.TempDir(), Home: t.TempDir()}
	require.NoError(t, copyTree(tmpl, f.Dir, withGit))
	return f
}

var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

// ExampleFiles is the example project. It is written from here rather than copied from
// testdata/example so that these tests do not move when the shared example does.
var ExampleFiles = map[string]string{
	".geas/state/run.json": `{"mission_id": "m1"}`,
	".geas/missions/m1/evolution/debt-register.json": `{
  "version": "1.0", "artifact_type": "debt_register", "artifact_id": "debt-m1",
  "producer_type": "design-authority", "scope": "mission", "items": []
}`,
	".geas/missions/m1/tasks/t1/contract.json": `{
  "version": "1.0",
  "artifact_type": "task_contract",
  "artifact_id": "tc-t1",
  "producer_type": "orchestration-authority",
  "created_at": "2026-11-01T09:00:00Z",
  "task_id": "t1",
  "title": "Add a --verbose flag to the greeter",
  "goal": "The greeter prints its configuration when --verbose is given",
  "task_kind": "implementation",
  "risk_level": "normal",
  "gate_profile": "implementation_change",
  "vote_round_policy": "auto",
  "acceptance_criteria": [
    "AC1 --verbose prints the configuration",
    {
      "id": "readme",
      "criterion": "The README documents --verbose",
      "check": { "type": "regex_match", "artifact": "README.md", "pattern": "--verbose" }
    }
  ],
  "eval_commands": [],
  "rubric": {
    "dimensions": [
      { "name": "core_interaction", "threshold": 3 },
      { "name": "code_quality", "threshold": 4 }
    ]
  },
  "retry_budget": 3,
  "scope": { "surfaces": ["greeter/", "README.md"] },
  "routing": {
    "primary_worker_type": "software-engineer",
    "required_reviewer_types": ["design-authority", "qa-engineer"]
  },
  "base_snapshot": "HEAD",
  "status": "integrated"
}`,
	".geas/missions/m1/tasks/t1/record.json": `{
  "version": "1.0",
  "task_id": "t1",
  "created_at": "2026-11-01T09:00:00Z",
  "implementation_contract": {
    "planned_actions": ["Add the flag", "Print the configuration"],
    "non_goals": [],
    "status": "approved",
    "known_risks": []
  },
  "self_check": {
    "confidence": 4,
    "known_risks": [],
    "untested_paths": [],
    "summary": "Flag added and documented"
  },
  "integration": { "status": "merged", "branch": "main" }
}`,
	".geas/missions/m1/tasks/t1/evidence/qa-engineer.json": `{
  "version": "1.0",
  "agent": "qa-engineer",
  "task_id": "t1",
  "role": "tester",
  "summary": "Ran the greeter with and without --verbose",
  "verdict": "pass",
  "criteria_results": [
    { "criterion": "AC1", "passed": true, "details": "prints name and greeting" }
  ],
  "rubric_scores": [ { "dimension": "core_interaction", "score": 4 } ],
  "provider_id": "provider-b"
}`,
	".geas/missions/m1/tasks/t1/evidence/software-engineer.json": `{
  "version": "1.0",
  "agent": "software-engineer",
  "task_id": "t1",
  "role": "implementer",
  "summary": "Added --verbose and documented it",
  "files_changed": ["greeter/main.go", "README.md"],
  "provider_id": "provider-a"
}`,
	".geas/missions/m1/tasks/t1/evidence/design-authority.json": `{
  "version": "1.0",
  "agent": "design-authority",
  "task_id": "t1",
  "role": "reviewer",
  "summary": "Small, well-placed change",
  "verdict": "approved",
  "concerns": [],
  "rubric_scores": [ { "dimension": "code_quality", "score": 4 } ],
  "provider_id": "provider-c"
}`,
	"greeter/main.go": "package main\n\nfunc main() {}\n",
	"README.md":       "# greeter\n\nRun with --verbose to print the configuration.\n",
}

// changeFiles are the files of ExampleFiles that the task's change commit adds.
var changeFiles = map[string]bool{"greeter/main.go": true, "README.md": true}

// exampleTemplate builds the template project once, committed to git. RemoveTemplate removes it.
func exampleTemplate(t *testing.T) string {
	t.Helper()
	templateOnce.Do(func() {
		templateDir, templateErr = os.MkdirTemp("", "geas-tiers-example-")
		if templateErr != nil {
			return
		}
		built := false
		defer func() { // a failed require in here ends the test, not the Once: the others must know
			if !built && templateErr == nil {
				templateErr = errors.New("building the example template failed: see the first test that used it")
			}
		}()
		f := &Fixture{T: t, Dir: templateDir, Home: templateDir + "-home"}
		// Two commits, so that the task is a real change (SPEC §5.1 empty_change): the base holds
		// the orchestration files, the head adds the work and pins the base in the contract.
		for name, content := range ExampleFiles {
			if !changeFiles[name] {
				f.Write(name, content)
			}
		}
		f.Git("init", "-q", "--template=", "-b", "main")
		baseSHA := f.Commit("base")
		for name := range changeFiles {
			f.Write(name, ExampleFiles[name])
		}
		f.Contract(func(m map[string]any) { m["base_snapshot"] = baseSHA })
		f.Commit("greeter")
		f.Git("repack", "-adq") // fewer files to copy into each fixture
		f.Git("prune-packed")
		built = true
	})
	require.NoError(t, templateErr)
	return templateDir
}

// RemoveTemplate removes the template project, once the test binary's tests have run (its
// TestMain calls it).
func RemoveTemplate() {
	if templateDir != "" {
		_ = os.RemoveAll(templateDir)
		_ = os.RemoveAll(templateDir + "-home")
	}
}

// copyTree copies the directory src into dst (which exists); .git only when withGit.
func copyTree(src, dst string, withGit bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == ".git" && !withGit {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Path is an absolute path for a slash-separated path relative to the project root.
func (f *Fixture) Path(rel string) string { return filepath.Join(f.Dir, filepath.FromSlash(rel)) }

// TaskFile is the project-relative path of a file in the task directory.
func TaskFile(name string) string { return ".geas/" + TaskDir + "/" + name }

// Write writes a file of the project (rel is slash-separated, relative to the root).
func (f *Fixture) Write(rel, content string) {
	f.T.Helper()
	require.NoError(f.T, os.MkdirAll(filepath.Dir(f.Path(rel)), 0o755))
	require.NoError(f.T, os.WriteFile(f.Path(rel), []byte(content), 0o644))
}

// Remove removes a file of the project.
func (f *Fixture) Remove(rel string) {
	f.T.Helper()
	require.NoError(f.T, os.Remove(f.Path(rel)))
}

// Read reads a file of the project.
func (f *Fixture) Read(rel string) []byte {
	f.T.Helper()
	b, err := os.ReadFile(f.Path(rel))
	require.NoError(f.T, err)
	return b
}

// EditJSON rewrites a JSON object file through fn.
func (f *Fixture) EditJSON(rel string, fn func(m map[string]any)) {
	f.T.Helper()
	var m map[string]any
	require.NoError(f.T, json.Unmarshal(f.Read(rel), &m))
	fn(m)
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(f.T, err)
	f.Write(rel, string(b)+"\n")
}

// Contract edits the task's contract.json.
func (f *Fixture) Contract(fn func(m map[string]any)) { f.EditJSON(TaskFile("contract.json"), fn) }

// Record edits the task's record as one document: record.json with, at its root, the history of
// gate-history.jsonl as gate_history and integration.json as integration (the earlier layout,
// which tests edit by hand). The edited history and integration go back to their own files; a
// gate_history that is not an array stays in record.json, as a hand edit would leave it.
func (f *Fixture) Record(fn func(m map[string]any)) {
	f.T.Helper()
	rel := TaskFile("record.json")
	var m map[string]any
	require.NoError(f.T, json.Unmarshal(f.Read(rel), &m))
	histRel, integRel := TaskFile(record.HistoryFile), TaskFile(record.IntegrationFile)
	if b, err := os.ReadFile(f.Path(histRel)); err == nil {
		hist := []any{}
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasSuffix(line, "\n") {
				continue // a torn last line
			}
			var e any
			require.NoError(f.T, json.Unmarshal([]byte(line), &e))
			hist = append(hist, e)
		}
		m["gate_history"] = hist
	}
	if b, err := os.ReadFile(f.Path(integRel)); err == nil {
		var in any
		require.NoError(f.T, json.Unmarshal(b, &in))
		m["integration"] = in
	}
	fn(m)
	_ = os.Remove(f.Path(histRel))
	_ = os.Remove(f.Path(integRel))
	if h, ok := m["gate_history"].([]any); ok {
		var b strings.Builder
		for _, e := range h {
			line, err := json.Marshal(e)
			require.NoError(f.T, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		f.Write(histRel, b.String())
		delete(m, "gate_history")
	}
	if in, ok := m["integration"]; ok {
		b, err := json.Marshal(in)
		require.NoError(f.T, err)
		f.Write(integRel, string(b)+"\n")
		delete(m, "integration")
	}
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(f.T, err)
	f.Write(rel, string(b)+"\n")
}

// Evidence edits the task's evidence file name.
func (f *Fixture) Evidence(name string, fn func(m map[string]any)) {
	f.EditJSON(TaskFile("evidence/"+name), fn)
}

// WriteEvidence writes an evidence file of the task from a Go value.
func (f *Fixture) WriteEvidence(name string, v map[string]any) {
	f.T.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(f.T, err)
	f.Write(TaskFile("evidence/"+name), string(b)+"\n")
}

// Git runs git in the project with a fixed identity and clock, and returns its trimmed output.
func (f *Fixture) Git(args ...string) string {
	f.T.Helper()
	// Through internal/proc, the one package that starts processes (STYLE.md).
	res := proc.Run(context.Background(), proc.Spec{
		Label: "git " + strings.Join(args, " "),
		Argv:  append([]string{"git", "-c", "core.fsync=none", "-c", "gc.auto=0"}, args...),
		Dir:   f.Dir,
		Env: map[string]string{
			"HOME": f.Home, "XDG_CONFIG_HOME": f.Home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
			"GIT_AUTHOR_NAME": "geas test", "GIT_AUTHOR_EMAIL": "test@geas.invalid",
			"GIT_COMMITTER_NAME": "geas test", "GIT_COMMITTER_EMAIL": "test@geas.invalid",
			"GIT_AUTHOR_DATE": "2026-11-01T09:00:00Z", "GIT_COMMITTER_DATE": "2026-11-01T09:00:00Z",
		},
		Timeout:   10 * time.Minute, // a bound on a stuck git, not a measure of speed
		TailBytes: 1 << 20,
	})
	require.Equal(f.T, proc.StatusPass, res.Status, "git %v: %s: %s", args, res.Error, res.OutputTail)
	return strings.TrimSpace(res.OutputTail)
}

// Commit commits every change and returns the new HEAD's full SHA.
func (f *Fixture) Commit(msg string) string {
	f.T.Helper()
	f.Git("add", "-A")
	f.Git("commit", "-q", "--allow-empty", "-m", msg)
	return f.Git("rev-parse", "HEAD")
}

// Open opens the project; it is closed when the test ends.
func (f *Fixture) Open() *project.Project {
	f.T.Helper()
	p, err := project.Open(f.Dir)
	require.NoError(f.T, err)
	f.T.Cleanup(func() { _ = p.Close() })
	return p
}

// History returns the task's gate_history of a record edited with Record, as generic JSON.
func History(m map[string]any) []any { return m["gate_history"].([]any) }

// RewriteHistory replaces the task's gate_history with the result of fn, re-chaining every entry
// with correct hashes (as someone who can write record.json, but has no key, can), and points
// gate_result at the new head. The signature of each entry is whatever fn left.
func (f *Fixture) RewriteHistory(fn func(h []record.HistoryEntry) []record.HistoryEntry) {
	f.T.Helper()
	p := f.Open()
	rec, err := record.Load(p.Geas, TaskDir+"/record.json")
	require.NoError(f.T, err)
	hist := fn(rec.History())
	prev := ""
	for i := range hist {
		hist[i].PrevHash = prev
		hist[i].Hash, err = record.EntryHash(hist[i])
		require.NoError(f.T, err)
		prev = hist[i].Hash
	}
	raw, err := json.Marshal(hist)
	require.NoError(f.T, err)
	var entries []any
	require.NoError(f.T, json.Unmarshal(raw, &entries))
	f.Record(func(m map[string]any) {
		m["gate_history"] = entries
		if gr, ok := m["gate_result"].(map[string]any); ok {
			gr["hash"] = prev
		}
	})
}

// Events reads the event types of .geas/state/events.jsonl.
func (f *Fixture) Events() []string {
	f.T.Helper()
	b, err := os.ReadFile(f.Path(".geas/state/events.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(f.T, err)
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct {
			EventType string `json:"event_type"`
			Agent     string `json:"agent"`
		}
		require.NoError(f.T, json.Unmarshal([]byte(line), &ev))
		assert.Equal(f.T, "geas-gate", ev.Agent)
		types = append(types, ev.EventType)
	}
	return types
}

// Status is the status of the task's contract.json.
func (f *Fixture) Status() string {
	f.T.Helper()
	var c struct {
		Status string `json:"status"`
	}
	require.NoError(f.T, json.Unmarshal(f.Read(TaskFile("contract.json")), &c))
	return c.Status
}
