package record

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzRecordLoad checks that Parse never panics, and that whatever it accepts survives Bytes:
// a record geas writes back must parse again, with the same sections in the same order and the
// same bytes.
func FuzzRecordLoad(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "testdata", "record", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/record: %v", err)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":"1.0","task_id":"t","gate_history":[{"prev_hash":"","hash":"h","x":{"y":[1,2.50]}}]}`))
	f.Add([]byte(`{"version":"1.0","task_id":"t","self_check":{"confidence":3,"known_risks":[],"untested_paths":[],"summary":"s","possible_stubs":["a:1:2",{"path":"b"}]}}`))
	// geas v1.4.0's shape: no version, unverified_cases for untested_paths.
	f.Add([]byte(`{"task_id":"t","self_check":{"confidence":3,"known_risks":[],"unverified_cases":["c"],"summary":"s"}}`))
	root, err := os.OpenRoot(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer root.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("record.json", data)
		if err != nil {
			if r != nil {
				t.Fatal("Parse returned a record with an error")
			}
			return
		}
		b, err := r.Bytes()
		if err != nil {
			t.Fatalf("Bytes of a parsed record: %v", err)
		}
		again, err := Parse("record.json", b)
		if err != nil {
			t.Fatalf("Parse(Bytes()) failed: %v\ninput: %q\nbytes: %s", err, data, b)
		}
		if got, want := again.Sections(), r.Sections(); !slices.Equal(got, want) {
			t.Fatalf("sections changed: %q, was %q", got, want)
		}
		b2, err := again.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(b2) {
			t.Fatalf("Bytes is not a fixed point:\n%s\n%s", b, b2)
		}
		// The history lives beside record.json: a round trip through the task's files keeps it.
		if err := root.RemoveAll("t"); err != nil {
			t.Fatal(err)
		}
		if err := r.Write(root, "t/record.json"); err != nil {
			t.Fatalf("Write of a parsed record: %v", err)
		}
		loaded, err := Load(root, "t/record.json")
		if err != nil {
			t.Fatalf("Load after Write: %v", err)
		}
		if loaded.TaskID() != r.TaskID() || LastVerdict(loaded) != LastVerdict(r) || BudgetLeft(3, loaded) != BudgetLeft(3, r) {
			t.Fatal("typed views changed across a round trip")
		}
	})
}
