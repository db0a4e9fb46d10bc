#!/usr/bin/env bash
# gitspeed.sh REPO [N]
#
# go-git at git-CLI speed: times, side by side in one run, the git facts of a gate run two ways,
# as whole processes (start-up included on both sides), interleaved run by run so that both see the
# same machine load:
#   git  git merge-base --is-ancestor BASE HEAD; git diff --name-only --no-renames BASE HEAD
#   go   bench/gitfacts: git.Open, Resolve x2, IsAncestor, ChangedFiles, Close
# for three bases against HEAD=main: bench-base (10 commits back), bench-far (about 20,000 back)
# and unmerged (a branch forked at bench-far, not an ancestor), first without a commit-graph
# (REPO's is deleted), then with one (`git commit-graph write --reachable`).
# REPO comes from bench/mkbigrepo.sh. Prints medians of N runs (default 11): wall ms, CPU ms
# (user+sys), the ratio go/git of each, and the peak RSS of gitfacts and of the larger git process
# (/usr/bin/time -f %M, largest of 3 runs), with the load average before and after.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 REPO [N]" >&2
	exit 64
fi
repo=$(realpath "$1")
n=${2:-11}
here=$(cd "$(dirname "$0")" && pwd)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
objects=$(cd "$repo" && realpath "$(git rev-parse --git-path objects)")

bin=$(mktemp -d)/gitfacts
(cd "$here/.." && go build -o "$bin" ./bench/gitfacts)

git_facts() {
	git -C "$repo" merge-base --is-ancestor "$1" "$2" || [[ $? == 1 ]]
	git -C "$repo" diff --name-only --no-renames "$1" "$2" >/dev/null
}
go_facts() { "$bin" "$repo" "$1" "$2" >/dev/null; }

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# peak_kb CMD...: the largest peak RSS in KiB of 3 runs of one process.
peak_kb() {
	for _ in 1 2 3; do
		{ /usr/bin/time -f '%M' "$@" >/dev/null; } 2>&1 | tail -1
	done | sort -n | tail -1
}

echo "repo $repo: $(git -C "$repo" rev-list --count --all) commits," \
	"$(git -C "$repo" count-objects -v | awk '/^in-pack:/ { print $2 }') packed objects in" \
	"$(ls "$objects"/pack/*.pack | wc -l) pack(s), .rev files: $(ls "$objects"/pack/*.rev 2>/dev/null | wc -l)"
echo "$(nproc) cores, $(git --version), $(go version | cut -d' ' -f3); medians of $n runs, interleaved"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-26s %9s %9s %6s %9s %9s %6s %8s %8s\n' graph base "git ms" "go ms" ratio \
	"git cpu" "go cpu" ratio "go RSS" "git RSS"

tmp=$(mktemp -d)
TIMEFORMAT='%3R %3U %3S'
for graph in none commit-graph; do
	if [[ $graph = none ]]; then
		rm -rf "$objects/info/commit-graph" "$objects/info/commit-graphs"
	else
		git -C "$repo" commit-graph write --reachable --no-progress
	fi
	for base in bench-base bench-far unmerged; do
		# Both sides must give the same facts before they are timed.
		want="ancestor=false"
		if git -C "$repo" merge-base --is-ancestor "$base" main; then want="ancestor=true"; fi
		want="$want files=$(git -C "$repo" diff --name-only --no-renames "$base" main | wc -l)"
		got=$("$bin" "$repo" "$base" main)
		if [[ $got != "$want" ]]; then
			echo "$0: gitfacts says '$got', git says '$want' for $base main" >&2
			exit 1
		fi
		: >"$tmp/git" && : >"$tmp/go"
		for ((i = 0; i < n; i++)); do
			{ time git_facts "$base" main; } 2>>"$tmp/git"
			{ time go_facts "$base" main; } 2>>"$tmp/go"
		done
		gw=$(awk '{ print $1 * 1000 }' "$tmp/git" | median)
		ow=$(awk '{ print $1 * 1000 }' "$tmp/go" | median)
		gc=$(awk '{ print ($2 + $3) * 1000 }' "$tmp/git" | median)
		oc=$(awk '{ print ($2 + $3) * 1000 }' "$tmp/go" | median)
		orss=$(peak_kb "$bin" "$repo" "$base" main)
		grss=$( (peak_kb git -C "$repo" merge-base --is-ancestor "$base" main || true
			peak_kb git -C "$repo" diff --name-only --no-renames "$base" main) | sort -n | tail -1)
		awk -v g="$graph" -v b="$base ${want%% *}" -v gw="$gw" -v ow="$ow" -v gc="$gc" -v oc="$oc" \
			-v orss="$orss" -v grss="$grss" 'BEGIN {
				printf "%-12s %-26s %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f %6.1fMB %6.1fMB\n",
					g, b, gw, ow, ow / gw, gc, oc, (gc > 0 ? oc / gc : 0), orss / 1024, grss / 1024 }'
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$tmp" "$(dirname "$bin")"
