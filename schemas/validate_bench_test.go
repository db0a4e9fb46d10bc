package schemas

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkValidateExampleTask is the schema validation of one gated task of `gate --all`'s bench
// mission (bench/gate_all.sh copies testdata/example's t2): its contract, record and two evidence
// files, decoded once, validated each iteration by the compiled schemas. It is the part of a task's
// cost that is the library's alone (bench/floors.sh).
func BenchmarkValidateExampleTask(b *testing.B) {
	dir := "../testdata/example/.geas/missions/m1/tasks/t2"
	files := []struct {
		k    Kind
		file string
	}{{Contract, "contract.json"}, {Record, "record.json"}, {Evidence, "evidence/qa-engineer.json"}, {Evidence, "evidence/technical-writer.json"}}
	docs := make([]any, len(files))
	for i, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			b.Fatal(err)
		}
		if docs[i], err = Decode(f.file, data); err != nil {
			b.Fatal(err)
		}
		if err := ValidateValue(f.k, f.file, docs[i]); err != nil {
			b.Fatal(err) // compiles the schema outside the timed loop, and the files are valid
		}
	}
	for b.Loop() {
		for i, f := range files {
			if err := ValidateValue(f.k, f.file, docs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
