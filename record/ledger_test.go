package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/vocab"
)

const ledgerTaskDir = "missions/m1/tasks/t1"

// ledgerTask is a task whose run gate-1 is recorded (its entry appended, the commit point) and
// nothing of what follows from it is written: the state a crash right after the commit leaves.
// The run is a fail that spent the last retry, so its plan holds every kind of write: gate_result,
// the first pin, the move reviewed -> escalated, the pending decision and three events.
func ledgerTask(t *testing.T) (*os.Root, string, *Plan) {
	t.Helper()
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll(ledgerTaskDir, 0o755))
	require.NoError(t, root.WriteFile(ledgerTaskDir+"/"+ContractFile, []byte(`{"task_id": "t1", "status": "reviewed", "retry_budget": 1}`+"\n"), 0o644))
	rec := New("t1", testNow)
	entry, err := rec.AppendHistory(HistoryEntry{RunID: "gate-1", Verdict: "fail", Causes: json.RawMessage(`[{"code":"eval_failed"}]`),
		RetryBudgetBefore: intp(1), RetryBudgetAfter: intp(0), RulesSHA256: "rules-1", StartedAt: Timestamp(testNow)}, testNow)
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, ledgerTaskDir+"/record.json"))
	result := []byte(`{"run_id":"gate-1","verdict":"fail","hash":"` + entry.Hash + `"}`)
	plan, err := PlanRun(PlanInput{Mission: "m1", Task: "t1", TaskDir: ledgerTaskDir, History: rec.History(), Pins: true, RulesSHA256: "rules-1",
		EscalationPolicy: "design-authority-review",
		Outcome: RunOutcome{Result: result, RunID: "gate-1", Verdict: "fail", GateProfile: "implementation_change",
			TierResults: json.RawMessage(`{"tier_0":{"status":"pass"}}`), RetryBudgetBefore: intp(1), RetryBudgetAfter: intp(0),
			Causes: json.RawMessage(`[{"code":"eval_failed"}]`), Transition: &Move{From: vocab.Reviewed, To: vocab.Escalated},
			Escalation: ".geas/" + PendingDecisionFile("m1", EscalationID("t1", "gate-1")), Hash: entry.Hash}}, testNow)
	require.NoError(t, err)
	return root, dir, plan
}

// observe is what a command that takes the task's lock sees of plan in the files.
func observe(t *testing.T, root *os.Root, plan *Plan) (*Record, Found) {
	t.Helper()
	rec, err := Load(root, plan.TaskDir+"/record.json")
	require.NoError(t, err)
	keys, err := TaskEventKeys(root, plan.Mission, plan.Task)
	require.NoError(t, err)
	f := Found{Keys: keys}
	if gr, ok := rec.GateResult(); !ok || !bytes.Equal(compactJSON(gr), compactJSON(plan.Result)) {
		f.ResultMissing = true
	}
	raw, err := root.ReadFile(plan.TaskDir + "/" + ContractFile)
	require.NoError(t, err)
	var k struct {
		Status vocab.State `json:"status"`
	}
	require.NoError(t, json.Unmarshal(raw, &k))
	f.Contract, f.Status = raw, k.Status
	if b, err := root.ReadFile(plan.TaskDir + "/" + PinnedFile); err == nil {
		var pin PinnedCopy
		f.Pinned = json.Unmarshal(b, &pin) == nil && pin.RulesSHA256 == plan.PinRules
	}
	return rec, f
}

// ledgerFor is the ledger of a command on the task at now; held is its lock.
func ledgerFor(root *os.Root, rec *Record, now time.Time, held func() error) *Ledger {
	return &Ledger{Geas: root, Record: rec, Held: held, Now: now, Rules: func(want string) (map[string]any, bool) {
		return map[string]any{"contract": map[string]any{"retry_budget": 1}}, want == "rules-1"
	}}
}

var eventTimestamp = regexp.MustCompile(`"timestamp":"[^"]*"`)

// geasFiles is every file under .geas with its content (event timestamps, which are the clock's,
// left out).
func geasFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = eventTimestamp.ReplaceAllString(string(b), `"timestamp":""`)
		return nil
	}))
	return files
}

