package tiers

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// testNow is the fixed clock of every test that stamps something.
var testNow = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

const (
	testMission = "m1"
	testTask    = "t1"
	testTaskDir = "missions/m1/tasks/t1" // relative to .geas
)

// ---------------------------------------------------------------------------------------------
// Fixture: a real project on disk, read by Gather and judged by Evaluate.

// fixture is a copy of testdata/example in a temporary directory, with the greeter sources the
// example task describes, and (optionally) a git repository holding them.
type fixture struct {
	t    *testing.T
	dir  string // absolute project root
	home string // HOME of git, outside the project
}

// newFixture makes the example task of testdata/example (task t1 of mission m1: add --verbose to
// the greeter) in a temporary directory, such that it passes the gate. Unlike the shared example it
// has no eval commands (tests that are about tier 1 add them: a process costs more than the rest
// of a run). With git, everything is committed on branch main with a fixed author and date. The
// project is copied from a template built once per test binary, so that a fixture costs a file copy
// rather than a handful of git processes.
func newFixture(t *testing.T, withGit bool) *fixture {
	t.Helper()
	tmpl := exampleTemplate(t)
	f := &fixture{t: t, dir: t.TempDir(), home: t.TempDir()}
	require.NoError(t, copyTree(tmpl, f.dir, withGit))
	return f
}

var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

// exampleFiles is the example project. It is written from here rather than copied from
// testdata/example so that these tests do not move when the shared example does.
var exampleFiles = map[string]string{
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

// changeFiles are the files of exampleFiles that the task's change commit adds.
var changeFiles = map[string]bool{"greeter/main.go": true, "README.md": true}

// exampleTemplate builds the template project once, committed to git. TestMain removes it.
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
		f := &fixture{t: t, dir: templateDir, home: templateDir + "-home"}
		// Two commits, so that the task is a real change (SPEC §5.1 empty_change): the base holds
		// the orchestration files, the head adds the work and pins the base in the contract.
		for name, content := range exampleFiles {
			if !changeFiles[name] {
				f.write(name, content)
			}
		}
		f.git("init", "-q", "--template=", "-b", "main")
		baseSHA := f.commit("base")
		for name := range changeFiles {
			f.write(name, exampleFiles[name])
		}
		f.contract(func(m map[string]any) { m["base_snapshot"] = baseSHA })
		f.commit("greeter")
		f.git("repack", "-adq") // fewer files to copy into each fixture
		f.git("prune-packed")
		built = true
	})
	require.NoError(t, templateErr)
	return templateDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if templateDir != "" {
		_ = os.RemoveAll(templateDir)
		_ = os.RemoveAll(templateDir + "-home")
	}
	os.Exit(code)
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

// path is an absolute path for a slash-separated path relative to the project root.
func (f *fixture) path(rel string) string { return filepath.Join(f.dir, filepath.FromSlash(rel)) }

// taskFile is the project-relative path of a file in the task directory.
func taskFile(name string) string { return ".geas/" + testTaskDir + "/" + name }

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	require.NoError(f.t, os.MkdirAll(filepath.Dir(f.path(rel)), 0o755))
	require.NoError(f.t, os.WriteFile(f.path(rel), []byte(content), 0o644))
}

func (f *fixture) remove(rel string) {
	f.t.Helper()
	require.NoError(f.t, os.Remove(f.path(rel)))
}

func (f *fixture) read(rel string) []byte {
	f.t.Helper()
	b, err := os.ReadFile(f.path(rel))
	require.NoError(f.t, err)
	return b
}

// editJSON rewrites a JSON object file through fn.
func (f *fixture) editJSON(rel string, fn func(m map[string]any)) {
	f.t.Helper()
	var m map[string]any
	require.NoError(f.t, json.Unmarshal(f.read(rel), &m))
	fn(m)
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(f.t, err)
	f.write(rel, string(b)+"\n")
}

func (f *fixture) contract(fn func(m map[string]any)) { f.editJSON(taskFile("contract.json"), fn) }

