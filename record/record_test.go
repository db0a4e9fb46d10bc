package record

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
)

const validSelfCheck = `{"confidence":4,"known_risks":["r1"],"untested_paths":[],"summary":"works"}`

func TestNewRecord(t *testing.T) {
	r := New("t1", testNow)
	b, err := r.Bytes()
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"version\": \"1.0\",\n  \"task_id\": \"t1\",\n  \"created_at\": \"2025-06-01T12:30:00Z\"\n}\n", string(b))
	assert.Equal(t, "t1", r.TaskID())
	assert.Empty(t, r.Sections())
	require.NoError(t, schemas.Validate(schemas.Record, "record.json", b))
}

func TestRecordRoundTripKeepsSectionOrder(t *testing.T) {
	data := fixture(t, "full.record.json")
	r, err := Parse("full.record.json", data)
	require.NoError(t, err)
	// The fixture is in the earlier layout: its gate_history and integration are read, and are
	// no longer sections of record.json (SPEC §3).
	wantSections := []string{"implementation_contract", "self_check", "gate_result", "retrospective"}
	assert.Equal(t, wantSections, r.Sections())
	assert.True(t, r.Legacy())
	assert.NotEmpty(t, r.History())
	_, ok := r.Integration()
	assert.True(t, ok)

	b, err := r.Bytes()
	require.NoError(t, err)
	again, err := Parse("again", b)
	require.NoError(t, err)
	assert.Equal(t, wantSections, again.Sections())
	b2, err := again.Bytes()
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2), "Bytes is a fixed point")
	for _, name := range wantSections {
		x, _ := r.Section(name)
		y, _ := again.Section(name)
		assert.JSONEq(t, string(x), string(y), name)
	}

	// Replacing a section in the middle keeps it where it was; a new one goes last.
	require.NoError(t, r.SetSection("self_check", json.RawMessage(validSelfCheck), testNow))
	require.NoError(t, r.SetSection("closure", json.RawMessage(`{"change_summary":"x","reviews":[]}`), testNow))
	assert.Equal(t, append(wantSections, "closure"), r.Sections())
	sc, ok := r.Section("self_check")
	require.True(t, ok)
	assert.JSONEq(t, validSelfCheck, string(sc))
	up, ok := r.Section("updated_at")
	require.True(t, ok)
	assert.Equal(t, `"2025-06-01T12:30:00Z"`, string(up))
	gr1, _ := Parse("x", data)
	want, _ := gr1.Section("gate_result")
	got, _ := r.Section("gate_result")
	assert.Equal(t, string(want), string(got), "other sections keep their bytes")
}

func TestParseTypedViews(t *testing.T) {
	r, err := Parse("full.record.json", fixture(t, "full.record.json"))
	require.NoError(t, err)

	assert.Equal(t, "task-042", r.TaskID())
	sc, ok := r.SelfCheck()
	require.True(t, ok)
	assert.Equal(t, &SelfCheck{
		Confidence:    2,
		KnownRisks:    []string{"Progress bar untested on Windows"},
		UntestedPaths: []string{"NO_COLOR set together with FORCE_COLOR"},
		Summary:       "Guard added and tested on Linux",
		PossibleStubs: []StubLocation{{"src/cli/progress.go", 42}, {"src/cli/tty.go", 7}, {"src/cli/README.md", 0}},
	}, sc)
	ic, ok := r.ImplementationContract()
	require.True(t, ok)
	assert.Equal(t, &ImplementationContract{KnownRisks: []string{"Terminal detection differs under CI"}, Status: "approved"}, ic)
	in, ok := r.Integration()
	require.True(t, ok)
	assert.Equal(t, &Integration{Status: "merged", Branch: "task-042", Commit: "3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b"}, in)
	gr, ok := r.GateResult()
	require.True(t, ok)
	assert.Contains(t, string(gr), `"run_id": "gate-2"`)
	h := r.History()
	require.Len(t, h, 2)
	assert.Equal(t, "gate-1", h[0].RunID)
	assert.Equal(t, "error", h[0].Verdict)
	assert.Equal(t, intp(3), h[0].RetryBudgetBefore)
	assert.Empty(t, h[0].PrevHash)
	assert.Equal(t, h[0].Hash, h[1].PrevHash)
	assert.Equal(t, intp(2), h[1].RetryBudgetAfter)

	t.Run("absent sections", func(t *testing.T) {
		r, err := Parse("minimal", fixture(t, "minimal.record.json"))
		require.NoError(t, err)
		_, ok := r.SelfCheck()
		assert.False(t, ok)
		_, ok = r.ImplementationContract()
		assert.False(t, ok)
		_, ok = r.Integration()
		assert.False(t, ok)
		_, ok = r.GateResult()
		assert.False(t, ok)
		assert.Empty(t, r.History())
		_, ok = r.Section("closure")
		assert.False(t, ok)
	})
	t.Run("views are copies", func(t *testing.T) {
		sc, _ := r.SelfCheck()
		sc.Confidence = 5
		again, _ := r.SelfCheck()
		assert.Equal(t, 2, again.Confidence)
	})
}

