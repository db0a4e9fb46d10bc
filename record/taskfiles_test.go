package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
)

// writeRun appends one chained gate run to r, with gate_result naming it, and writes the task's
// files; it returns the entry.
func writeRun(t *testing.T, root *os.Root, r *Record, runID, verdict string) HistoryEntry {
	t.Helper()
	e, err := r.Chain(HistoryEntry{Kind: KindGateRun, RunID: runID, Verdict: verdict, RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(3)})
	require.NoError(t, err)
	res, _ := json.Marshal(map[string]any{"run_id": runID, "verdict": verdict, "hash": e.Hash})
	require.NoError(t, r.SetGateSections(res, append(r.History(), e), testNow))
	require.NoError(t, r.Write(root, "missions/m/tasks/t1/record.json"))
	return e
}

func TestTheHistoryIsAppendedBesideTheRecord(t *testing.T) {
	root, dir := openRoot(t)
	r := New("t1", testNow)
	e1 := writeRun(t, root, r, "gate-1", "fail")
	e2 := writeRun(t, root, r, "gate-2", "pass")
	task := filepath.Join(dir, "missions", "m", "tasks", "t1")
	lines, err := os.ReadFile(filepath.Join(task, HistoryFile))
	require.NoError(t, err)
	l1, _ := json.Marshal(e1)
	l2, _ := json.Marshal(e2)
	assert.Equal(t, string(l1)+"\n"+string(l2)+"\n", string(lines), "one entry a line, as HistoryEntry marshals it")
	rec, err := os.ReadFile(filepath.Join(task, "record.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(rec), "gate_history")
	require.NoError(t, schemas.Validate(schemas.Record, "record.json", rec))

	back, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.Equal(t, []HistoryEntry{e1, e2}, back.History())
	assert.True(t, back.Recorded(e2.Hash))
	assert.False(t, back.Recorded("nope"))
	require.NoError(t, VerifyChain(back.History()))
}

func TestATornLastLineIsIgnoredAndCut(t *testing.T) {
	root, dir := openRoot(t)
	r := New("t1", testNow)
	e1 := writeRun(t, root, r, "gate-1", "fail")
	hist := filepath.Join(dir, "missions", "m", "tasks", "t1", HistoryFile)
	whole, err := os.ReadFile(hist)
	require.NoError(t, err)
	for _, torn := range []string{`{"kind":"gate_run","run_id":"gate-2","verd`, `{}`, `x`, `{"prev_hash":"","hash":"h"}`} {
		require.NoError(t, os.WriteFile(hist, append(append([]byte{}, whole...), torn...), 0o644))
		back, err := Load(root, "missions/m/tasks/t1/record.json")
		require.NoError(t, err, "torn %q", torn)
		assert.Equal(t, []HistoryEntry{e1}, back.History(), "a last line without a newline is not an entry: %q", torn)
		assert.True(t, back.HistoryTorn())
		require.NoError(t, back.CutTornHistory(root, "missions/m/tasks/t1/record.json"))
		got, _ := os.ReadFile(hist)
		assert.Equal(t, string(whole), string(got))
	}
	// An append over a torn line cuts it first.
	require.NoError(t, os.WriteFile(hist, append(append([]byte{}, whole...), `{"kind":`...), 0o644))
	back, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	e2 := writeRun(t, root, back, "gate-2", "fail")
	again, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.Equal(t, []HistoryEntry{e1, e2}, again.History())
	assert.False(t, again.HistoryTorn())

	// A malformed line that is followed by another is not a crash: the history is invalid.
	got, _ := os.ReadFile(hist)
	for _, bad := range []string{"not json\n", "\n", "[]\n", `{"Verdict":"pass","prev_hash":"","hash":"h"}` + "\n"} {
		require.NoError(t, os.WriteFile(hist, append([]byte(bad), got...), 0o644))
		_, err := Load(root, "missions/m/tasks/t1/record.json")
		var ve *schemas.ValidationError
		assert.ErrorAs(t, err, &ve, "line %q", bad)
	}
}

func TestTheEarlierLayoutIsReadAndMigrated(t *testing.T) {
	root, dir := openRoot(t)
	task := filepath.Join(dir, "missions", "m", "tasks", "t1")
	require.NoError(t, os.MkdirAll(task, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "record.json"), fixture(t, "full.record.json"), 0o644))
	r, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.True(t, r.Legacy())
	hist := r.History()
	require.NotEmpty(t, hist)
	in, ok := r.Integration()
	require.True(t, ok)

	// Migrated on the next write, and read back the same from the new files.
	require.NoError(t, r.SetSection("retrospective", json.RawMessage(`{"what_went_well":[],"what_broke":[]}`), testNow))
	require.NoError(t, r.Write(root, "missions/m/tasks/t1/record.json"))
	b, err := os.ReadFile(filepath.Join(task, "record.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"gate_history"`)
	assert.NotContains(t, string(b), `"integration"`)
	back, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.False(t, back.Legacy())
	assert.Equal(t, hist, back.History())
	in2, ok := back.Integration()
	require.True(t, ok)
	assert.Equal(t, in, in2)

	// The files win over what an earlier layout left in record.json (a migration cut short
	// after the history was written reads the history once, from its file).
	_, err = os.Stat(filepath.Join(task, IntegrationFile))
	require.NoError(t, err)
}

func TestAPendingResultIsAdoptedOnlyInTheCrashState(t *testing.T) {
	root, dir := openRoot(t)
	task := filepath.Join(dir, "missions", "m", "tasks", "t1")
	r := New("t1", testNow)
	writeRun(t, root, r, "gate-1", "fail")
	recBefore, err := os.ReadFile(filepath.Join(task, "record.json"))
	require.NoError(t, err)

	// gate-2 appended, its result.json written, record.json not yet: the crash state.
	e2, err := r.Chain(HistoryEntry{Kind: KindGateRun, RunID: "gate-2", Verdict: "pass", RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(3)})
	require.NoError(t, err)
	line, _ := json.Marshal(e2)
	f, err := os.OpenFile(filepath.Join(task, HistoryFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(line, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	res, _ := json.Marshal(map[string]any{"run_id": "gate-2", "verdict": "pass", "hash": e2.Hash})
	require.NoError(t, os.MkdirAll(filepath.Join(task, "gate-logs", "gate-2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "gate-logs", "gate-2", "result.json"), res, 0o644))

	back, err := Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.True(t, back.ResultPending())
	gr, _ := back.GateResult()
	assert.JSONEq(t, string(res), string(gr))

	// Not adopted: a result.json naming another verdict, or a gate_result that is not the one
	// before, or once the run's gate_result event is logged.
	require.NoError(t, os.WriteFile(filepath.Join(task, "gate-logs", "gate-2", "result.json"), []byte(`{"run_id":"gate-2","verdict":"fail","hash":"`+e2.Hash+`"}`), 0o644))
	back, err = Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.False(t, back.ResultPending())
	require.NoError(t, os.WriteFile(filepath.Join(task, "gate-logs", "gate-2", "result.json"), res, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(task, "record.json"), []byte(`{"version":"1.0","task_id":"t1","gate_result":{"verdict":"fail","hash":"other"}}`), 0o644))
	back, err = Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.False(t, back.ResultPending(), "a gate_result that is not the previous run's is not a crash state")
	require.NoError(t, os.WriteFile(filepath.Join(task, "record.json"), recBefore, 0o644))
	require.NoError(t, AppendEvent(root, Event{EventType: "gate_result", MissionID: "m", TaskID: "t1", Agent: "geas-gate", Data: json.RawMessage(`{"run_id":"gate-2","hash":"` + e2.Hash + `"}`)}))
	back, err = Load(root, "missions/m/tasks/t1/record.json")
	require.NoError(t, err)
	assert.False(t, back.ResultPending(), "the event is logged after record.json: a record without the run was changed later")
}

func TestAnEntryNoGateWritesIsInvalid(t *testing.T) {
	root, dir := openRoot(t)
	r := New("t1", testNow)
	writeRun(t, root, r, "gate-1", "fail")
	hist := filepath.Join(dir, "missions", "m", "tasks", "t1", HistoryFile)
	for _, line := range []string{
		`{"verdict":"passed","prev_hash":"","hash":"h"}`,
		`{"verdict":"PASS","prev_hash":"","hash":"h"}`,
		`{"verdict":"fail","retry_budget_after":-1,"prev_hash":"","hash":"h"}`,
	} {
		require.NoError(t, os.WriteFile(hist, []byte(line+"\n"), 0o644))
		_, err := Load(root, "missions/m/tasks/t1/record.json")
		var ve *schemas.ValidationError
		assert.ErrorAs(t, err, &ve, line)
	}
}

// TestAReaderWithoutTheLockSeesAWholeRun: a reader reads record.json, then a whole gate run is
// written (history, record.json, the gate_result event), then the reader reads the history and the
// events. What it returns is the run as recorded, not a gate_result that lags the chain.
func TestAReaderWithoutTheLockSeesAWholeRun(t *testing.T) {
	root, _ := openRoot(t)
	r := New("t1", testNow)
	writeRun(t, root, r, "gate-1", "fail")
	for _, runs := range []int{1, 2} { // one run, or two, between the reader's two reads
		var last HistoryEntry
		calls := 0
		afterRecordRead = func() {
			if calls++; calls > 1 {
				return
			}
			for range runs {
				last = writeRun(t, root, r, fmt.Sprintf("gate-%d", len(r.History())+1), "fail")
				require.NoError(t, AppendEvent(root, Event{EventType: "gate_result", MissionID: "m", TaskID: "t1", Agent: "geas-gate",
					Data: json.RawMessage(`{"run_id":"` + last.RunID + `","hash":"` + last.Hash + `"}`)}))
			}
		}
		back, err := Load(root, "missions/m/tasks/t1/record.json")
		afterRecordRead = nil
		require.NoError(t, err)
		require.Equal(t, last.Hash, back.History()[len(back.History())-1].Hash)
		gr, ok := back.GateResult()
		require.True(t, ok)
		var named struct{ Hash string }
		require.NoError(t, json.Unmarshal(gr, &named))
		assert.Equal(t, last.Hash, named.Hash, "%d run(s) between the reads: gate_result is the latest run's", runs)
		assert.Greater(t, calls, 1, "the record was read again")
	}
}

// TestWriteNeverWritesWhatLoadRefuses (SPEC §2 invariant 9, §10): a write that would make
// record.json or gate-history.jsonl larger than what Load reads writes nothing, whoever asks for
// it (a record add, a grant, a reset), and the task still loads as it was.
func TestWriteNeverWritesWhatLoadRefuses(t *testing.T) {
	root, dir := openRoot(t)
	name := "missions/m/tasks/t1/record.json"
	r := New("t1", testNow)
	writeRun(t, root, r, "gate-1", "fail")
	task := filepath.Join(dir, "missions", "m", "tasks", "t1")
	recBefore, err := os.ReadFile(filepath.Join(task, "record.json"))
	require.NoError(t, err)
	histBefore, err := os.ReadFile(filepath.Join(task, HistoryFile))
	require.NoError(t, err)

	saved := limits
	t.Cleanup(func() { limits = saved })
	limits.record = int64(len(recBefore)) + 100
	limits.history = int64(len(histBefore)) + 100

	big := fmt.Sprintf(`{"confidence":3,"summary":%q,"known_risks":[],"untested_paths":[]}`, strings.Repeat("x", 200))
	require.NoError(t, r.SetSection("self_check", json.RawMessage(big), testNow))
	err = r.Write(root, name)
	var tooLarge *fsutil.TooLargeError
	require.ErrorAs(t, err, &tooLarge, "record.json over the read limit")
	assert.Equal(t, limits.record, tooLarge.Limit)
	assert.Contains(t, err.Error(), "nothing written")

	r2, err := Load(root, name)
	require.NoError(t, err)
	e, err := r2.Chain(HistoryEntry{Kind: KindGateRun, RunID: "gate-2", Verdict: "fail", RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(3),
		Extra: map[string]json.RawMessage{"note": json.RawMessage(strconv.Quote(strings.Repeat("y", 200)))}})
	require.NoError(t, err)
	require.NoError(t, r2.SetGateSections(json.RawMessage(`{"run_id":"gate-2","verdict":"fail","hash":"`+e.Hash+`"}`), append(r2.History(), e), testNow))
	limits.record = saved.record
	err = r2.Write(root, name)
	require.ErrorAs(t, err, &tooLarge, "gate-history.jsonl over the read limit")
	assert.Equal(t, limits.history, tooLarge.Limit)

	recAfter, _ := os.ReadFile(filepath.Join(task, "record.json"))
	histAfter, _ := os.ReadFile(filepath.Join(task, HistoryFile))
	assert.Equal(t, recBefore, recAfter, "record.json is as it was")
	assert.Equal(t, histBefore, histAfter, "gate-history.jsonl is as it was")
	back, err := Load(root, name)
	require.NoError(t, err)
	assert.Len(t, back.History(), 1)
}
