#!/usr/bin/env bash
# schema_compile.sh [N] [OLD]
#
# A process's schema compile (goal: at most 4 ms): bench/schemacompile, run N times (default
# 41), each in a fresh process, prints the CPU time of compiling what a dry gate run compiles.
# Prints the median, minimum and maximum in µs. With OLD, a git revision, the same program built at
# that revision (schemacompile.go copied into a worktree of it) runs interleaved with this one, run
# for run, and the line shows both and the median of the ratios new/old: the machine's speed drifts
# from minute to minute, so only interleaved figures compare.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-41}
old=${2:-}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: N must be a positive number, not '$n'" >&2
	exit 64
fi
work=$(mktemp -d)
trap 'git -C "$here/.." worktree remove --force "$work/old" 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$here/.." && go build -o "$work/new" ./bench/schemacompile)
if [[ -n $old ]]; then
	git -C "$here/.." worktree add -q --detach "$work/old" "$old"
	rm -rf "$work/old/bench/schemacompile"
	cp -r "$here/schemacompile" "$work/old/bench/schemacompile"
	(cd "$work/old" && go build -o "$work/oldbin" ./bench/schemacompile)
fi
for ((i = 0; i < n; i++)); do
	if [[ -n $old ]]; then
		o=$("$work/oldbin")
	else
		o=0
	fi
	echo "$("$work/new") $o"
done >"$work/times"
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $n processes each"
awk -v old="$old" '
	function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
	function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ k++; nw[k] = $1; od[k] = $2; if ($2 > 0) r[k] = $1 / $2 }
	END {
		printf "schema compile, this tree: median %d us, min %d, max %d CPU\n", med(nw, k), nw[1], nw[k]
		if (old != "") {
			printf "schema compile, %s: median %d us, min %d, max %d CPU\n", old, med(od, k), od[1], od[k]
			printf "ratio this/old, median of %d interleaved pairs: %.2f\n", k, med(r, k)
		}
	}' "$work/times"
