package gate

import (
	"os"
	"testing"

	"github.com/geas-dev/geas/project"
)

// BenchmarkAllDryRun is gate --all --dry-run on the mission GEAS_BENCH_MISSION names (a project
// directory, as bench/gate_all.sh builds it), with GEAS_BENCH_JOBS workers (default 1). It is
// skipped without the variable, so go test stays fast.
func BenchmarkAllDryRun(b *testing.B) {
	dir := os.Getenv("GEAS_BENCH_MISSION")
	if dir == "" {
		b.Skip("GEAS_BENCH_MISSION is not set")
	}
	jobs := 1
	if os.Getenv("GEAS_BENCH_JOBS") == "2" {
		jobs = 2
	}
	for b.Loop() {
		p, err := project.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		m, err := All(b.Context(), p, "m1", AllOptions{Jobs: jobs, DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Tasks) == 0 {
			b.Fatal("no tasks")
		}
		_ = p.Close()
	}
}