// record edits the task's record as one document: record.json with, at its root, the history of
// gate-history.jsonl as gate_history and integration.json as integration (the earlier layout,
// which tests edit by hand). The edited history and integration go back to their own files; a
// gate_history that is not an array stays in record.json, as a hand edit would leave it.
func (f *fixture) record(fn func(m map[string]any)) {
	f.t.Helper()
	rel := taskFile("record.json")
	var m map[string]any
	require.NoError(f.t, json.Unmarshal(f.read(rel), &m))
	histRel, integRel := taskFile(record.HistoryFile), taskFile(record.IntegrationFile)
	if b, err := os.ReadFile(f.path(histRel)); err == nil {
		hist := []any{}
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasSuffix(line, "\n") {
				continue // a torn last line
			}
			var e any
			require.NoError(f.t, json.Unmarshal([]byte(line), &e))
			hist = append(hist, e)
		}
		m["gate_history"] = hist
	}
	if b, err := os.ReadFile(f.path(integRel)); err == nil {
		var in any
		require.NoError(f.t, json.Unmarshal(b, &in))
		m["integration"] = in
	}
	fn(m)
	_ = os.Remove(f.path(histRel))
	_ = os.Remove(f.path(integRel))
	if h, ok := m["gate_history"].([]any); ok {
		var b strings.Builder
		for _, e := range h {
			line, err := json.Marshal(e)
			require.NoError(f.t, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		f.write(histRel, b.String())
		delete(m, "gate_history")
	}
	if in, ok := m["integration"]; ok {
		b, err := json.Marshal(in)
		require.NoError(f.t, err)
		f.write(integRel, string(b)+"\n")
		delete(m, "integration")
	}
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(f.t, err)
	f.write(rel, string(b)+"\n")
}
func (f *fixture) evidence(name string, fn func(m map[string]any)) {
	f.editJSON(taskFile("evidence/"+name), fn)
}

// writeEvidence writes an evidence file of the task from a Go value.
func (f *fixture) writeEvidence(name string, v map[string]any) {
	f.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(f.t, err)
	f.write(taskFile("evidence/"+name), string(b)+"\n")
}

// git runs git in the project with a fixed identity and clock, and returns its trimmed output.
func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.fsync=none", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = f.dir
	home := f.home
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=geas test", "GIT_AUTHOR_EMAIL=test@geas.invalid",
		"GIT_COMMITTER_NAME=geas test", "GIT_COMMITTER_EMAIL=test@geas.invalid",
		"GIT_AUTHOR_DATE=2026-11-01T09:00:00Z", "GIT_COMMITTER_DATE=2026-11-01T09:00:00Z",
	)
	out, err := cmd.CombinedOutput()
	require.NoError(f.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// commit commits every change and returns the new HEAD's full SHA.
func (f *fixture) commit(msg string) string {
	f.t.Helper()
	f.git("add", "-A")
	f.git("commit", "-q", "--allow-empty", "-m", msg)
	return f.git("rev-parse", "HEAD")
}

// open opens the project; it is closed when the test ends.
func (f *fixture) open() *project.Project {
	f.t.Helper()
	p, err := project.Open(f.dir)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = p.Close() })
	return p
}

// gather reads the task's inputs fresh from disk.
func (f *fixture) gather() *Input {
	f.t.Helper()
	return Gather(f.open(), testMission, testTask, testTaskDir)
}

// evaluate gathers and evaluates the task (a dry run unless opts says otherwise) and computes the
// budget, as `geas gate` does; it writes nothing.
func (f *fixture) evaluate(opts ...Options) (*Input, *Result, bool) {
	f.t.Helper()
	in := f.gather()
	o := Options{RunID: NextRunID(in.Record), DryRun: true, Now: testNow}
	if len(opts) > 0 {
		o = opts[0]
		if o.RunID == "" {
			o.RunID = NextRunID(in.Record)
		}
	}
	res, err := Evaluate(f.t.Context(), in, o)
	require.NoError(f.t, err)
	escalate := Budget(in, res)
	return in, res, escalate
}

// approve pins the task's current rules as an authority would (geas task approve).
func (f *fixture) approve() {
	f.t.Helper()
	_, err := Approve(f.gather(), "product-authority", "test", testNow)
	require.NoError(f.t, err)
}

// gate is one full, writing gate run: evaluate, budget, apply.
func (f *fixture) gate() *Result {
	f.t.Helper()
	in, res, escalate := f.evaluate(Options{DryRun: false, Now: testNow})
	require.NoError(f.t, Apply(in, res, escalate, testNow))
	return res
}

// ---------------------------------------------------------------------------------------------
// Unit runs: a run over an in-memory input, for one tier part or detector at a time.

// unitContract is an implementation_change contract built by the software-engineer and reviewed by
// the qa-engineer.
func unitContract() *contract.Contract {
	return &contract.Contract{
		TaskID: testTask, Status: "integrated", RiskLevel: "normal", GateProfile: vocab.ImplementationChange,
		RetryBudget: 3,
		Routing: contract.Routing{
			PrimaryWorkerType:     "software-engineer",
			RequiredReviewerTypes: []string{"qa-engineer"},
		},
	}
}

// unitProject is a temporary project (with an empty .geas) that a unit run reads files from.
type unitProject struct {
	t   *testing.T
	dir string
	p   *project.Project
}

