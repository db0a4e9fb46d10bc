package contract

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func errorsAs[T error](err error, target *T) bool { return errors.As(err, target) }

// FuzzContractLoad: Parse never panics, and whatever it accepts is a contract the gate can use.
func FuzzContractLoad(f *testing.F) {
	for _, dir := range []string{
		filepath.Join("..", "testdata", "contract"),
		filepath.Join("..", "testdata", "schemas", "task-contract"),
	} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("contract.json", data)
		if err != nil {
			if c != nil {
				t.Fatal("a rejected contract must not be returned")
			}
			return
		}
		if c.TaskID == "" || c.Status == "" || c.GateProfile == "" || len(c.AcceptanceCriteria) == 0 {
			t.Fatalf("accepted a contract without its required fields: %+v", c)
		}
		// Whatever version routes it (types or geas v1.4.0 slots), an accepted contract names its
		// builder and at least one reviewer to judge by.
		if c.Routing.PrimaryWorkerType == "" || len(c.Routing.RequiredReviewerTypes) == 0 {
			t.Fatalf("accepted a contract that names no builder or no reviewer: %+v", c.Routing)
		}
		if c.EvalTimeout <= 0 {
			t.Fatalf("accepted a non-positive eval timeout %v", c.EvalTimeout)
		}
		for _, e := range c.EvalCommands {
			if e.Workdir != "" && checkRelPath(e.Workdir) != nil {
				t.Fatalf("accepted escaping workdir %q", e.Workdir)
			}
		}
	})
}
