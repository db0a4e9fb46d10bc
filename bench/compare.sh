#!/usr/bin/env bash
# compare.sh REPO BASE HEAD [N]
#
# Times the git facts a gate run needs on REPO (built by mkrepo.sh) two ways and prints medians of
# N runs (default 21) in milliseconds:
#   git   the two processes a shell-based gate would run:
#         git merge-base --is-ancestor BASE HEAD; git diff --name-only --no-renames BASE HEAD
#         without and with a commit-graph (one is written into REPO if missing; go-git ignores it)
#   go    BenchmarkGitFacts (internal/git/repo_bench_test.go), median of N -count samples of ns/op
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
	echo "usage: $0 REPO BASE HEAD [N]" >&2
	exit 64
fi
repo=$1
n=${4:-21}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
base=$(git -C "$repo" rev-parse --verify "$2^{commit}")
head=$(git -C "$repo" rev-parse --verify "$3^{commit}")

# median reads one number a line and prints the median.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run_ms N CMD... runs CMD N times (after one warm-up) and prints the median wall time in ms.
run_ms() {
	local count=$1
	shift
	"$@"
	for ((i = 0; i < count; i++)); do
		local start end
		start=$(date +%s%N)
		"$@"
		end=$(date +%s%N)
		echo $(((end - start) / 1000))
	done | median | awk '{ printf "%.1f", $1 / 1000 }'
}

facts() { # $1: core.commitGraph value
	git -C "$repo" -c core.commitGraph="$1" merge-base --is-ancestor "$base" "$head"
	git -C "$repo" -c core.commitGraph="$1" diff --name-only --no-renames "$base" "$head" >/dev/null
}
not_ancestor() {
	! git -C "$repo" -c core.commitGraph="$1" merge-base --is-ancestor "$head" "$base"
}

files=$(git -C "$repo" diff --name-only --no-renames "$base" "$head" | wc -l)
echo "repo $repo: $(git -C "$repo" rev-list --count "$head") commits reachable from head," \
	"$files changed files; base $base head $head; $(nproc) cores; medians of $n runs (ms)"
printf '%-48s %s\n' "git, no commit-graph: is-ancestor + diff" "$(run_ms "$n" facts false)"
printf '%-48s %s\n' "git, no commit-graph: is-ancestor (false)" "$(run_ms "$n" not_ancestor false)"
graph="$(git -C "$repo" rev-parse --git-common-dir)/objects/info/commit-graph"
[[ $graph = /* ]] || graph="$repo/$graph"
if [[ ! -e $graph ]]; then
	git -C "$repo" commit-graph write --reachable --no-progress
fi
printf '%-48s %s\n' "git, commit-graph: is-ancestor + diff" "$(run_ms "$n" facts true)"
printf '%-48s %s\n' "git, commit-graph: is-ancestor (false)" "$(run_ms "$n" not_ancestor true)"

cd "$(dirname "$0")/.."
GEAS_BENCH_REPO=$(cd "$OLDPWD" && realpath "$repo") GEAS_BENCH_BASE=$base GEAS_BENCH_HEAD=$head \
	go test -run '^$' -bench '^BenchmarkGitFacts$' -benchtime 0.5s -count "$n" ./internal/git |
	awk '/^BenchmarkGitFacts\// { name = $1; sub(/-[0-9]+$/, "", name); print name, $3 }' |
	sort -k1,1 -s | awk '
		function flush() { if (cnt) { m = (cnt % 2) ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
			printf "%-48s %.3f\n", "go-git, " label[prev], m / 1e6 } cnt = 0 }
		BEGIN {
			label["BenchmarkGitFacts/gate-run"] = "open + resolve x2 + is-ancestor + diff"
			label["BenchmarkGitFacts/facts"] = "is-ancestor + diff, repo open"
			label["BenchmarkGitFacts/not-ancestor"] = "is-ancestor (false), repo open"
		}
		$1 != prev { flush(); prev = $1 }
		{ v[++cnt] = $2; for (i = cnt; i > 1 && v[i] < v[i - 1]; i--) { t = v[i]; v[i] = v[i - 1]; v[i - 1] = t } }
		END { flush() }'
