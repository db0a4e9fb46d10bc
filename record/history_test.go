package record

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chained builds a record whose gate_history holds a fail then a pass, chained (and signed when
// the key is set in the environment).
func chained(t *testing.T) *Record {
	t.Helper()
	r := New("t1", testNow)
	for _, e := range []HistoryEntry{
		{Kind: KindGateRun, RunID: "gate-1", Verdict: "fail", Causes: json.RawMessage(`[{"code":"eval_failed","check":"eval","detail":"exit 1"}]`), RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(2)},
		{Kind: KindGateRun, RunID: "gate-2", Verdict: "pass", Causes: json.RawMessage(`[]`), RetryBudgetBefore: intp(2), RetryBudgetAfter: intp(2)},
	} {
		_, err := r.AppendHistory(e, testNow)
		require.NoError(t, err)
	}
	return r
}

// rechain recomputes every link and hash of h in place, as anyone who can write record.json can;
// signatures are left as they are.
func rechain(t *testing.T, h []HistoryEntry) {
	t.Helper()
	prev := ""
	for i := range h {
		h[i].PrevHash = prev
		var err error
		h[i].Hash, err = EntryHash(h[i])
		require.NoError(t, err)
		prev = h[i].Hash
	}
}

func TestSigningKey(t *testing.T) {
	t.Setenv(SigningKeyEnv, "")
	assert.Nil(t, SigningKey())
	t.Setenv(SigningKeyEnv, "s3cret")
	assert.Equal(t, []byte("s3cret"), SigningKey())
}

// TestEntryHashIsKeyIndependent: the hash covers neither hash nor hmac, so signing an entry does
// not change its hash, and the chain verifies with or without the key.
func TestEntryHashIsKeyIndependent(t *testing.T) {
	t.Setenv(SigningKeyEnv, "")
	plain := chained(t).History()
	assert.Empty(t, plain[0].HMAC, "no key, no hmac")

	t.Setenv(SigningKeyEnv, "k1")
	signed := chained(t).History()
	require.Len(t, signed, 2)
	for i := range signed {
		assert.Equal(t, plain[i].Hash, signed[i].Hash, "entry %d", i)
		assert.Len(t, signed[i].HMAC, 64, "hex HMAC-SHA256")
		want, err := EntryHMAC(signed[i], []byte("k1"))
		require.NoError(t, err)
		assert.Equal(t, want, signed[i].HMAC)
	}
	require.NoError(t, VerifyChain(signed))
	assert.Empty(t, VerifySignatures(signed, []byte("k1")))

	other, err := EntryHMAC(signed[0], []byte("k2"))
	require.NoError(t, err)
	assert.NotEqual(t, signed[0].HMAC, other, "the hmac depends on the key")
}

func TestHMACRoundTrip(t *testing.T) {
	t.Setenv(SigningKeyEnv, "k1")
	r := chained(t)
	root, _ := openRoot(t)
	require.NoError(t, r.Write(root, "t/record.json"))
	again, err := Load(root, "t/record.json")
	require.NoError(t, err)
	assert.Equal(t, r.History(), again.History())
	assert.Nil(t, again.History()[0].Extra, "hmac is a known key, not an extra one")

	raw, err := json.Marshal(again.History()[0])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"hash":"`+again.History()[0].Hash+`","hmac":"`)

	t.Setenv(SigningKeyEnv, "")
	raw, err = json.Marshal(chained(t).History()[0])
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "hmac", "omitted when empty")
}

// TestSignedHistoryDetectsAForgedEntry: an entry forged and re-chained with correct
// hashes passes VerifyChain, so without the key it is not detected; with the key its hmac does not
// verify. An entry edited without re-chaining is caught by the chain, key or no key.
func TestSignedHistoryDetectsAForgedEntry(t *testing.T) {
	key := []byte("k1")
	t.Setenv(SigningKeyEnv, string(key))

	t.Run("forged and re-chained", func(t *testing.T) {
		h := chained(t).History()
		h[0].Verdict, h[0].Causes = "pass", json.RawMessage(`[]`)
		rechain(t, h)
		require.NoError(t, VerifyChain(h), "the chain alone cannot see it")
		bad := VerifySignatures(h, key)
		require.Len(t, bad, 2, "the forged entry, and the next one whose prev_hash changed")
		assert.Equal(t, 0, bad[0].Index)
		assert.Equal(t, "gate_history entry 1 gate-1: hmac "+h[0].HMAC[:12]+" does not verify with GEAS_GATE_KEY: forged or re-chained entry", bad[0].Error())
		assert.Equal(t, 1, bad[1].Index)
	})
	t.Run("forged entry appended without hmac", func(t *testing.T) {
		h := chained(t).History()
		h = append(h, HistoryEntry{Kind: KindBudgetGrant, RunID: "grant-9", RetryBudgetAfter: intp(99)})
		rechain(t, h)
		require.NoError(t, VerifyChain(h))
		bad := VerifySignatures(h, key)
		require.Len(t, bad, 1)
		assert.Equal(t, "gate_history entry 3 grant-9: no hmac, but GEAS_GATE_KEY is set: forged or re-chained entry", bad[0].Error())
	})
	t.Run("edited in place", func(t *testing.T) {
		h := chained(t).History()
		h[0].Verdict = "pass"
		var ce *ChainError
		require.ErrorAs(t, VerifyChain(h), &ce, "detected without the key")
		assert.Equal(t, 0, ce.Index)
		assert.Contains(t, ce.Reason, "does not match its content")
		assert.Len(t, VerifySignatures(h, key), 1, "and with it")
	})
}

