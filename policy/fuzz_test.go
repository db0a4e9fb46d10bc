package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzPolicyLoad: Load never panics, and a policy it accepts keeps every limit positive, so
// a hostile .geas/gate-policy.json cannot switch a limit off.
func FuzzPolicyLoad(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "schemas", "gate-policy", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"max_evidence_bytes":0,"stub_patterns":["(a+)+$"],"eval_timeout":"-1s"}`))
	dir := f.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { root.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, File), data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(root)
		if err != nil {
			return
		}
		if p.MaxEvidenceBytes <= 0 || p.EvalTimeout <= 0 || p.OutputTailBytes <= 0 || p.ConsecutiveErrorLimit <= 0 {
			t.Fatalf("accepted a policy that switches a limit off: %+v", p)
		}
		for _, re := range p.StubPatterns {
			if re == nil {
				t.Fatal("nil stub pattern")
			}
		}
	})
}
