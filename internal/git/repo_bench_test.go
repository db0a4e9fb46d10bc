package git

import (
	"os"
	"testing"
)

// BenchmarkGitFacts measures the git facts one gate run needs on a large repository, built by
// bench/mkrepo.sh and named by GEAS_BENCH_REPO, GEAS_BENCH_BASE and GEAS_BENCH_HEAD (see
// bench/README.md). Without them it is skipped, so `go test ./...` stays fast.
//
//   - gate-run: what one gate run does — open, resolve base and head, IsAncestor, ChangedFiles,
//     close — with nothing cached between iterations.
//   - facts: IsAncestor and ChangedFiles on an open repository (its object cache warm).
//   - not-ancestor: IsAncestor(head, base) on an open repository: false, so the walk reads every
//     commit base reaches, the worst case of the walk.
func BenchmarkGitFacts(b *testing.B) {
	dir, baseRev, headRev := os.Getenv("GEAS_BENCH_REPO"), os.Getenv("GEAS_BENCH_BASE"), os.Getenv("GEAS_BENCH_HEAD")
	if dir == "" || baseRev == "" || headRev == "" {
		b.Skip("set GEAS_BENCH_REPO, GEAS_BENCH_BASE and GEAS_BENCH_HEAD (bench/mkrepo.sh prints them)")
	}

	b.Run("gate-run", func(b *testing.B) {
		var files int
		for b.Loop() {
			files = gateRunFacts(b, dir, baseRev, headRev)
		}
		b.ReportMetric(float64(files), "files")
	})

	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	base, head := mustResolve(b, repo, baseRev), mustResolve(b, repo, headRev)

	b.Run("facts", func(b *testing.B) {
		for b.Loop() {
			if ok, err := repo.IsAncestor(base, head); err != nil || !ok {
				b.Fatalf("IsAncestor = %v, %v", ok, err)
			}
			if _, err := repo.ChangedFiles(base, head); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("not-ancestor", func(b *testing.B) {
		for b.Loop() {
			if ok, err := repo.IsAncestor(head, base); err != nil || ok {
				b.Fatalf("IsAncestor = %v, %v", ok, err)
			}
		}
	})
}

// gateRunFacts does what one gate run does with git and returns the number of changed files.
func gateRunFacts(b *testing.B, dir, baseRev, headRev string) int {
	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	base, head := mustResolve(b, repo, baseRev), mustResolve(b, repo, headRev)
	if ok, err := repo.IsAncestor(base, head); err != nil || !ok {
		b.Fatalf("IsAncestor = %v, %v", ok, err)
	}
	files, err := repo.ChangedFiles(base, head)
	if err != nil {
		b.Fatal(err)
	}
	return len(files)
}

func mustResolve(b *testing.B, repo *Repo, rev string) string {
	sha, err := repo.Resolve(rev)
	if err != nil {
		b.Fatal(err)
	}
	return sha
}

// BenchmarkOpenClose measures Open and Close of the repository named by GEAS_BENCH_REPO (any
// repository; skipped without it): a gate run opens its repository more than once.
func BenchmarkOpenClose(b *testing.B) {
	dir := os.Getenv("GEAS_BENCH_REPO")
	if dir == "" {
		b.Skip("set GEAS_BENCH_REPO to a repository")
	}
	for b.Loop() {
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
