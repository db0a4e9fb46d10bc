#!/usr/bin/env bash
# checkout.sh REPO [PAIRS] [N]
#
# The gate's isolated checkout (internal/git Repo.Checkout, SPEC §5.1 "eval_checkout": "isolated")
# against git's, on any local repository (git/git: clone the bare mirror /work/.mirror/git+git/repo).
# For each case, PAIRS (default 11, at least 11) interleaved pairs, timed by bench/pairtime (wall
# and user+system CPU from rusage, peak RSS), each side followed, untimed, by the removal of what it
# wrote (and `git worktree prune`):
#
#   checkout  git  git worktree add --detach DIR HEAD
#             go   bench/checkoutbench REPO HEAD          (git.Open, Resolve, Checkout)
#   overlay   git  git worktree add --detach DIR HEAD; git -C DIR checkout BASE --pathspec-from-file=F
#             go   bench/checkoutbench REPO HEAD -overlay BASE F   (Checkout, then Checkout.Overlay)
#
# The overlay case replaces N paths (default 1500) with their versions at BASE: the first N files,
# by name, that differ between BASE and HEAD and that both have. BASE is the first commit back from
# HEAD (first parents) whose tree differs from HEAD's in at least N such files.
#
# It prints, per case, the go/git ratios of CPU and wall time as median, min and max over the
# pairs, the medians in ms and the peak RSS of both sides. Before timing a case it checks that the
# gate's checkout holds exactly the blobs and modes of git's index after git's side ran (no filters
# on the gate's side: it writes blobs as they are), and stops if not.
#
# REPO is never changed: the script works on a `git clone --no-checkout` of it under $TMPDIR (its
# objects hard-linked when the file system allows), and both sides write under the same work
# directory, so they pay the same file system. KEEP=1 keeps the work directory.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 3 ]]; then
	echo "usage: $0 REPO [PAIRS] [N]" >&2
	exit 64
fi
pairs=${2:-11}
n=${3:-1500}
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]] || ((pairs < 11)); then
	echo "$0: PAIRS must be a number of at least 11, not '$pairs'" >&2
	exit 64
fi
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: N must be a positive number, not '$n'" >&2
	exit 64
fi
here=$(cd "$(dirname "$0")" && pwd)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/checkout-bench.XXXXXX")
if [[ ${KEEP:-} != 1 ]]; then
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fi
mkdir -p "$work/bin" "$work/tmp"
git clone -q --no-checkout "$1" "$work/repo"
g() { git -C "$work/repo" "$@"; }
(cd "$here/.." && go build -o "$work/bin" ./bench/checkoutbench ./bench/pairtime)
cb=$work/bin/checkoutbench
wt=$work/wt
# checkoutbench makes its checkout under $TMPDIR, beside git's worktree.
export TMPDIR=$work/tmp
clean="rm -rf '$wt' '$work'/tmp/geas-checkout-*; git -C '$work/repo' worktree prune"

head=$(g rev-parse --verify 'HEAD^{commit}')
# BASE: the first commit back whose tree differs from HEAD's in at least N files both have.
base="" step=16
while :; do
	c=$(g rev-parse --verify --quiet "HEAD~$step^{commit}") || { c=$(g rev-list --first-parent HEAD | tail -1); }
	got=$(g diff --no-renames --diff-filter=M --name-only "$c" "$head" | wc -l)
	if ((got >= n)) || [[ $c = $(g rev-list --first-parent HEAD | tail -1) ]]; then
		base=$c
		break
	fi
	step=$((step * 2))
done
g diff --no-renames --diff-filter=M --name-only "$base" "$head" | head -n "$n" >"$work/paths"
n=$(wc -l <"$work/paths")

echo "repo $1: HEAD $head, $(g ls-tree -r "$head" | wc -l) files, $(g ls-tree -r -l "$head" | awk '$4 != "-" { s += $4 } END { printf "%.1f MB", s / 1e6 }');" \
	"overlay: $n paths from BASE $base ($(g rev-list --count "$base..$head") commits back)"