func TestResetHistoryStartsANewChain(t *testing.T) {
	t.Setenv(SigningKeyEnv, "k-reset")
	r := chained(t)
	require.NoError(t, r.SetGateSections(json.RawMessage(`{"run_id":"gate-2","verdict":"pass"}`), r.History(), testNow))
	require.NoError(t, r.SetSection("self_check", json.RawMessage(`{"confidence":4,"known_risks":[],"untested_paths":[],"summary":"s"}`), testNow))
	r.taskID = "other"
	e, err := r.ResetHistory(HistoryEntry{Kind: KindHistoryReset, RunID: "reset", RetryBudgetAfter: intp(1),
		Extra: map[string]json.RawMessage{"retries": json.RawMessage(`1`)}}, "t1", testNow)
	require.NoError(t, err)
	h := r.History()
	require.Len(t, h, 1)
	assert.Equal(t, e, h[0])
	assert.Equal(t, "", h[0].PrevHash, "the first entry of a new chain")
	assert.NoError(t, VerifyChain(h))
	assert.Empty(t, VerifySignatures(h, []byte("k-reset")), "signed with the key")
	assert.Empty(t, BudgetProblems(h))
	_, ok := r.GateResult()
	assert.False(t, ok, "gate_result of the discarded chain is removed")
	_, ok = r.SelfCheck()
	assert.True(t, ok, "agent sections are kept")
	assert.Equal(t, "t1", r.TaskID())
}

func TestTaskEventHashes(t *testing.T) {
	root, _ := openRoot(t)
	got, err := TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	assert.Empty(t, got, "no log, no events")
	require.NoError(t, root.MkdirAll("state", 0o755))
	lines := `{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-1","hash":"aa"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t2","agent":"geas-gate","data":{"run_id":"gate-1","hash":"bb"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m2","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-1","hash":"cc"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"task_started","mission_id":"m1","task_id":"t1","data":{"hash":"dd"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-0"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"budget_grant","mission_id":"m1","task_id":"t1","agent":"product-authority","data":{"hash":"ee"}}
{"timestamp":"2026-01-01T00:00:00Z","event_type":"gate_result","mission_id":"m1","task_id":"t1","data":{"hash":"ff"`
	require.NoError(t, os.WriteFile(filepath.Join(root.Name(), "state", "events.jsonl"), []byte(lines), 0o644))
	got, err = TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	assert.Equal(t, []EventHash{
		{Line: 1, EventType: "gate_result", RunID: "gate-1", Hash: "aa"},
		{Line: 6, EventType: "budget_grant", Hash: "ee"},
	}, got, "only this task's gate events with a hash; a torn last line is skipped")

	require.NoError(t, os.Remove(filepath.Join(root.Name(), "state", "events.jsonl")))
	require.NoError(t, os.Mkdir(filepath.Join(root.Name(), "state", "events.jsonl"), 0o755))
	_, err = TaskEventHashes(root, "m1", "t1")
	assert.ErrorContains(t, err, "not a regular file", "a log that cannot be read is an error, not an empty log")
}

// TestAChainWrittenBeforeRFC8785StillVerifies: entries hashed (and signed) with the gate's earlier
// canonical form, encoding/json with sorted keys, verify; an edit to one of them still does not.
func TestAChainWrittenBeforeRFC8785StillVerifies(t *testing.T) {
	key := []byte("k")
	before, after := 3, 2
	e := HistoryEntry{Kind: KindGateRun, RunID: "gate-1", Verdict: "fail",
		Causes:            json.RawMessage(`[{"code":"below_threshold","check":"rubric:x","detail":"score 3 < threshold 4 & more"}]`),
		RetryBudgetBefore: &before, RetryBudgetAfter: &after, StartedAt: "2026-11-01T09:00:00Z"}
	old, err := legacyCanonical(e)
	require.NoError(t, err)
	cur, err := canonical(e)
	require.NoError(t, err)
	require.NotEqual(t, string(old), string(cur), "the two forms differ for this entry (escaped <, &)")
	sum := sha256.Sum256(old)
	e.Hash = hex.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, key)
	mac.Write(old)
	e.HMAC = hex.EncodeToString(mac.Sum(nil))

	assert.NoError(t, VerifyChain([]HistoryEntry{e}))
	assert.Empty(t, VerifySignatures([]HistoryEntry{e}, key))

	edited := e
	more := 50
	edited.RetryBudgetAfter = &more
	assert.Error(t, VerifyChain([]HistoryEntry{edited}))
	assert.NotEmpty(t, VerifySignatures([]HistoryEntry{edited}, key))
}

func TestIsGateRun(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want bool
	}{{"", true}, {KindGateRun, true}, {KindBudgetGrant, false}, {KindRevocation, false}, {KindHistoryReset, false}, {"approval", false}} {
		assert.Equal(t, tc.want, HistoryEntry{Kind: tc.kind}.IsGateRun(), "kind %q", tc.kind)
	}
}
