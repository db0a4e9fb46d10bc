package git

import (
	"os"
	"testing"
)

// BenchmarkDiff measures the tree diff and the added-line scan of one pair on an open repository
// (GEAS_BENCH_REPO, GEAS_BENCH_BASE, GEAS_BENCH_HEAD as for BenchmarkGitFacts; skipped without
// them). The diff memo is cleared each iteration, the object cache is not.
//   - changed-files: ChangedFiles, what `git diff --name-only --no-renames` prints;
//   - added-lines: ChangedFiles then AddedLines, what a gate run reads (`git diff -U0` as well);
//   - cold: the same from Open to Close, nothing cached between iterations.
func BenchmarkDiff(b *testing.B) {
	dir, baseRev, headRev := os.Getenv("GEAS_BENCH_REPO"), os.Getenv("GEAS_BENCH_BASE"), os.Getenv("GEAS_BENCH_HEAD")
	if dir == "" || baseRev == "" || headRev == "" {
		b.Skip("set GEAS_BENCH_REPO, GEAS_BENCH_BASE and GEAS_BENCH_HEAD (bench/mkrepo.sh prints them)")
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			repo, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			base, head := mustResolve(b, repo, baseRev), mustResolve(b, repo, headRev)
			if _, err := repo.ChangedFiles(base, head); err != nil {
				b.Fatal(err)
			}
			if _, _, err := repo.AddedLines(base, head); err != nil {
				b.Fatal(err)
			}
			if err := repo.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	base, head := mustResolve(b, repo, baseRev), mustResolve(b, repo, headRev)

	b.Run("changed-files", func(b *testing.B) {
		var n int
		for b.Loop() {
			repo.diffs = nil
			files, err := repo.ChangedFiles(base, head)
			if err != nil {
				b.Fatal(err)
			}
			n = len(files)
		}
		b.ReportMetric(float64(n), "files")
	})
	b.Run("added-lines", func(b *testing.B) {
		var n int
		for b.Loop() {
			repo.diffs = nil
			if _, err := repo.ChangedFiles(base, head); err != nil {
				b.Fatal(err)
			}
			lines, _, err := repo.AddedLines(base, head)
			if err != nil {
				b.Fatal(err)
			}
			n = len(lines)
		}
		b.ReportMetric(float64(n), "lines")
	})
}
