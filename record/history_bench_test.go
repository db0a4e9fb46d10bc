package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchEntries is a history of n gate runs shaped like the ones the gate writes (an error run with
// two causes, the budget, head and digests), chained.
func benchEntries(tb testing.TB, n int) []HistoryEntry {
	tb.Helper()
	r := New("farewell", testNow)
	causes := json.RawMessage(`[{"code":"state_ineligible","check":"state_eligible","detail":"state is blocked; implementation_change needs integrated"},{"code":"budget_spent","check":"budget","detail":"retry budget is 0 since gate_history entry 4 gate-3 (fail 1 -\u003e 0) and no grant followed; state blocked does not reopen it: an authority decides (geas task budget grant --task farewell --retries N --by AUTHORITY --reason TEXT)"}]`)
	for i := range n {
		_, err := r.AppendHistory(HistoryEntry{
			Kind: KindGateRun, RunID: fmt.Sprintf("gate-%d", i+1), Verdict: "error", Causes: causes,
			RetryBudgetBefore: intp(0), RetryBudgetAfter: intp(0),
			Head:         "7a24fb40701df77197c444403b2f95558ea84496",
			InputsSHA256: "a4b424d79f42600060ae3cbbbd8034cb3b54b2f936dd4645770996d74299b892",
			RulesSHA256:  "f5883e725e13cbb839c1b1ac76dbc17fbc591236db54970b8adb3286c2a3a1f9",
			StartedAt:    "2026-12-01T12:21:05Z",
		}, testNow)
		require.NoError(tb, err)
	}
	return r.History()
}

// benchEvents writes an event log that names every entry of hist with a gate_result event like
// the gate's, with an event of another task between every ten.
func benchEvents(tb testing.TB, dir string, hist []HistoryEntry) {
	tb.Helper()
	var b strings.Builder
	for i, e := range hist {
		fmt.Fprintf(&b, `{"timestamp":"2026-12-01T12:21:05Z","event_type":"gate_result","mission_id":"demo","task_id":"farewell","agent":"geas-gate","data":{"run_id":%q,"verdict":"error","gate_profile":"implementation_change","tier_results":{"tier_0":{"status":"error","details":"13 of 15 checks passed"},"tier_1":{"status":"skipped","details":"not run: tier 0 did not pass"},"tier_2":{"status":"skipped","details":"not run: tier 0 did not pass"}},"blocking_dimensions":[],"retry_budget_before":0,"retry_budget_after":0,"hash":%q}}`+"\n", e.RunID, e.Hash)
		if i%10 == 0 {
			b.WriteString(`{"timestamp":"2026-12-01T12:21:05Z","event_type":"step_complete","mission_id":"demo","task_id":"hello","agent":"implementer","data":{"step":"implement"}}` + "\n")
		}
	}
	require.NoError(tb, os.MkdirAll(filepath.Join(dir, "state"), 0o755))
	require.NoError(tb, os.WriteFile(filepath.Join(dir, EventsFile), []byte(b.String()), 0o644))
}

// cpuPerOp reports the process's CPU time (user and system) per iteration as cpu-ns/op, beside
// the wall time: on a shared machine the wall time also counts the time spent waiting for a core.
// Call it before the loop and what it returns after the loop.
func cpuPerOp(b *testing.B) func() {
	start := cpuNow()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuNow() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchRoot(b *testing.B) (*os.Root, string) {
	dir := filepath.Join(b.TempDir(), ".geas")
	require.NoError(b, os.Mkdir(dir, 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(b, err)
	b.Cleanup(func() { _ = root.Close() })
	return root, dir
}

// BenchmarkVerifyChain1000 is what a run pays to verify a 1,000-entry history once.
func BenchmarkVerifyChain1000(b *testing.B) {
	hist := benchEntries(b, 1000)
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		if err := VerifyChain(hist); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkVerifySignatures1000 is the same with GEAS_GATE_KEY set.
func BenchmarkVerifySignatures1000(b *testing.B) {
	b.Setenv(SigningKeyEnv, "bench-key")
	hist := benchEntries(b, 1000)
	key := SigningKey()
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		if bad := VerifySignatures(hist, key); len(bad) > 0 {
			b.Fatal(bad[0])
		}
	}
	done()
}

// BenchmarkParseHistory1000 reads a 1,000-line gate-history.jsonl (the cache of parsed histories
// is bypassed: each process parses its history once).
func BenchmarkParseHistory1000(b *testing.B) {
	data, err := historyLines(benchEntries(b, 1000))
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		entries, _, _, err := parseHistoryLines(HistoryFile, data)
		if err != nil || len(entries) != 1000 {
			b.Fatal(err, len(entries))
		}
	}
	done()
}

// BenchmarkHistoryLineBytes1000 is the size check of SPEC §10 over a 1,000-entry history.
func BenchmarkHistoryLineBytes1000(b *testing.B) {
	hist := benchEntries(b, 1000)
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		if _, err := HistoryLineBytes(hist...); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkTaskEventHashes reads an event log of 1,000 gate_result events (and 100 of another
// task) for the history cross-check.
func BenchmarkTaskEventHashes(b *testing.B) {
	root, dir := benchRoot(b)
	benchEvents(b, dir, benchEntries(b, 1000))
	st, err := os.Stat(filepath.Join(dir, EventsFile))
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		evs, err := TaskEventHashes(root, "demo", "farewell")
		if err != nil || len(evs) != 1000 {
			b.Fatal(err, len(evs))
		}
	}
	done()
}

// BenchmarkTaskEventKeys reads the same log for completing a run's derived writes.
func BenchmarkTaskEventKeys(b *testing.B) {
	root, dir := benchRoot(b)
	hist := benchEntries(b, 1000)
	benchEvents(b, dir, hist)
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		k, err := TaskEventKeys(root, "demo", "farewell")
		if err != nil || !k.Has("gate_result", hist[999].Hash, "") {
			b.Fatal(err)
		}
	}
	done()
}
