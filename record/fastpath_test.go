package record

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/canon"
)

// hostileRaw are JSON values (and non-values) an edited or forged entry may carry in causes or an
// extra key: escapes of every kind, numbers RFC 8785 rewrites, keys out of order or repeated,
// white space, text that is not one value.
var hostileRaw = []string{
	`[]`, `{}`, `null`, `true`, `false`, `0`, `-1`, `7`, `123456789012345`, `1234567890123456`,
	`-123456789012345`, `9007199254740993`, `1e2`, `1E+2`, `1.0`, `0.5`, `-0`, `-0.0`, `100000000000000000000000`,
	`"x"`, `""`, `"a\"b"`, `"a\\b"`, `"a\/b"`, `"\b\f\n\r\t"`, `"\u0001\u001f\u007f"`, `"\u003c\u003e\u0026"`,
	`"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"\ud800"`, `"😀"`, `"\u2028"`, "\"\u2028\"", `"\u0000"`, `"\U0041"`,
	`["-\u003e", 1, [true, null]]`, `[{"code":"x","check":"y","detail":"a -\u003e b"}]`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":{"d":1,"c":[{"f":1,"e":2}]}}`, `{"\u0061":1,"a":2}`,
	`{"é":1,"e":2}`, `{"\ud83d\ude00":1,"\uffff":2}`, ` [1, 2] `, "\t{\"a\" : 1 }\n", `[1,]`, `{"a":}`,
	`[1] [2]`, `"unterminated`, `tru`, `nul`, `[`, `{"a":1`, `01`, `+1`, `.5`, `1.`, `1e`, `"\x"`,
	"\"tab\there\"", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// hostileEntries are entries built from hostileRaw and from hostile field values.
func hostileEntries() []HistoryEntry {
	base := HistoryEntry{
		Kind: KindGateRun, RunID: "gate-1", Verdict: "fail", RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(2),
		Head: "abc", InputsSHA256: "d1", RulesSHA256: "d2", StartedAt: "2026-12-01T12:21:05Z", PrevHash: "p", Hash: "h",
	}
	var out []HistoryEntry
	out = append(out, base, HistoryEntry{}, HistoryEntry{Hash: "x", HMAC: "y"})
	for _, raw := range hostileRaw {
		e := base
		e.Causes = json.RawMessage(raw)
		out = append(out, e)
		e = base
		e.Extra = map[string]json.RawMessage{"by": json.RawMessage(raw), "a": json.RawMessage(`1`)}
		out = append(out, e)
	}
	for _, s := range []string{"", "a\"b", "a\\b", "ctl\x01\x1f\x7f", "<>&", "é", "😀", "\u2028", "bad\xff", "\n\t"} {
		e := base
		e.RunID, e.Head = s, s
		out = append(out, e)
		e = base
		e.Extra = map[string]json.RawMessage{s: json.RawMessage(`"v"`)}
		out = append(out, e)
		e = base
		e.HMAC, e.PrevHash = s, s
		out = append(out, e)
	}
	for _, n := range []int{0, -1, maxCanonInt, maxCanonInt + 1, -maxCanonInt, -maxCanonInt - 1, 1 << 53, 1<<53 + 1, math.MaxInt64, math.MinInt64} {
		e := base
		e.RetryBudgetBefore, e.RetryBudgetAfter = intp(n), intp(-n)
		out = append(out, e)
	}
	// Extra keys that shadow known ones, or sort between them.
	e := base
	e.Extra = map[string]json.RawMessage{"hash": json.RawMessage(`"z"`), "run_id": json.RawMessage(`1`), "hmac": json.RawMessage(`2`),
		"head_x": json.RawMessage(`[]`), "": json.RawMessage(`0`), "Z": json.RawMessage(`{"b":[],"a":{}}`), "~": json.RawMessage(`" "`)}
	out = append(out, e)
	return out
}

// TestFastCanonicalIsCanon: for every entry the fast canonical form takes, it gives exactly the
// bytes of the slow path (encoding/json, then internal/canon): without the links for the hash and
// HMAC, with them for the size check. It must also take the entries the gate writes.
func TestFastCanonicalIsCanon(t *testing.T) {
	skipWithoutTwin(t, twinEntryCanon)
	taken := 0
	for i, e := range hostileEntries() {
		checkFastCanonical(t, e, i)
		if _, ok := fastCanonical(e, false); ok {
			taken++
		}
	}
	assert.Greater(t, taken, 20, "the fast path takes the ordinary entries")
	for _, e := range benchEntries(t, 3) {
		_, ok := fastCanonical(e, false)
		assert.True(t, ok, "an entry the gate writes takes the fast path")
		checkFastCanonical(t, e, -1)
	}
}

func checkFastCanonical(t *testing.T, e HistoryEntry, i int) {
	t.Helper()
	slow, serr := slowCanonical(e)
	if fast, ok := fastCanonical(e, false); ok {
		require.NoError(t, serr, "entry %d: the fast path took an entry the slow path refuses", i)
		assert.Equal(t, string(slow), string(fast), "entry %d", i)
	}
	got, gerr := canonical(e)
	if serr != nil {
		assert.Error(t, gerr, "entry %d", i)
	} else {
		assert.Equal(t, string(slow), string(got), "entry %d", i)
	}
	whole, werr := canon.Marshal(e)
	if fast, ok := fastCanonical(e, true); ok {
		require.NoError(t, werr, "entry %d (with links)", i)
		assert.Equal(t, string(whole), string(fast), "entry %d (with links)", i)
	}
}

// FuzzFastCanonical: any causes and extra value, and any text in the string fields.
func FuzzFastCanonical(f *testing.F) {
	skipWithoutTwin(f, twinEntryCanon)
	for _, raw := range hostileRaw {
		f.Add([]byte(raw), []byte(`"v"`), "gate-1", "k")
	}
	f.Fuzz(func(t *testing.T, causes, extra []byte, s, key string) {
		e := HistoryEntry{Kind: KindGateRun, RunID: s, Causes: causes, RetryBudgetBefore: intp(len(s)), PrevHash: s,
			Extra: map[string]json.RawMessage{key: extra}}
		checkFastCanonical(t, e, 0)
	})
}

// TestEntryHashUnchangedByTheFastPath pins one hash the gate wrote before the fast path existed.
func TestEntryHashUnchangedByTheFastPath(t *testing.T) {
	e := benchEntries(t, 1)[0]
	slow, err := slowCanonical(e)
	require.NoError(t, err)
	fast, err := canonical(e)
	require.NoError(t, err)
	assert.Equal(t, string(slow), string(fast))
	n, err := HistoryLineBytes(e)
	require.NoError(t, err)
	whole, err := canon.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, int64(len(whole)+1), n)
}

