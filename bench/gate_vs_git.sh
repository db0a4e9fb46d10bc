#!/usr/bin/env bash
# gate_vs_git.sh [REPO] [PAIRS]
#
# The whole gate against the git CLI: `geas gate --dry-run` on
# tasks without eval commands, interleaved pair by pair (bench/pairtime: wall, user+system CPU
# and peak RSS from rusage) with the git processes that do the same git work:
#   git merge-base --is-ancestor BASE HEAD
#   git diff --name-only --no-renames BASE HEAD   (the scope check)
#   git diff -U0 --no-renames BASE HEAD           (the stub scan of added lines: the tasks are
#                                                  implementation_change)
# For a base that is not an ancestor the gate stops at tier 0 (baseline_mismatch), so its git work
# is the first command only. Tasks, each without and with a commit-graph:
#   near      bench-base, 10 commits back, 20 changed files
#   far       the 10,001st commit of `git rev-list main`, about 1,500 changed files
#   unmerged  a commit forked from far and never merged (not an ancestor)
# REPO defaults to /tmp/geas-gate-bench, built when absent with
# `HOTFILES=1500 bench/mkrepo.sh REPO 20000 20` (20,000 commits; before the stretch only 1,500
# files change, so a far base differs in about 1,500). The script writes REPO/.geas and the
# unmerged commit (a loose object, fixed dates: the same SHA every time), checks main out (the
# gate's tier 0 compares the working tree with the head: work git does not do here, unless
# STATUS=1, which adds `git status --porcelain` to the git side of the tasks that reach that
# check, the same comparison; the default figures are without it) and deletes or writes REPO's
# commit-graph. Prints per task and graph the gate/git ratios of CPU and wall time (median,
# min, max over PAIRS pairs, default 21), the medians in ms and both peak RSS.
#
# BEFORE=COMMIT times geas built at COMMIT (git archive of this repository, built in the work
# directory) in place of the git side, on the same tasks: the ratios are then this tree's gate
# against COMMIT's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-/tmp/geas-gate-bench}
pairs=${2:-21}
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: PAIRS must be a positive number, not '$pairs'" >&2
	exit 64
fi
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C

if [[ ! -d $repo/.git ]]; then
	HOTFILES=1500 "$here/mkrepo.sh" "$repo" 20000 20 >/dev/null
fi
g() { git -C "$repo" "$@"; }
# The gate checks that the working tree is the integration head (mkrepo checks nothing out).
g checkout -q -f main
# One mission, one task per base; none has an eval command: the gate's cost is its own.
# shellcheck source=gate_tasks.sh
. "$here/gate_tasks.sh"
gate_tasks

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/.." && go build -o "$work" ./cmd/geas ./bench/pairtime)
bin=$work/geas
if [[ -n ${BEFORE:-} ]]; then
	mkdir -p "$work/before/src"
	git -C "$here/.." archive "$BEFORE" | tar -x -C "$work/before/src"
	(cd "$work/before/src" && go build -o "$work/before" ./cmd/geas)
	echo "old: geas at $BEFORE in place of the git processes; gate: this tree"
fi

echo "repo $repo: $(g rev-list --count "$head") commits on main, head $head"
for t in near:$near far:$far unmerged:$unmerged; do
	b=${t#*:}
	echo "  ${t%%:*}: base $b, $(g rev-list --count "$b..$head") commits in base..head," \
		"$(g diff --name-only --no-renames "$b" "$head" | wc -l) changed files," \
		"$(g diff -U0 --no-renames "$b" "$head" | grep -c '^+[^+]' || true) added lines"
done
echo "$(nproc) cores, $(git --version), $(go version | cut -d' ' -f3); $pairs interleaved pairs a case"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
a=git
if [[ -n ${BEFORE:-} ]]; then a=old; fi
printf '%-8s %-8s %-24s %-12s | %-17s | %-17s | %8s %8s %8s %8s | %7s %7s\n' task graph "gate verdict (exit)" "$a work" \
	"CPU gate/$a m,lo,hi" "wall gate/$a m,lo,hi" "$a cpu" "gatecpu" "$a wall" "gatewall" "$a RSS" "gateRSS"

for graph in none written; do
	rm -rf "$repo/.git/objects/info/commit-graph" "$repo/.git/objects/info/commit-graphs"
	if [[ $graph = written ]]; then g commit-graph write --reachable --no-progress; fi
	for t in near:$near far:$far unmerged:$unmerged; do
		name=${t%%:*} b=${t#*:}
		gitcmds=(git -C "$repo" merge-base --is-ancestor "$b" "$head")
		work_desc="is-anc"
		if g merge-base --is-ancestor "$b" "$head"; then
			gitcmds+=(-- git -C "$repo" diff --name-only --no-renames "$b" "$head"
				-- git -C "$repo" diff -U0 --no-renames "$b" "$head")
			work_desc="is-anc+2diff"
			if [[ ${STATUS:-0} = 1 ]]; then
				gitcmds+=(-- git -C "$repo" status --porcelain)
				work_desc+="+st"
			fi
		fi
		rc=0
		verdict=$("$bin" -C "$repo" --format json gate --task "$name" --dry-run |
			awk -F'"' '/"verdict"/ { print $4; exit }') || rc=$?
		if [[ -n ${BEFORE:-} ]]; then
			gitcmds=("$work/before/geas" -C "$repo" gate --task "$name" --dry-run)
			work_desc="old gate"
		fi
		"$work/pairtime" -exit 3 "$pairs" "${gitcmds[@]}" == "$bin" -C "$repo" gate --task "$name" --dry-run >"$work/times"
		awk -v task="$name" -v graph="$graph" -v verdict="$verdict ($rc)" -v wd="$work_desc" '
			function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
			function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
			{ n++; cr[n] = $5 / $2; wr[n] = $4 / $1; gc[n] = $2; oc[n] = $5; gw[n] = $1; ow[n] = $4
			  if ($3 > grss) grss = $3; if ($6 > orss) orss = $6 }
			END {
				mc = med(cr, n); lc = cr[1]; hc = cr[n]; mw = med(wr, n); lw = wr[1]; hw = wr[n]
				printf "%-8s %-8s %-24s %-12s | %5.2f %5.2f %5.2f | %5.2f %5.2f %5.2f | %6.1fms %6.1fms %6.1fms %6.1fms | %5.1fMB %5.1fMB\n",
					task, graph, verdict, wd, mc, lc, hc, mw, lw, hw, med(gc, n) / 1000, med(oc, n) / 1000,
					med(gw, n) / 1000, med(ow, n) / 1000, grss / 1024, orss / 1024 }' "$work/times"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