func TestParseRefusesMalformedRecords(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		pointer string // the ValidationError pointer, when the record package itself finds the problem
	}{
		{"confidence is not an integer", string(fixture(t, "broken-confidence.record.json")), "/self_check"},
		{"stub location with line 0", `{"version":"1.0","task_id":"t","self_check":{"confidence":3,"known_risks":[],"untested_paths":[],"summary":"s","possible_stubs":["a.go:0"]}}`, "/self_check"},
		{"stub location of the wrong type", `{"version":"1.0","task_id":"t","self_check":{"confidence":3,"known_risks":[],"untested_paths":[],"summary":"s","possible_stubs":[7]}}`, "/self_check"},
		{"null confidence", `{"version":"1.0","task_id":"t","self_check":{"confidence":null,"known_risks":[],"untested_paths":[],"summary":"s"}}`, "/self_check"},
		{"gate_history is not an array", `{"version":"1.0","task_id":"t","gate_history":{"hash":"x","prev_hash":""}}`, "/gate_history"},
		{"history budget is a string", `{"version":"1.0","task_id":"t","gate_history":[{"retry_budget_after":"2","hash":"x","prev_hash":""}]}`, "/gate_history/0"},
		{"task_id is a number", `{"version":"1.0","task_id":7}`, "/task_id"},
		{"integration is a string", `{"version":"1.0","task_id":"t","integration":"merged"}`, "/integration"},
		{"gate_result is an array", `{"version":"1.0","task_id":"t","gate_result":["pass"]}`, "/gate_result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("record.json", []byte(tc.data))
			require.Error(t, err)
			assert.Nil(t, r)
			var ve *schemas.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, "record.json", ve.File)
			if len(ve.Problems) > 0 && ve.Problems[0].Pointer != "" && tc.pointer != "" {
				// The real schema may find it first and point deeper; both name the section.
				assert.Contains(t, ve.Problems[0].Pointer, tc.pointer)
			}
		})
	}
	syntax := []struct{ name, data string }{
		{"truncated", `{"version":"1.0",`},
		{"trailing data", `{"version":"1.0","task_id":"t"} x`},
		{"duplicate key", `{"version":"1.0","task_id":"t","task_id":"u"}`},
		{"empty", ``},
	}
	for _, tc := range syntax {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("record.json", []byte(tc.data))
			var se *schemas.SyntaxError
			assert.ErrorAs(t, err, &se)
		})
	}
	t.Run("exact key matching", func(t *testing.T) {
		// encoding/json would read "Confidence" into the confidence field; the schema would not.
		// SPEC §2 invariant 8: a key that differs from a known field only by case makes the file
		// invalid, naming the pointer.
		for _, doc := range []string{
			`{"version":"1.0","task_id":"t","self_check":{"confidence":1,"Confidence":5,"known_risks":[],"untested_paths":[],"summary":"s"}}`,
			`{"version":"1.0","TASK_ID":"u","task_id":"t"}`,
			`{"version":"1.0","task_id":"t","self_check":{"confidence":1,"known_risks":[],"untested_paths":[],"summary":"s","possible_stubs":[{"path":"a.go","LINE":3}]}}`,
		} {
			_, err := Parse("record.json", []byte(doc))
			var ve *schemas.ValidationError
			require.ErrorAs(t, err, &ve, doc)
			assert.Contains(t, err.Error(), "only by letter case")
		}
	})
}