func TestALedgerPlanAppliedTwiceWritesNothingMore(t *testing.T) {
	root, dir, plan := ledgerTask(t)
	rec, f := observe(t, root, plan)
	first := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
	require.NoError(t, first.Err())
	assert.Equal(t, []string{EventGateResult, EventTaskTransition, EventEscalation}, first.Logged)
	once := geasFiles(t, dir)
	// The control: the first apply wrote every part of the plan.
	assert.Contains(t, once[filepath.FromSlash(ledgerTaskDir+"/"+ContractFile)], `"status": "escalated"`)
	assert.Contains(t, once, filepath.FromSlash(ledgerTaskDir+"/"+PinnedFile))
	assert.Contains(t, once, filepath.FromSlash(PendingDecisionFile("m1", "esc-t1-gate-1")))
	assert.Contains(t, once[filepath.FromSlash(ledgerTaskDir+"/record.json")], `"gate_result"`)

	// Applied again, an hour later (so that any rewrite would show in a timestamp), as the next
	// command on the task does: nothing is written.
	rec, f = observe(t, root, plan)
	again := ledgerFor(root, rec, testNow.Add(time.Hour), nil).Apply(plan, f)
	require.NoError(t, again.Err())
	assert.Empty(t, again.Done, "a plan applied twice writes nothing the second time")
	assert.Equal(t, once, geasFiles(t, dir))
}

// TestACrashAtAnyWriteOfAPlanCompletesToTheSameFiles: a command that stops before any one of the
// plan's writes (its lock lost, as a crash leaves the files), followed by the next command on the
// task, leaves exactly the files of an uninterrupted apply.
func TestACrashAtAnyWriteOfAPlanCompletesToTheSameFiles(t *testing.T) {
	root, dir, plan := ledgerTask(t)
	writes := 0
	rec, f := observe(t, root, plan)
	require.NoError(t, ledgerFor(root, rec, testNow, func() error { writes++; return nil }).Apply(plan, f).Err())
	want := geasFiles(t, dir)
	require.Equal(t, 7, writes, "gate_result, the pin, the move, the decision and three events")

	for stop := 0; stop < writes; stop++ {
		root, dir, plan := ledgerTask(t)
		n := 0
		rec, f := observe(t, root, plan)
		cut := ledgerFor(root, rec, testNow, func() error {
			if n == stop {
				return fsutil.ErrLockLost
			}
			n++
			return nil
		}).Apply(plan, f)
		require.Len(t, cut.Failed, 1)
		require.True(t, errors.Is(cut.Err(), fsutil.ErrLockLost))
		if stop > 0 {
			assert.NotEqual(t, want, geasFiles(t, dir), "stopped before write %d: something is left to complete", stop+1)
		}

		rec, f = observe(t, root, plan)
		done := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
		require.NoError(t, done.Err())
		assert.Equal(t, want, geasFiles(t, dir), "stopped before write %d, then completed", stop+1)
	}
}

// TestAFailedMoveIsNotClaimedByItsEvents: the move of the contract's status fails, so neither
// the task_transition event nor the escalation (whose decision is not written) claims it; the
// gate_result event is logged. The next apply writes the rest.
func TestAFailedMoveIsNotClaimedByItsEvents(t *testing.T) {
	root, dir, plan := ledgerTask(t)
	rec, f := observe(t, root, plan)
	f.Contract = []byte(`not json`) // what SetContractStatus refuses: the move fails
	got := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
	require.Len(t, got.Failed, 1)
	assert.Equal(t, StepMove, got.Failed[0].Step)
	assert.Equal(t, []string{EventGateResult}, got.Logged)
	assert.NotContains(t, geasFiles(t, dir), filepath.FromSlash(PendingDecisionFile("m1", "esc-t1-gate-1")))

	rec, f = observe(t, root, plan)
	next := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
	require.NoError(t, next.Err())
	assert.Equal(t, []string{EventTaskTransition, EventEscalation}, next.Logged)
}

