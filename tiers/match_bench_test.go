package tiers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/project"
)

// BenchmarkDryRunManyCriteria is one dry run of a task with n acceptance criteria and one tester
// file with n criteria_results (8,000 x 8,000 took ~35 s when every criterion scanned
// every entry). Matching builds its maps once, so the run grows linearly with n (SPEC §5.3 A).
//
//	go test -run '^$' -bench BenchmarkDryRunManyCriteria -benchtime 3x ./tiers
func BenchmarkDryRunManyCriteria(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			for name, content := range testfixture.ExampleFiles {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			edit := func(rel string, fn func(m map[string]any)) {
				p := filepath.Join(dir, filepath.FromSlash(rel))
				var m map[string]any
				data, err := os.ReadFile(p)
				if err == nil {
					err = json.Unmarshal(data, &m)
				}
				if err != nil {
					b.Fatal(err)
				}
				fn(m)
				if data, err = json.Marshal(m); err == nil {
					err = os.WriteFile(p, data, 0o644)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			criteria := make([]any, n)
			results := make([]any, n)
			for i := range n {
				criteria[i] = fmt.Sprintf("criterion number %d holds", i+1)
				form := fmt.Sprintf("AC%d", i+1)
				if i%2 == 1 {
					form = fmt.Sprintf("Criterion number %d  holds", i+1) // by normalized text
				}
				results[i] = map[string]any{"criterion": form, "passed": true}
			}
			// artifact_only without a base: no git repository needed to measure the matching.
			edit(taskFile("contract.json"), func(m map[string]any) {
				m["acceptance_criteria"] = criteria
				m["gate_profile"] = "artifact_only"
				m["status"] = "reviewed"
				m["base_snapshot"] = ""
			})
			edit(taskFile("evidence/qa-engineer.json"), func(m map[string]any) { m["criteria_results"] = results })
			p, err := project.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			b.ResetTimer()
			for b.Loop() {
				in := Gather(p, testMission, testTask, testTaskDir)
				res, err := Evaluate(b.Context(), in, DefaultEnv(), Options{RunID: "gate-1", DryRun: true, Now: testNow})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Verdict.IsPass() {
					b.Fatalf("verdict %s: %+v", res.Verdict, res.Causes)
				}
			}
		})
	}
}