// hostileLines are history lines an agent may write: reordered keys, white space, escapes in keys
// and values, repeated keys, keys that differ by case, nulls, numbers of every form, nested
// repeated keys, invalid UTF-8, data after the object.
func hostileLines(t testing.TB) [][]byte {
	lines := [][]byte{}
	for _, e := range append(hostileEntries(), benchEntries(t, 2)...) {
		if b, err := e.MarshalJSON(); err == nil {
			lines = append(lines, b)
		}
	}
	for _, l := range []string{
		`{"prev_hash":"","hash":"h"}`, `{"hash":"h","prev_hash":""}`, `{"hash":"h","prev_hash":"","kind":"gate_run"}`,
		`{ "prev_hash":"","hash":"h"}`, `{"prev_hash": "","hash":"h"}`, `{"prev_hash":"","hash":"h"} `, `{"prev_hash":"","hash":"h"}x`,
		`{"prev_hash":"","hash":"h","hash":"i"}`, `{"prev_hash":"","hash":"h","x":1,"x":2}`, `{"prev_hash":"","hash":"h","Hash":"i"}`,
		`{"prev_hash":"","hash":"h","RUN_ID":"i"}`, `{"prev_hash":"","h\u0061sh":"h"}`, `{"prev_hash":"","hash":"\u0068"}`,
		`{"prev_hash":"","hash":null}`, `{"prev_hash":"","hash":1}`, `{"prev_hash":"","hash":"h","retry_budget_before":-1}`,
		`{"prev_hash":"","hash":"h","retry_budget_before":-0}`, `{"prev_hash":"","hash":"h","retry_budget_before":1.0}`,
		`{"prev_hash":"","hash":"h","retry_budget_before":1e2}`, `{"prev_hash":"","hash":"h","retry_budget_before":99999999999999999999}`,
		`{"prev_hash":"","hash":"h","retry_budget_before":9223372036854775807}`, `{"prev_hash":"","hash":"h","retry_budget_before":null}`,
		`{"prev_hash":"","hash":"h","retry_budget_before":"3"}`, `{"prev_hash":"","hash":"h","verdict":"maybe"}`,
		`{"prev_hash":"","hash":"h","verdict":""}`, `{"prev_hash":"","hash":"h","causes":null}`, `{"prev_hash":"","hash":"h","causes":[]}`,
		`{"prev_hash":"","hash":"h","causes":[ ]}`, `{"prev_hash":"","hash":"h","causes":[{"a":1,"a":2}]}`,
		`{"prev_hash":"","hash":"h","causes":[{"a":1,"b":{"c":1,"c":2}}]}`, `{"prev_hash":"","hash":"h","causes":[{"\u0061":1,"a":2}]}`,
		`{"prev_hash":"","hash":"h","x":{"y":[1,2.50]}}`, `{"prev_hash":"","hash":"h","x":"\ud800"}`, "{\"prev_hash\":\"\",\"hash\":\"h\xff\"}",
		"{\"prev_hash\":\"\",\"hash\":\"h\",\"x\":\"\xc3\"}", `{"prev_hash":"","hash":"é"}`, `{"prev_hash":"","hash":"h","é":"x"}`,
		`{"prev_hash":"","hash":"h","kind":"budget_grant","by":"orchestration-authority","retries":3,"reason":"a \"quoted\" reason"}`,
		`{"prev_hash":"","hash":"h","causes":[1,]}`, `{"prev_hash":"","hash":"h","causes":`, `{"prev_hash":"","hash":"h",}`, `{}`, `[]`, `"x"`, ``,
		`{"prev_hash":"","hash":"h","head":"a\tb"}`, "{\"prev_hash\":\"\",\"hash\":\"h\",\"head\":\"a\tb\"}",
	} {
		lines = append(lines, []byte(l))
	}
	return lines
}