func TestParseAgainstTheRecordSchema(t *testing.T) {
	requireRealSchema(t, schemas.Record, `{"version":"1.0","task_id":"t","bogus":1}`)
	tests := []struct{ name, data string }{
		{"unknown top-level key", `{"version":"1.0","task_id":"t","bogus":1}`},
		{"missing task_id", `{"version":"1.0"}`},
		{"confidence out of range", `{"version":"1.0","task_id":"t","self_check":{"confidence":9,"known_risks":[],"untested_paths":[],"summary":"s"}}`},
		{"integration status unknown", `{"version":"1.0","task_id":"t","integration":{"status":"done"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("record.json", []byte(tc.data))
			var ve *schemas.ValidationError
			assert.ErrorAs(t, err, &ve)
		})
	}
}

func TestLoad(t *testing.T) {
	root, _ := openRoot(t)
	name := "missions/m1/tasks/t1/record.json"
	_, err := Load(root, name)
	assert.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, fsutil.WriteFileAtomic(root, name, fixture(t, "full.record.json"), 0o644))
	r, err := Load(root, name)
	require.NoError(t, err)
	assert.Equal(t, "task-042", r.TaskID())

	require.NoError(t, fsutil.WriteFileAtomic(root, name, fixture(t, "broken-confidence.record.json"), 0o644))
	_, err = Load(root, name)
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, name, ve.File)

	_, err = Load(root, "../record.json")
	assert.Error(t, err)
}

func TestGateResultIsWrittenOnlyByTheGate(t *testing.T) {
	for _, name := range []string{"gate_result", "gate_history"} {
		t.Run(name, func(t *testing.T) {
			r := New("t1", testNow)
			before, _ := r.Bytes()
			err := r.SetSection(name, json.RawMessage(`{"verdict":"pass"}`), testNow)
			require.ErrorIs(t, err, ErrGateOnlySection)
			assert.Contains(t, err.Error(), name)
			assert.Contains(t, err.Error(), "geas gate")
			after, _ := r.Bytes()
			assert.Equal(t, before, after)
		})
	}
}

func TestSetSectionRefusals(t *testing.T) {
	tests := []struct {
		name    string
		section string
		raw     string
	}{
		{"version", "version", `"2.0"`},
		{"task_id", "task_id", `"other"`},
		{"created_at", "created_at", `"2020-01-01T00:00:00Z"`},
		{"updated_at", "updated_at", `"2020-01-01T00:00:00Z"`},
		{"empty name", "", `{}`},
		{"invalid JSON", "self_check", `{"confidence":`},
		{"two values", "self_check", `{} {}`},
		{"typed view cannot read it", "self_check", `{"confidence":"high","known_risks":[],"untested_paths":[],"summary":"s"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("full", fixture(t, "full.record.json"))
			require.NoError(t, err)
			before, _ := r.Bytes()
			assert.Error(t, r.SetSection(tc.section, json.RawMessage(tc.raw), testNow))
			after, _ := r.Bytes()
			assert.Equal(t, string(before), string(after), "a refused write leaves the record unchanged")
		})
	}
}

func TestSetSectionValidatesTheWholeRecord(t *testing.T) {
	requireRealSchema(t, schemas.Record, `{"version":"1.0","task_id":"t","bogus":1}`)
	tests := []struct{ name, section, raw string }{
		{"unknown section", "bogus", `{}`},
		{"self_check missing summary", "self_check", `{"confidence":3,"known_risks":[],"untested_paths":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("record.json", fixture(t, "full.record.json"))
			require.NoError(t, err)
			before, _ := r.Bytes()
			beforeSC, _ := r.SelfCheck()

			err = r.SetSection(tc.section, json.RawMessage(tc.raw), testNow)

			var ve *schemas.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, "record.json", ve.File)
			after, _ := r.Bytes()
			assert.Equal(t, string(before), string(after))
			afterSC, _ := r.SelfCheck()
			assert.Equal(t, beforeSC, afterSC)
		})
	}
}

func TestIntegrationIsNotARecordSection(t *testing.T) {
	r := New("t1", testNow)
	err := r.SetSection("integration", json.RawMessage(`{"status":"merged","commit":"abc"}`), testNow)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "geas task integrate")
	for _, bad := range []Integration{{Status: "Merged"}, {Status: ""}, {Status: "merged "}, {Status: "done"}} {
		err := r.SetIntegration(bad, testNow)
		var ve *schemas.ValidationError
		require.ErrorAs(t, err, &ve, "status %q", bad.Status)
	}
	_, ok := r.Integration()
	assert.False(t, ok, "a refused integration is not kept")
	for _, raw := range []string{`{"status":"merged","sha":"abc"}`, `{"Status":"merged"}`, `{"status":"merged","commit":1}`, `[]`, `{"branch":"main"}`} {
		_, _, err := ParseIntegration(IntegrationFile, []byte(raw))
		var ve *schemas.ValidationError
		require.ErrorAs(t, err, &ve, raw)
	}
}

func TestSetSectionUpdatesTimestampAndViews(t *testing.T) {
	r := New("t1", testNow.Add(-1e12))
	require.NoError(t, r.SetSection("self_check", json.RawMessage("  "+validSelfCheck+"\n"), testNow))
	require.NoError(t, r.SetIntegration(Integration{Status: "merged", Commit: "abc"}, testNow))
	b, err := r.Bytes()
	require.NoError(t, err)
	want := `{
  "version": "1.0",
  "task_id": "t1",
  "created_at": "2025-06-01T12:13:20Z",
  "updated_at": "2025-06-01T12:30:00Z",
  "self_check": {
    "confidence": 4,
    "known_risks": [
      "r1"
    ],
    "untested_paths": [],
    "summary": "works"
  }
}
`
	assert.Equal(t, want, string(b))
	sc, ok := r.SelfCheck()
	require.True(t, ok)
	assert.Equal(t, 4, sc.Confidence)
	in, ok := r.Integration()
	require.True(t, ok)
	assert.Equal(t, "abc", in.Commit)
}

func TestSetGateSections(t *testing.T) {
	r, err := Parse("record.json", fixture(t, "minimal.record.json"))
	require.NoError(t, err)
	h1 := HistoryEntry{
		Kind: "gate_run", RunID: "gate-1", Verdict: "fail",
		Causes:            json.RawMessage(`[{"code":"scope_violation","check":"tier2.scope","detail":"x.go"}]`),
		RetryBudgetBefore: intp(3), RetryBudgetAfter: intp(2),
		Head: "abc", InputsSHA256: "def", StartedAt: "2025-06-01T12:29:00Z", Hash: "h1",
	}
	result := json.RawMessage(`{"run_id":"gate-1","verdict":"fail","retry_budget_before":3,"retry_budget_after":2}`)

	require.NoError(t, r.SetGateSections(result, []HistoryEntry{h1}, testNow))

	assert.Equal(t, []string{"gate_result"}, r.Sections(), "the history is not a section of record.json")
	got, ok := r.GateResult()
	require.True(t, ok)
	assert.JSONEq(t, string(result), string(got))
	require.Equal(t, []HistoryEntry{h1}, r.History())

	root, dir := openRoot(t)
	require.NoError(t, r.Write(root, "t/record.json"))
	lines, err := os.ReadFile(filepath.Join(dir, "t", HistoryFile))
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"gate_run","run_id":"gate-1","verdict":"fail","causes":[{"code":"scope_violation","check":"tier2.scope","detail":"x.go"}],"retry_budget_before":3,"retry_budget_after":2,"head":"abc","inputs_sha256":"def","started_at":"2025-06-01T12:29:00Z","prev_hash":"","hash":"h1"}`+"\n", string(lines))
	again, err := Load(root, "t/record.json")
	require.NoError(t, err)
	assert.Equal(t, r.History(), again.History())
	b, err := r.Bytes()
	require.NoError(t, err)
	assert.NotContains(t, string(b), "gate_history")

	t.Run("a second run replaces the sections in place", func(t *testing.T) {
		require.NoError(t, r.SetSection("retrospective", json.RawMessage(`{"what_went_well":[],"what_broke":[]}`), testNow))
		h2 := HistoryEntry{RunID: "gate-2", Verdict: "pass", Causes: json.RawMessage(`[]`), PrevHash: "h1", Hash: "h2"}
		require.NoError(t, r.SetGateSections(json.RawMessage(`{"run_id":"gate-2","verdict":"pass"}`), []HistoryEntry{h1, h2}, testNow))
		assert.Equal(t, []string{"gate_result", "retrospective"}, r.Sections())
		assert.Len(t, r.History(), 2)
		assert.Error(t, r.SetGateSections(json.RawMessage(`{"run_id":"gate-3","verdict":"pass"}`), []HistoryEntry{h2}, testNow), "the history is append-only")
	})
	t.Run("refuses invalid input and keeps the record", func(t *testing.T) {
		before, _ := r.Bytes()
		assert.Error(t, r.SetGateSections(json.RawMessage(`{`), nil, testNow))
		assert.Error(t, r.SetGateSections(json.RawMessage(`"pass"`), nil, testNow))
		assert.Error(t, r.SetGateSections(json.RawMessage(`{"verdict":"pass"}`), []HistoryEntry{{Causes: json.RawMessage(`{`)}}, testNow))
		after, _ := r.Bytes()
		assert.Equal(t, string(before), string(after))
	})
	t.Run("schema", func(t *testing.T) {
		requireRealSchema(t, schemas.Record, `{"version":"1.0","task_id":"t","bogus":1}`)
		before, _ := r.Bytes()
		var ve *schemas.ValidationError
		assert.ErrorAs(t, r.SetGateSections(json.RawMessage(`{"verdict":"maybe"}`), r.History(), testNow), &ve)
		after, _ := r.Bytes()
		assert.Equal(t, string(before), string(after))
	})
}

func TestStubLocation(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want StubLocation
	}{
		{"path:line", `"src/a.go:42"`, StubLocation{"src/a.go", 42}},
		{"path only", `"src/a.go"`, StubLocation{"src/a.go", 0}},
		{"path:line:column", `"src/a.go:42:7"`, StubLocation{"src/a.go", 42}},
		{"colon in the path", `"dir:x/a.go:3"`, StubLocation{"dir:x/a.go", 3}},
		{"trailing colon is part of the path", `"a.go:"`, StubLocation{"a.go:", 0}},
		{"object", `{"path":"src/a.go","line":42}`, StubLocation{"src/a.go", 42}},
		{"object without line", `{"path":"src/a.go"}`, StubLocation{"src/a.go", 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got StubLocation
			require.NoError(t, json.Unmarshal([]byte(tc.in), &got))
			assert.Equal(t, tc.want, got)

			out, err := json.Marshal(got)
			require.NoError(t, err)
			var back StubLocation
			require.NoError(t, json.Unmarshal(out, &back))
			assert.Equal(t, got, back)
		})
	}
	t.Run("marshals the object form", func(t *testing.T) {
		b, err := json.Marshal([]StubLocation{{"a.go", 3}, {"b.go", 0}})
		require.NoError(t, err)
		assert.Equal(t, `[{"path":"a.go","line":3},{"path":"b.go"}]`, string(b))
	})
	bad := []string{`""`, `"a.go:0"`, `{"line":3}`, `{"path":"a.go","line":-1}`, `{"path":"a.go","line":"3"}`, `{"path":"a.go","line":1.5}`, `3`, `null`, `[]`, `{"path":"a","path":"b"}`}
	for _, in := range bad {
		t.Run("refuses "+in, func(t *testing.T) {
			var got StubLocation
			assert.Error(t, json.Unmarshal([]byte(in), &got))
		})
	}
}

func TestHistoryEntryKeepsUnknownKeys(t *testing.T) {
	in := `{"zeta":[1,2],"run_id":"gate-1","verdict":"pass","alpha":{"x":true},"prev_hash":"","hash":"h","retry_budget_after":0}`
	var e HistoryEntry
	require.NoError(t, json.Unmarshal([]byte(in), &e))
	assert.Equal(t, "gate-1", e.RunID)
	assert.Equal(t, intp(0), e.RetryBudgetAfter)
	assert.Nil(t, e.RetryBudgetBefore)
	assert.Equal(t, map[string]json.RawMessage{"zeta": json.RawMessage(`[1,2]`), "alpha": json.RawMessage(`{"x":true}`)}, e.Extra)

	out, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, `{"run_id":"gate-1","verdict":"pass","retry_budget_after":0,"prev_hash":"","hash":"h","alpha":{"x":true},"zeta":[1,2]}`, string(out))

	t.Run("extra cannot shadow a known key", func(t *testing.T) {
		e := HistoryEntry{Verdict: "fail", Extra: map[string]json.RawMessage{"verdict": json.RawMessage(`"pass"`)}}
		out, err := json.Marshal(e)
		require.NoError(t, err)
		assert.Equal(t, `{"verdict":"fail","prev_hash":"","hash":""}`, string(out))
	})
	t.Run("refuses malformed entries", func(t *testing.T) {
		for _, in := range []string{`[]`, `{"verdict":7}`, `{"retry_budget_before":null}`, `{"hash":"a","hash":"b"}`} {
			var e HistoryEntry
			assert.Error(t, json.Unmarshal([]byte(in), &e), in)
		}
		_, err := json.Marshal(HistoryEntry{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}})
		assert.Error(t, err)
	})
}