func newUnitProject(t *testing.T) *unitProject {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas", filepath.FromSlash(testTaskDir)), 0o755))
	p, err := project.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return &unitProject{t: t, dir: dir, p: p}
}

func (u *unitProject) write(rel, content string) {
	u.t.Helper()
	full := filepath.Join(u.dir, filepath.FromSlash(rel))
	require.NoError(u.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(u.t, os.WriteFile(full, []byte(content), 0o644))
}

// run returns a run of contract c over the project with the given record and evidence, as
// Evaluate would set it up, without running any tier.
func (u *unitProject) run(c *contract.Contract, rec *record.Record, ev ...*evidence.Evidence) *run {
	u.t.Helper()
	if rec == nil {
		rec = unitRecord(u.t, nil)
	}
	in := &Input{
		ProjectDir: u.p.Dir, Root: u.p.Root, Geas: u.p.Geas, Mission: testMission, Task: testTask,
		TaskDir: testTaskDir, Contract: c, Record: rec, Evidence: ev, Policy: DefaultPolicy(),
	}
	// Gather reads the debt register before tier 1; so does a unit run, when it is created.
	in.DebtData, in.DebtErr = fsutil.ReadLimited(u.p.Geas, debtRegisterPath(testMission), 0)
	r := &run{in: in, opts: Options{Now: testNow}, metrics: map[string]float64{}}
	r.known = evidence.KnownTypes(append([]string{c.Routing.PrimaryWorkerType}, c.Routing.RequiredReviewerTypes...)...)
	return r
}

// unitRecord is a valid record.json with the given sections.
func unitRecord(t *testing.T, sections map[string]any) *record.Record {
	t.Helper()
	m := map[string]any{"version": "1.0", "task_id": testTask, "created_at": "2026-11-01T09:00:00Z"}
	for k, v := range sections {
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	rec, err := record.Parse("record.json", b)
	require.NoError(t, err)
	return rec
}

// selfCheck is a self_check section with the given confidence and extra fields.
func selfCheck(confidence int, extra map[string]any) map[string]any {
	m := map[string]any{"confidence": confidence, "known_risks": []string{}, "untested_paths": []string{}, "summary": "done"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// ev is an evidence file of agent with role and provider (provider "" leaves it unknown).
func ev(name, agent string, role vocab.Role, provider string) *evidence.Evidence {
	return &evidence.Evidence{Name: name, Version: "1.0", Agent: agent, TaskID: testTask, Role: role, Summary: "s", ProviderID: provider}
}

// builder is the software-engineer's own evidence.
func builder() *evidence.Evidence {
	e := ev("software-engineer.json", "software-engineer", vocab.Implementer, "provider-a")
	e.FilesChanged = []string{"greeter/main.go", "README.md"}
	return e
}

// qa is the qa-engineer's evidence (a tester on another provider).
func qa() *evidence.Evidence {
	return ev("qa-engineer.json", "qa-engineer", vocab.Tester, "provider-b")
}

// design is the design-authority's evidence (a reviewer on a third provider).
func design() *evidence.Evidence {
	return ev("design-authority.json", "design-authority", vocab.Reviewer, "provider-c")
}

func boolp(b bool) *bool        { return &b }
func floatp(f float64) *float64 { return &f }
func intp(n int) *int           { return &n }

// findCheck returns the check named name; it fails the test when there is none.
func findCheck(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	require.Failf(t, "no such check", "no check %q in %v", name, checkNames(checks))
	return Check{}
}

// hasCheck reports whether a check named name exists.
func hasCheck(checks []Check, name string) bool {
	for _, c := range checks {
		if c.Name == name {
			return true
		}
	}
	return false
}

func checkNames(checks []Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.Name + "=" + string(c.Status)
	}
	return out
}

func causeCodes(causes []Cause) []vocab.CauseCode {
	out := []vocab.CauseCode{}
	for _, c := range causes {
		out = append(out, c.Code)
	}
	return out
}

// assertPass asserts that a result is a pass, showing its causes when it is not.
func assertPass(t *testing.T, res *Result) {
	t.Helper()
	assert.True(t, res.Verdict.IsPass(), "verdict %s, causes %+v", res.Verdict, res.Causes)
}

// assertNotPass asserts that a result is anything but a pass, with the given verdict and a cause
// of the given code.
func assertNotPass(t *testing.T, res *Result, verdict vocab.Verdict, code vocab.CauseCode) {
	t.Helper()
	assert.False(t, res.Verdict.IsPass(), "a pass: %+v", res.Checks)
	assert.Equal(t, verdict, res.Verdict, "causes %+v", res.Causes)
	if code != "" {
		assert.Contains(t, causeCodes(res.Causes), code)
	}
}