// TestFastEntryIsSlowEntry: a history line the fast reader takes gives exactly the entry the slow
// reader gives, and the slow reader accepts it; the lines the gate writes take the fast reader.
func TestFastEntryIsSlowEntry(t *testing.T) {
	skipWithoutTwin(t, twinEntryScan)
	taken := 0
	for i, line := range hostileLines(t) {
		if checkFastEntry(t, line, i) {
			taken++
		}
	}
	assert.Greater(t, taken, 30)
	data, err := historyLines(benchEntries(t, 5))
	require.NoError(t, err)
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		_, ok := fastEntry(line)
		assert.True(t, ok, "a line the gate writes takes the fast reader: %s", line)
	}
}

func checkFastEntry(t *testing.T, line []byte, i int) bool {
	t.Helper()
	fast, ok := fastEntry(line)
	if !ok {
		return false
	}
	slow, err := slowEntry(HistoryFile, "/line 1", line)
	require.NoError(t, err, "line %d %s: the fast reader took a line the slow one refuses", i, line)
	assert.Equal(t, slow, fast, "line %d %s", i, line)
	return true
}

// FuzzFastEntry: any line.
func FuzzFastEntry(f *testing.F) {
	skipWithoutTwin(f, twinEntryScan)
	for _, l := range hostileLines(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastEntry(t, line, 0)
	})
}