// TestAMoveOvertakenByAnAuthorityIsHistory: a task an authority moved on since the run (here
// escalated by hand before the completion) is not moved back, and no task_transition event claims
// the run's move; its gate_result and escalation are still written.
func TestAMoveOvertakenByAnAuthorityIsHistory(t *testing.T) {
	root, dir, plan := ledgerTask(t)
	rec, f := observe(t, root, plan)
	f.Status = vocab.Blocked
	got := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
	require.NoError(t, got.Err())
	assert.Equal(t, []string{EventGateResult, EventEscalation}, got.Logged)
	assert.Contains(t, geasFiles(t, dir)[filepath.FromSlash(ledgerTaskDir+"/"+ContractFile)], `"status": "reviewed"`, "the contract is not written")
}

// committable is a task with no run yet, and the record of its run gate-1 set in memory (the
// entry chained, gate_result set) with the run's plan: what Ledger.Commit is given.
func committable(t *testing.T) (*os.Root, string, *Record, *Plan) {
	t.Helper()
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll(ledgerTaskDir+"/gate-logs/gate-1", 0o755))
	require.NoError(t, root.WriteFile(ledgerTaskDir+"/"+ContractFile, []byte(`{"task_id": "t1", "status": "reviewed"}`+"\n"), 0o644))
	rec := New("t1", testNow)
	entry, err := rec.Chain(HistoryEntry{RunID: "gate-1", Verdict: "pass", Causes: json.RawMessage(`[]`), RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(3), StartedAt: Timestamp(testNow)})
	require.NoError(t, err)
	result := []byte(`{"run_id":"gate-1","verdict":"pass","hash":"` + entry.Hash + `"}`)
	require.NoError(t, rec.SetGateSections(result, []HistoryEntry{entry}, testNow))
	plan, err := PlanRun(PlanInput{Mission: "m1", Task: "t1", TaskDir: ledgerTaskDir, History: []HistoryEntry{entry},
		Outcome: RunOutcome{Result: result, RunID: "gate-1", Verdict: "pass", Transition: &Move{From: vocab.Reviewed, To: vocab.Verified}, Hash: entry.Hash}}, testNow)
	require.NoError(t, err)
	return root, dir, rec, plan
}

func TestACommitWithItsLockLostRecordsNothing(t *testing.T) {
	t.Run("control: held, the run is recorded and its plan applied", func(t *testing.T) {
		root, dir, rec, plan := committable(t)
		contract, _ := root.ReadFile(ledgerTaskDir + "/" + ContractFile)
		applied, err := ledgerFor(root, rec, testNow, func() error { return nil }).Commit(plan, nil, Found{Contract: contract, Status: vocab.Reviewed})
		require.NoError(t, err)
		require.NoError(t, applied.Err())
		files := geasFiles(t, dir)
		assert.Contains(t, files, filepath.FromSlash(ResultFile(ledgerTaskDir, "gate-1")))
		assert.Contains(t, files, filepath.FromSlash(ledgerTaskDir+"/"+HistoryFile))
		assert.Contains(t, files[filepath.FromSlash(ledgerTaskDir+"/"+ContractFile)], `"status": "verified"`)
		assert.Equal(t, []string{EventGateResult, EventTaskTransition}, applied.Logged)
	})
	t.Run("lost before the commit", func(t *testing.T) {
		root, dir, rec, plan := committable(t)
		before := geasFiles(t, dir)
		contract, _ := root.ReadFile(ledgerTaskDir + "/" + ContractFile)
		_, err := ledgerFor(root, rec, testNow, func() error { return fsutil.ErrLockLost }).Commit(plan, nil, Found{Contract: contract, Status: vocab.Reviewed})
		require.ErrorIs(t, err, fsutil.ErrLockLost)
		assert.Equal(t, before, geasFiles(t, dir), "nothing is written")
	})
}

