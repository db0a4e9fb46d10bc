#!/usr/bin/env bash
# floors.sh [REPO] [PAIRS]
#
# What bounds the whole-gate and --all figures from below, each measured as CPU time (user +
# system, from rusage) of whole processes interleaved pair by pair with bench/pairtime (median over
# PAIRS pairs, default 21):
#   empty        a Go program that does nothing (bench/startcost/empty): process start and exit
#   jsonschema   a Go program that only links santhosh-tekuri/jsonschema/v5 (bench/startcost/
#                jsonschema): the library's package init, which every geas process pays
#   geas version the whole geas binary's start-up, nothing done
#   compile      a fresh process's schema compile for a dry gate run (bench/schemacompile; it
#                prints its own getrusage figure, so this line is its median over PAIRS runs)
#   wtcheck      the working-tree check of SPEC §5.1 as a process (bench/wtcheck: open, resolve
#                HEAD, compare the tree), against `git status --porcelain`, which makes the same
#                comparison with the same system calls; on REPO (default /tmp/geas-gate-bench,
#                bench/gate_vs_git.sh's, which must exist and have main checked out)
#   validate     `go test -bench BenchmarkValidateExampleTask ./schemas`: the schema validation of
#                one gated task of bench/gate_all.sh's mission, in-process, ns a task
# bench/README.md ("Floors") sets these beside the whole-gate figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-/tmp/geas-gate-bench}
pairs=${2:-21}
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: PAIRS must be a positive number, not '$pairs'" >&2
	exit 64
fi
if [[ ! -d $repo/.git ]]; then
	echo "$0: $repo is not a git repository: run bench/gate_vs_git.sh first, or name one" >&2
	exit 1
fi
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/.." && go build -o "$work" ./cmd/geas ./bench/pairtime ./bench/schemacompile ./bench/wtcheck &&
	go build -o "$work/empty" ./bench/startcost/empty && go build -o "$work/jsonschema" ./bench/startcost/jsonschema)

# median CPU ms of column COL (2: side A, 5: side B) of a pairtime output
med() { awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), $pairs pairs"
"$work/pairtime" "$pairs" "$work/empty" == "$work/jsonschema" >"$work/a"
"$work/pairtime" "$pairs" "$work/jsonschema" == "$work/geas" version >"$work/b"
echo "empty Go process            $(med "$work/a" 2) ms CPU"
echo "jsonschema v5 linked        $(med "$work/a" 5) ms CPU (same pairs)"
echo "jsonschema v5 linked        $(med "$work/b" 2) ms CPU"
echo "geas version                $(med "$work/b" 5) ms CPU (same pairs)"
for ((i = 0; i < pairs; i++)); do "$work/schemacompile"; done | sort -n |
	awk '{ v[NR] = $1 } END { printf "schema compile (dry run)    %.2f ms CPU, in its process\n", v[int((NR + 1) / 2)] / 1000 }'
git -C "$repo" status --porcelain >/dev/null
"$work/pairtime" "$pairs" "$work/wtcheck" "$repo" == git -C "$repo" status --porcelain >"$work/c"
echo "wtcheck on $repo    $(med "$work/c" 2) ms CPU ($(git -C "$repo" ls-files | wc -l) tracked files)"
echo "git status --porcelain      $(med "$work/c" 5) ms CPU (same pairs)"
(cd "$here/.." && go test -run '^$' -bench BenchmarkValidateExampleTask -count 5 ./schemas) |
	awk '/^BenchmarkValidateExampleTask/ { v[++n] = $3 } END {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
		printf "validate one --all task      %.3f ms CPU (median of %d benchmark runs, in-process)\n", v[int((n + 1) / 2)] / 1e6, n }'