func TestErrGateOnlySectionIsASentinel(t *testing.T) {
	err := New("t", testNow).SetSection("gate_result", json.RawMessage(`{}`), testNow)
	assert.True(t, errors.Is(err, ErrGateOnlySection))
	assert.Equal(t, "section \"gate_result\" is written only by `geas gate`", err.Error())
}

func TestSeedRecords(t *testing.T) {
	tests := []struct {
		file     string
		sections []string
		valid    bool
	}{
		{"record.example.json", []string{"implementation_contract", "self_check", "gate_result", "verdict", "closure", "retrospective"}, true},
		{"full.record.json", []string{"implementation_contract", "self_check", "gate_result", "retrospective"}, true},
		{"minimal.record.json", nil, true},
		{"stubs.record.json", []string{"self_check", "verdict"}, true},
		{"broken-confidence.record.json", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r, err := Parse(tc.file, fixture(t, tc.file))
			if !tc.valid {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.sections, r.Sections())
		})
	}
	t.Run("stubs in both forms", func(t *testing.T) {
		r, err := Parse("stubs.record.json", fixture(t, "stubs.record.json"))
		require.NoError(t, err)
		sc, ok := r.SelfCheck()
		require.True(t, ok)
		assert.Equal(t, []StubLocation{{"a/b.go", 12}, {"c.py", 0}, {"d:e.rs", 3}, {"f.ts", 0}}, sc.PossibleStubs)
	})
}