echo "$(nproc) cores, $(git --version), $(go version | cut -d' ' -f3); $pairs interleaved pairs a case; work dir $work ($(df -T "$work" | awk 'NR == 2 { print $2 }'))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s | %-17s | %-17s | %8s %8s %8s %8s | %7s %7s\n' case \
	"CPU go/git med,min,max" "wall go/git med,min,max" "git cpu" "go cpu" "git wall" "go wall" "git RSS" "go RSS"

# same CASE: the gate's checkout must hold, byte for byte (no filters, no line-ending conversion:
# git/git's .gitattributes asks git for CRLF in some files, the gate never converts), the blobs
# git's index lists after git's side ran, with the same modes; a gitlink is an empty directory.
same() {
	sh -c "$clean"
	git -C "$work/repo" worktree add -q --detach "$wt" "$head"
	if [[ $1 = overlay ]]; then
		git -C "$wt" checkout -q "$base" --pathspec-from-file="$work/paths"
		dir=$("$cb" "$work/repo" "$head" -overlay "$base" "$work/paths")
	else
		dir=$("$cb" "$work/repo" "$head")
	fi
	git -C "$wt" ls-files -s | awk '$1 != "160000" { sub(/ [0-3]\t/, " "); print }' | sort -k3 >"$work/want"
	(
		cd "$dir"
		find . -type f -printf '%P\n' | sort >"$work/files"
		git hash-object --no-filters --stdin-paths <"$work/files" >"$work/hashes"
		paste -d' ' "$work/hashes" "$work/files" | while read -r h p; do
			if [[ -x $p ]]; then echo "100755 $h $p"; else echo "100644 $h $p"; fi
		done
		find . -type l -printf '%P\n' | while read -r p; do
			echo "120000 $(printf '%s' "$(readlink "$p")" | git hash-object --stdin) $p"
		done
	) | sort -k3 >"$work/got"
	if ! cmp -s "$work/want" "$work/got"; then
		echo "$0: the gate's checkout is not git's index ($1):" >&2
		diff "$work/want" "$work/got" | head -20 >&2
		exit 1
	fi
	sh -c "$clean"
}

for c in checkout overlay; do
	same "$c"
	if [[ $c = overlay ]]; then
		"$work/bin/pairtime" -between "$clean" "$pairs" \
			git -C "$work/repo" worktree add -q --detach "$wt" "$head" -- \
			git -C "$wt" checkout -q "$base" --pathspec-from-file="$work/paths" == \
			"$cb" "$work/repo" "$head" -overlay "$base" "$work/paths" >"$work/times"
	else
		"$work/bin/pairtime" -between "$clean" "$pairs" \
			git -C "$work/repo" worktree add -q --detach "$wt" "$head" == \
			"$cb" "$work/repo" "$head" >"$work/times"
	fi
	awk -v label="$c" '
		function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
		function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		{ n++; cr[n] = $5 / $2; wr[n] = $4 / $1; gc[n] = $2; oc[n] = $5; gw[n] = $1; ow[n] = $4
		  if ($3 > grss) grss = $3; if ($6 > orss) orss = $6 }
		END {
			mc = med(cr, n); lc = cr[1]; hc = cr[n]; mw = med(wr, n); lw = wr[1]; hw = wr[n]
			printf "%-9s | %5.2f %5.2f %5.2f | %5.2f %5.2f %5.2f | %6.0fms %6.0fms %6.0fms %6.0fms | %5.1fMB %5.1fMB\n",
				label, mc, lc, hc, mw, lw, hw, med(gc, n) / 1000, med(oc, n) / 1000,
				med(gw, n) / 1000, med(ow, n) / 1000, grss / 1024, orss / 1024 }' "$work/times"
	if [[ ${RAW:-} = 1 ]]; then cat "$work/times"; fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