// hostileEvents are event lines an agent may write next to the gate's: the gate's own, and the
// same with escapes, repeated keys, white space, other types, non-string fields, invalid UTF-8,
// torn or trailing text.
func hostileEvents() []string {
	gate := `{"timestamp":"t","event_type":"gate_result","mission_id":"m","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-1","verdict":"fail","tier_results":{"tier_0":{"status":"pass"}},"hash":"h1"}}`
	lines := []string{gate,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","agent":"geas-gate","data":{"run_id":"gate-2"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","agent":"someone","data":{"run_id":"gate-3"}}`,
		`{"event_type":"revocation","mission_id":"m","task_id":"t1","data":{"hash":"h2","run_id":"gate-1"}}`,
		`{"event_type":"budget_grant","mission_id":"m","task_id":"t1","data":{"hash":"h3"}}`,
		`{"event_type":"step_complete","mission_id":"m","task_id":"t1","data":{"hash":"h4"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t2","data":{"hash":"h5"}}`,
		`{"event_type":"gate_result","mission_id":"n","task_id":"t1","data":{"hash":"h6"}}`,
		` { "event_type" : "gate_result" , "mission_id":"m","task_id":"t1","data": { "hash" : "h7" } } `,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h8"}} x`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h9"}}{}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h10"}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","task_id":"t1","data":{"hash":"h11"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h12","hash":"h13"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h14"},"data":{"hash":"h15"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_\u0069d":"t1","data":{"hash":"h16"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t\u0031","data":{"hash":"h17"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"h\u0061sh":"h18"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h\u0031\u0039"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","task_\u0069d":"t2","data":{"hash":"h20"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":1}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":null}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"","run_id":"gate-9"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","agent":"geas-gate","data":{"run_id":7}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","agent":7,"data":{"hash":"h21"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","agent":null,"data":{"hash":"h22"}}`,
		`{"event_type":null,"mission_id":"m","task_id":"t1","data":{"hash":"h23"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":["t1"],"data":{"hash":"h24"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":"hash"}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":null,"x":"hash"}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":[{"hash":"h25"}]}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h26","x":{"a":1,"a":2}}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h27","x":[1,2,}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h28","x":"\x"}}`,
		"{\"event_type\":\"gate_result\",\"mission_id\":\"m\",\"task_id\":\"t1\",\"data\":{\"hash\":\"h29\",\"x\":\"\xff\"}}",
		"{\"event_type\":\"gate_result\",\"mission_id\":\"m\",\"task_id\":\"t1\",\"\xff\":1,\"\xfe\":2,\"data\":{\"hash\":\"h30\"}}",
		"{\"event_type\":\"gate_result\",\"mission_id\":\"m\",\"task_id\":\"t1\",\"data\":{\"hash\":\"h31\xff\"}}",
		"{\"event_type\":\"gate_result\",\"mission_id\":\"m\",\"task_id\":\"t1\",\"data\":{\"hash\":\"h32\",\"x\":\"tab\there\"}}",
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"é"}}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h33"},"n":-0.5e+3}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h34"},"n":01}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h35"},"n":tru}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h36"},"n":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{}}`, `{}`, `[]`, `"hash"`, `{"hash"}`,
		`{"event_type":"gate_result","mission_id":"m","task_id":"t1","data":{"hash":"h37"}}` + "\r",
	}
	return lines
}

// TestFastEventReadsAreSlowReads: both event readers return the same with the fast path as
// without it, on the gate's events and on hostile lines, each line alone and all together.
func TestFastEventReadsAreSlowReads(t *testing.T) {
	skipWithoutTwin(t, twinEvents)
	root, dir := openRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "state"), 0o755))
	lines := hostileEvents()
	docs := [][]string{lines}
	for _, l := range lines {
		docs = append(docs, []string{l})
	}
	fastTaken := 0
	for i, doc := range docs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, EventsFile), []byte(strings.Join(doc, "\n")+"\n"), 0o644))
		fastH, err := TaskEventHashes(root, "m", "t1")
		require.NoError(t, err)
		fastK, err := TaskEventKeys(root, "m", "t1")
		require.NoError(t, err)
		fastEvents = false
		slowH, err := TaskEventHashes(root, "m", "t1")
		require.NoError(t, err)
		slowK, err := TaskEventKeys(root, "m", "t1")
		fastEvents = true
		require.NoError(t, err)
		assert.Equal(t, slowH, fastH, "document %d: %q", i, doc)
		assert.Equal(t, slowK, fastK, "document %d: %q", i, doc)
		if i > 0 {
			if _, ok := fastEvent([]byte(doc[0])); ok {
				fastTaken++
			}
		}
	}
	assert.Greater(t, fastTaken, 10)
	_, ok := fastEvent([]byte(lines[0]))
	assert.True(t, ok, "the gate's own event takes the fast path")
}

// FuzzFastEvent: any event line.
func FuzzFastEvent(f *testing.F) {
	skipWithoutTwin(f, twinEvents)
	for _, l := range hostileEvents() {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, ok := fastEvent(line)
		if !ok {
			return
		}
		// The slow path, field by field, as the readers take it.
		fields, err := objectFields(line)
		require.NoError(t, err, "%q", line)
		var want eventFields
		for k, dst := range map[string]*string{"event_type": &want.typ, "mission_id": &want.mission, "task_id": &want.task, "agent": &want.agent} {
			require.NoError(t, field(fields, k, dst), "%q", line)
		}
		if raw, has := fields["data"]; has {
			data, err := objectFields(raw)
			require.NoError(t, err, "%q", line)
			want.hasData = true
			require.NoError(t, field(data, "hash", &want.hash), "%q", line)
			require.NoError(t, field(data, "run_id", &want.runID), "%q", line)
		}
		assert.Equal(t, want, ev, "%q", line)
	})
}

// TestFastFirstCauseIsSlow: the first cause's code is the same through the fast reader as
// through encoding/json, on every hostile value.
func TestFastFirstCauseIsSlow(t *testing.T) {
	skipWithoutTwin(t, twinEntryScan)
	taken := 0
	for _, raw := range append(hostileRaw, `[{"code":"a","code":"b"}]`, `[{"code":"a"},{"code":"b"}]`, `[{"code":null}]`, `[{"code":1}]`,
		`[{"code":"\u0061"}]`, `[{"c\u006fde":"a"}]`, `[{"Code":"a"}]`, `[{},{"code":"a"}]`, `[{"code":"a"},]`, `[{"code":"a"}] x`,
		` [ { "code" : "a" } , 1 ] `, `[{"code":"a"}`, `["a"]`, `[{"code":"é"}]`, `[{"x":{"code":"a"},"code":"b"}]`) {
		fast, ok := fastFirstCause([]byte(raw))
		if !ok {
			continue
		}
		taken++
		var items []json.RawMessage
		slow := ""
		if json.Unmarshal([]byte(raw), &items) == nil && len(items) > 0 {
			if f, err := objectFields(items[0]); err == nil {
				var code string
				if field(f, "code", &code) == nil {
					slow = code
				}
			}
		}
		assert.Equal(t, slow, fast, "%s", raw)
	}
	assert.Greater(t, taken, 5)
}

// skipWithoutTwin skips a test of a twin against its library path in a build with the twin's
// lib_ tag (bench/twins.sh), where both sides are the library path; the rest of the package's
// tests then run on the library path.
func skipWithoutTwin(t testing.TB, twin bool) {
	if !twin {
		t.Skip("built with the library path in the twin's place")
	}
}