// TestAGeasV14RecordGetsNoEnvelopeItHasNot: a record in geas v1.4.0's shape (no version, no
// created_at: its schema has none, and its CLI refuses to add a section to a record with a root key
// the schema lacks) gets no updated_at from the gate's writes; one the geas v1.4.0 CLI stamped
// (created_at and updated_at) has its updated_at refreshed, as that CLI does on each write; and a
// geas v1.0 record gets updated_at as before.
func TestAGeasV14RecordGetsNoEnvelopeItHasNot(t *testing.T) {
	const v14 = `{"task_id":"t1","implementation_contract":{"planned_actions":["a"],"non_goals":[],"status":"approved"}}`
	r, err := Parse("record.json", []byte(v14))
	require.NoError(t, err)
	sc := `{"confidence":4,"known_risks":[],"unverified_cases":["c"],"summary":"works"}`
	require.NoError(t, r.SetSection("self_check", json.RawMessage(sc), testNow))
	require.NoError(t, r.SetGateResult(json.RawMessage(`{"verdict":"pass"}`), testNow))
	b, err := r.Bytes()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, []string{"gate_result", "implementation_contract", "self_check", "task_id"}, slices.Sorted(maps.Keys(doc)))
	got, ok := r.SelfCheck()
	require.True(t, ok)
	assert.Equal(t, []string{"c"}, got.UnverifiedCases)

	stamped := `{"task_id":"t1","updated_at":"2026-04-01T00:00:00Z","created_at":"2026-04-01T00:00:00Z"}`
	r, err = Parse("record.json", []byte(stamped))
	require.NoError(t, err)
	require.NoError(t, r.SetSection("self_check", json.RawMessage(sc), testNow))
	up, ok := r.Section("updated_at")
	require.True(t, ok)
	assert.JSONEq(t, `"`+Timestamp(testNow)+`"`, string(up))

	r, err = Parse("record.json", []byte(`{"version":"1.0","task_id":"t1"}`))
	require.NoError(t, err)
	require.NoError(t, r.SetSection("self_check", json.RawMessage(sc), testNow))
	_, ok = r.Section("updated_at")
	assert.True(t, ok, "a geas v1.0 record gets updated_at")
}
