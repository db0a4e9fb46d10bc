#!/usr/bin/env bash
# worktree.sh [DIR] [PAIRS]
#
# The working-tree check (SPEC §5.1) on a 100,000-file tree against `git status --porcelain`.
# Builds DIR (default /tmp/geas-wt-bench) with the git CLI when it has no repository: 1,000
# directories of 100 small files, one commit, a refreshed index. Then, interleaved, PAIRS (default
# 11, at least 11) runs of each of bench/wtcheck (the gate's check as one process, start-up
# included) and `git status --porcelain`, first on the clean tree, then with 10 files modified
# (same size, new content). Prints the medians in ms and the per-pair ratio gate/git: median, min,
# max. Timing is wall clock of whole processes; report the machine's cores and load with it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/tmp/geas-wt-bench}
pairs=${2:-11}
if ((pairs < 11)); then
	echo "$0: PAIRS must be at least 11" >&2
	exit 64
fi
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@geas.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@geas.invalid

if [[ ! -d $dir/.git ]]; then
	mkdir -p "$dir"
	(
		cd "$dir"
		git init -q -b main
		awk 'BEGIN {
			for (d = 0; d < 1000; d++) {
				dir = sprintf("src/d%03d", d)
				system("mkdir -p " dir)
				for (f = 0; f < 100; f++) {
					p = sprintf("%s/f%03d.txt", dir, f)
					printf "file %d of directory %d\nsome content\n", f, d > p
					close(p)
				}
			}
		}'
		printf '/build/\n*.log\n' >.gitignore
		git add -A
		git commit -qm '100,000 files'
		git status --porcelain >/dev/null # refresh the index
	)
fi
echo "repository: $(git -C "$dir" ls-files | wc -l) tracked files; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$here/.." && go build -o "$bin/wtcheck" ./bench/wtcheck)

now() { date +%s%N; }
# time_ms CMD...: runs CMD with its output discarded and prints its wall time in ms (3 decimals).
time_ms() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}
stats() { # stats LABEL FILE-OF-NUMBERS
	sort -n "$2" | awk -v l="$1" '{ v[NR] = $1 } END { printf "%-34s median %8.2f  min %8.2f  max %8.2f\n", l, v[int((NR + 1) / 2)], v[1], v[NR] }'
}
bench() { # bench LABEL
	local g s
	: >"$bin/gate" && : >"$bin/git" && : >"$bin/ratio"
	"$bin/wtcheck" "$dir" # warm the page cache once, and show what it found
	git -C "$dir" status --porcelain | head -3
	for ((i = 0; i < pairs; i++)); do
		g=$(time_ms "$bin/wtcheck" "$dir")
		s=$(time_ms git -C "$dir" status --porcelain)
		echo "$g" >>"$bin/gate"
		echo "$s" >>"$bin/git"
		awk -v g="$g" -v s="$s" 'BEGIN { printf "%.3f\n", g / s }' >>"$bin/ratio"
	done
	echo "== $1 ($pairs interleaved pairs)"
	stats "gate working-tree check (ms)" "$bin/gate"
	stats "git status --porcelain (ms)" "$bin/git"
	stats "ratio gate / git" "$bin/ratio"
}

git -C "$dir" checkout -q -- . # start clean
bench "clean tree"
for d in 100 200 300 400 500 600 700 800 900 999; do
	f=$dir/src/d$d/f050.txt
	sed -i 's/some content/SOME CONTENT/' "$f"
done
bench "10 files modified"
git -C "$dir" checkout -q -- .
