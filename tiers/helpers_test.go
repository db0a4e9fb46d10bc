package tiers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// testNow is the fixed clock of every test that stamps something.
var testNow = testfixture.Now

const (
	testMission = testfixture.Mission
	testTask    = testfixture.Task
	testTaskDir = testfixture.TaskDir // relative to .geas
)

// ---------------------------------------------------------------------------------------------
// Fixture: a real project on disk, read by Gather and judged by Evaluate.

// fixture is the example project of internal/testfixture (task t1 of mission m1, passing the gate),
// with the runs of tiers on top: gather, evaluate, gate. The lower-case methods below are
// testfixture's, so that the tests here read as they did when the fixture lived in this file.
type fixture struct {
	*testfixture.Fixture
	t   *testing.T
	dir string // absolute project root
}

// newFixture makes the example task in a temporary directory (testfixture.New), with a git
// repository when withGit.
func newFixture(t *testing.T, withGit bool) *fixture {
	t.Helper()
	f := testfixture.New(t, withGit)
	return &fixture{Fixture: f, t: t, dir: f.Dir}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testfixture.RemoveTemplate()
	os.Exit(code)
}

func (f *fixture) path(rel string) string { return f.Path(rel) }
func taskFile(name string) string         { return testfixture.TaskFile(name) }
func history(m map[string]any) []any      { return testfixture.History(m) }

func (f *fixture) write(rel, content string)        { f.t.Helper(); f.Write(rel, content) }
func (f *fixture) remove(rel string)                { f.t.Helper(); f.Remove(rel) }
func (f *fixture) read(rel string) []byte           { f.t.Helper(); return f.Read(rel) }
func (f *fixture) contract(fn func(map[string]any)) { f.t.Helper(); f.Contract(fn) }
func (f *fixture) record(fn func(map[string]any))   { f.t.Helper(); f.Record(fn) }
func (f *fixture) evidence(name string, fn func(map[string]any)) {
	f.t.Helper()
	f.Evidence(name, fn)
}
func (f *fixture) writeEvidence(name string, v map[string]any) {
	f.t.Helper()
	f.WriteEvidence(name, v)
}
func (f *fixture) git(args ...string) string { f.t.Helper(); return f.Git(args...) }
func (f *fixture) commit(msg string) string  { f.t.Helper(); return f.Commit(msg) }
func (f *fixture) open() *project.Project    { f.t.Helper(); return f.Open() }
func (f *fixture) events() []string          { f.t.Helper(); return f.Events() }
func (f *fixture) status() string            { f.t.Helper(); return f.Status() }
func (f *fixture) rewriteHistory(fn func([]record.HistoryEntry) []record.HistoryEntry) {
	f.t.Helper()
	f.RewriteHistory(fn)
}

// gather reads the task's inputs fresh from disk.
func (f *fixture) gather() *Snapshot {
	f.t.Helper()
	return Gather(f.open(), testMission, testTask, testTaskDir)
}

// evaluate gathers and evaluates the task (a dry run unless opts says otherwise) and computes the
// budget, as `geas gate` does; it writes nothing.
func (f *fixture) evaluate(opts ...Options) (*Snapshot, *Result, bool) {
	f.t.Helper()
	in := f.gather()
	o := Options{RunID: NextRunID(in.Record), DryRun: true, Now: testNow}
	if len(opts) > 0 {
		o = opts[0]
		if o.RunID == "" {
			o.RunID = NextRunID(in.Record)
		}
	}
	res, err := Evaluate(f.t.Context(), in, DefaultEnv(), o)
	require.NoError(f.t, err)
	escalate := Budget(in, res)
	return in, res, escalate
}

// approve pins the task's current rules as an authority would (geas task approve).
func (f *fixture) approve() {
	f.t.Helper()
	in := f.gather()
	require.NotNil(f.t, in.Rules, "rules: %v", in.RulesErr)
	entry, err := in.Record.AppendHistory(record.Approval("product-authority", "test", in.RulesSHA256, testNow), testNow)
	require.NoError(f.t, err)
	require.NoError(f.t, in.Record.Write(in.Geas, in.TaskDir+"/"+record.RecordFile))
	require.Equal(f.t, record.KindApproval, entry.Kind)
	require.NoError(f.t, record.WritePinned(in.Geas, in.TaskDir, record.PinnedCopy{RulesSHA256: in.RulesSHA256, PinnedBy: "approval by product-authority", PinnedAt: record.Timestamp(testNow), Rules: in.Rules}))
}

// gate is one full, writing gate run: evaluate, budget, apply.
func (f *fixture) gate() *Result {
	f.t.Helper()
	in, res, escalate := f.evaluate(Options{DryRun: false, Now: testNow})
	require.NoError(f.t, Apply(in, res, escalate, nil, testNow))
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
func (u *unitProject) run(c *contract.Contract, rec *record.Record, ev ...*evidence.Evidence) *Pass {
	u.t.Helper()
	if rec == nil {
		rec = unitRecord(u.t, nil)
	}
	in := withFacts(&Snapshot{
		ProjectDir: u.p.Dir, Root: u.p.Root, Geas: u.p.Geas, Mission: testMission, Task: testTask,
		TaskDir: testTaskDir, Contract: c, Record: rec, Evidence: ev, Policy: policy.Default(),
	})
	// Gather reads the debt register before tier 1; so does a unit run, when it is created.
	in.DebtData, in.DebtErr = fsutil.ReadLimited(u.p.Geas, debtRegisterPath(testMission), 0)
	r := &Pass{in: in, env: DefaultEnv(), opts: Options{Now: testNow}, metrics: map[string]float64{}}
	r.judges = judgesOf(c, ev)
	r.paths = projectPathsIn(in, nil)
	r.workDir, r.workRoot = in.ProjectDir, in.Root
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

// withFacts sets the facts of in's record, as Gather does for the record it reads.
func withFacts(in *Snapshot) *Snapshot {
	if in.Record != nil {
		in.Facts = record.FactsOf(in.Record, record.SigningKey())
		in.historyBytes = historySectionBytes(in.Facts)
	}
	return in
}