// TestACommitRecordsTheRunItsPlanCarries: Commit sets the record's gate_result and history from
// the plan itself, validated before anything is written, so a result the record's schema refuses
// leaves every file as it was and the record in memory unchanged; the same plan with a valid
// result is recorded (the control).
func TestACommitRecordsTheRunItsPlanCarries(t *testing.T) {
	plan := func(t *testing.T, result string) (*os.Root, string, *Record, *Plan) {
		t.Helper()
		root, dir := openRoot(t)
		require.NoError(t, root.MkdirAll(ledgerTaskDir+"/gate-logs/gate-1", 0o755))
		rec := New("t1", testNow)
		entry, err := rec.Chain(HistoryEntry{RunID: "gate-1", Verdict: "pass", Causes: json.RawMessage(`[]`), RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(3), StartedAt: Timestamp(testNow)})
		require.NoError(t, err)
		p, err := PlanRun(PlanInput{Mission: "m1", Task: "t1", TaskDir: ledgerTaskDir, History: []HistoryEntry{entry},
			Outcome: RunOutcome{Result: []byte(result), RunID: "gate-1", Verdict: "pass", Hash: entry.Hash}}, testNow)
		require.NoError(t, err)
		return root, dir, rec, p
	}
	t.Run("control: a valid result is recorded", func(t *testing.T) {
		root, dir, rec, p := plan(t, `{"run_id":"gate-1","verdict":"pass"}`)
		applied, err := ledgerFor(root, rec, testNow, nil).Commit(p, nil, Found{})
		require.NoError(t, err)
		require.NoError(t, applied.Err())
		assert.True(t, rec.Recorded(p.Hash), "the run's entry is in the history file")
		files := geasFiles(t, dir)
		assert.Contains(t, files, filepath.FromSlash(ResultFile(ledgerTaskDir, "gate-1")))
		assert.Contains(t, files[filepath.FromSlash(ledgerTaskDir+"/"+RecordFile)], `"gate_result"`)
	})
	t.Run("a result the record refuses writes nothing", func(t *testing.T) {
		root, dir, rec, p := plan(t, `{"run_id":"gate-1","verdict":"maybe"}`)
		before := geasFiles(t, dir)
		inMemory, err := rec.Bytes()
		require.NoError(t, err)
		_, err = ledgerFor(root, rec, testNow, nil).Commit(p, nil, Found{})
		require.Error(t, err)
		assert.Equal(t, before, geasFiles(t, dir), "nothing is written")
		after, err := rec.Bytes()
		require.NoError(t, err)
		assert.Equal(t, string(inMemory), string(after), "the record in memory is unchanged")
		assert.Empty(t, rec.History(), "and holds no entry")
	})
}

// TestARevocationPlanIsAppliedOnce: a revoked verified task moves back to its gate state and the
// revocation and transition events are logged; applied again (as the completion does), nothing
// is written; a task found already moved gets only its missing events.
func TestARevocationPlanIsAppliedOnce(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll(ledgerTaskDir, 0o755))
	require.NoError(t, root.WriteFile(ledgerTaskDir+"/"+ContractFile, []byte(`{"task_id": "t1", "status": "verified"}`+"\n"), 0o644))
	rec := New("t1", testNow)
	entry, err := rec.AppendHistory(HistoryEntry{Kind: KindRevocation, RunID: "gate-2", Verdict: "fail", Causes: json.RawMessage(`[]`), StartedAt: Timestamp(testNow),
		Extra: map[string]json.RawMessage{"state": json.RawMessage(`"verified"`)}}, testNow)
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, ledgerTaskDir+"/record.json"))
	plan, err := PlanRevocation("m1", "t1", ledgerTaskDir, entry, vocab.Verified, vocab.Integrated)
	require.NoError(t, err)

	rec, f := observe(t, root, plan)
	first := ledgerFor(root, rec, testNow, nil).Apply(plan, f)
	require.NoError(t, first.Err())
	assert.True(t, first.Moved)
	assert.Equal(t, []string{EventRevocation, EventTaskTransition}, first.Logged)
	once := geasFiles(t, dir)
	assert.Contains(t, once[filepath.FromSlash(ledgerTaskDir+"/"+ContractFile)], `"status": "integrated"`)

	rec, f = observe(t, root, plan)
	again := ledgerFor(root, rec, testNow.Add(time.Hour), nil).Apply(plan, f)
	require.NoError(t, again.Err())
	assert.Empty(t, again.Done)
	assert.Equal(t, once, geasFiles(t, dir))

	// Moved before a crash, its events not logged: the events only.
	require.NoError(t, root.Remove(EventsFile))
	rec, f = observe(t, root, plan)
	rest := ledgerFor(root, rec, testNow.Add(time.Hour), nil).Apply(plan, f)
	require.NoError(t, rest.Err())
	assert.Equal(t, []string{EventRevocation, EventTaskTransition}, rest.Logged)
	assert.Equal(t, once, geasFiles(t, dir), "the contract is not written again")
}
