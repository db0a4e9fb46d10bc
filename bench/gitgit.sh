#!/usr/bin/env bash
# gitgit.sh REPO [PAIRS]
#
# The gate's git facts against the git CLI on any local repository: for
# each case, PAIRS (default 11, at least 11 for a figure) interleaved pairs of
#   git  git merge-base --is-ancestor BASE HEAD; git diff --name-only --no-renames BASE HEAD
#   go   bench/gitfacts -z (git.Open, Resolve x2, IsAncestor, ChangedFiles, Close)
# timed by bench/pairtime (wall and user+system CPU from rusage, peak RSS of each process). It
# prints, per case, the go/git ratios of CPU and wall time as median, min and max over the pairs,
# the medians in ms, and the peak RSS of both sides.
#
# Cases: BASE 10 commits back (HEAD~10), about 20,000 back (the 20,001st commit of
# `git rev-list HEAD`; FAR=N changes it), not an ancestor (the ref never merged into HEAD with the
# longest walk, a tag if there is one: the most commits in `git rev-list --count REF...HEAD`), and
# HEAD against HEAD~10 (not an ancestor, the cheap way); each without and with a commit-graph
# (`git commit-graph write --reachable`), each without and with the packs' .rev files.
#
# Before timing a case it checks that both sides give the same answers: the ancestry (git's exit
# code) and the changed files, byte for byte (`git diff --name-only -z`), and stops if not.
#
# REPO is never changed and nothing is downloaded: the script works on a copy under $TMPDIR made
# of hard links (objects; refs, packed-refs, HEAD, config copied), where it removes and restores
# the commit-graph and the .rev files. A pack without a .rev gets one generated into the work
# directory (`git index-pack --rev-index -o`), never next to REPO's pack. KEEP=1 keeps the copy.
# For git/git use a clone (the reference copy is the bare mirror /work/.mirror/git+git/repo);
# for the generated repository bench/mkbigrepo.sh.
#
# BEFORE=COMMIT times bench/gitfacts built at COMMIT (git archive of this repository, built in the
# work directory) in place of the git side: the ratios are then this tree's against COMMIT's, the
# way a change's cost is measured (the answers are still checked against git first).
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 REPO [PAIRS]" >&2
	exit 64
fi
pairs=${2:-11}
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: PAIRS must be a positive number, not '$pairs'" >&2
	exit 64
fi
here=$(cd "$(dirname "$0")" && pwd)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
common=$(git -C "$1" rev-parse --path-format=absolute --git-common-dir)

work=$(mktemp -d "${TMPDIR:-/tmp}/gitgit.XXXXXX")
if [[ ${KEEP:-} != 1 ]]; then
	trap 'rm -rf "$work"' EXIT
fi
copy=$work/repo/.git # a repository without a checked-out tree: git.Open wants a .git
mkdir -p "$copy" "$work/rev" "$work/bin"
if ! cp -al "$common/objects" "$copy/objects" 2>/dev/null; then
	echo "note: $work is on another file system than $common: objects copied, not linked" >&2
	rm -rf "$copy/objects"
	cp -a "$common/objects" "$copy/objects"
fi
cp -a "$common/HEAD" "$common/refs" "$copy/"
for f in packed-refs config shallow; do
	if [[ -f $common/$f ]]; then cp "$common/$f" "$copy/"; fi
done
g() { git --git-dir="$copy" "$@"; }
g config core.bare false
g config --unset core.worktree || true

(cd "$here/.." && go build -o "$work/bin" ./bench/gitfacts ./bench/pairtime)
facts=$work/bin/gitfacts
a_name=git
if [[ -n ${BEFORE:-} ]]; then
	mkdir -p "$work/before/src"
	git -C "$here/.." archive "$BEFORE" | tar -x -C "$work/before/src"
	(cd "$work/before/src" && go build -o "$work/before" ./bench/gitfacts)
	a_name=old
fi

# The .rev files: REPO's are set aside (they are links), missing ones generated beside them.
shopt -s nullglob
for pack in "$copy"/objects/pack/*.pack; do
	name=$(basename "$pack" .pack)
	if [[ -f ${pack%.pack}.rev ]]; then
		mv "${pack%.pack}.rev" "$work/rev/"
	else
		echo "generating a .rev for $name (git index-pack --rev-index, into the work directory)" >&2
		git index-pack --rev-index -o "$work/rev/$name.idx" "$pack" >/dev/null
		rm -f "$work/rev/$name.idx"
	fi
done
revs() { # revs on|off
	rm -f "$copy"/objects/pack/*.rev
	if [[ $1 = on ]]; then ln "$work"/rev/*.rev "$copy/objects/pack/"; fi
}

head=$(g rev-parse --verify 'HEAD^{commit}')
near=$(g rev-parse --verify 'HEAD~10^{commit}')
far=$(g rev-list HEAD | sed -n "$((${FAR:-20000} + 1))p")
if [[ -z $far ]]; then far=$(g rev-list HEAD | tail -1); fi
# The ref never merged into HEAD with the longest walk: tags first, else branches.
unmerged="" unmerged_ref="" longest=-1
for kind in refs/tags refs/heads; do
	while read -r ref; do
		c=$(g rev-parse --verify --quiet "$ref^{commit}") || continue
		n=$(g rev-list --count "$c...$head")
		if ((n > longest)); then longest=$n unmerged=$c unmerged_ref=${ref#refs/*/}; fi
	done < <(g for-each-ref --no-merged="$head" --format='%(refname)' "$kind")
	if [[ -n $unmerged ]]; then break; fi
done
cases=("10 back|$near|$head" "~20,000 back|$far|$head")
if [[ -n $unmerged ]]; then
	cases+=("unmerged $unmerged_ref|$unmerged|$head")
else
	echo "note: every ref is merged into HEAD: no unmerged case" >&2
fi
cases+=("HEAD vs 10 back|$head|$near")

echo "repo $1 (copy $copy): $(g rev-list --count HEAD) commits in HEAD," \
	"$(g count-objects -v | awk '/^in-pack:/ { print $2 }') packed objects in" \
	"$(ls "$copy"/objects/pack/*.pack | wc -l) pack(s); HEAD $head"
for c in "${cases[@]}"; do
	IFS='|' read -r label b h <<<"$c"
	echo "  $label: $b -> $h, $(g rev-list --count "$b..$h") commits in base..head, $(g rev-list --count "$h..$b") in head..base"
done
echo "$(nproc) cores, $(git --version), $(go version | cut -d' ' -f3); $pairs interleaved pairs a case"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n ${BEFORE:-} ]]; then echo "old: bench/gitfacts at $BEFORE in place of git; go: this tree"; fi
printf '%-7s %-5s %-28s | %-17s | %-17s | %8s %8s %8s %8s | %7s %7s\n' graph .rev case \
	"CPU go/$a_name med,min,max" "wall go/$a_name med,min,max" "$a_name cpu" "go cpu" "$a_name wall" "go wall" "$a_name RSS" "go RSS"

# check LABEL BASE HEAD: both sides must give the same answers before they are timed.
check() {
	local want=false
	if g merge-base --is-ancestor "$2" "$3"; then want=true; fi
	{
		printf 'ancestor=%s\n' "$want"
		g diff --name-only -z --no-renames "$2" "$3"
	} >"$work/want"
	"$facts" -z "$work/repo" "$2" "$3" >"$work/got"
	if ! cmp -s "$work/want" "$work/got"; then
		echo "$0: gitfacts and git disagree on $1 ($2 $3) with graph=$graph rev=$rev:" >&2
		echo "  git:      $(head -1 "$work/want"), $(tail -n +2 "$work/want" | tr -cd '\0' | wc -c) files" >&2
		echo "  gitfacts: $(head -1 "$work/got"), $(tail -n +2 "$work/got" | tr -cd '\0' | wc -c) files" >&2
		cmp "$work/want" "$work/got" >&2 || true
		exit 1
	fi
}

for graph in none written; do
	rm -rf "$copy/objects/info/commit-graph" "$copy/objects/info/commit-graphs"
	if [[ $graph = written ]]; then g commit-graph write --reachable --no-progress; fi
	for rev in off on; do
		revs "$rev"
		for c in "${cases[@]}"; do
			IFS='|' read -r label b h <<<"$c"
			check "$label" "$b" "$h"
			if [[ -n ${BEFORE:-} ]]; then
				"$work/bin/pairtime" "$pairs" "$work/before/gitfacts" -z "$work/repo" "$b" "$h" == \
					"$facts" -z "$work/repo" "$b" "$h" >"$work/times"
			else
				"$work/bin/pairtime" "$pairs" \
					git --git-dir="$copy" merge-base --is-ancestor "$b" "$h" -- \
					git --git-dir="$copy" diff --name-only --no-renames "$b" "$h" == \
					"$facts" -z "$work/repo" "$b" "$h" >"$work/times"
			fi
			awk -v graph="$graph" -v rev="$rev" -v label="$label" '
				function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
				function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
				{ n++; cr[n] = $5 / $2; wr[n] = $4 / $1; gc[n] = $2; oc[n] = $5; gw[n] = $1; ow[n] = $4
				  if ($3 > grss) grss = $3; if ($6 > orss) orss = $6 }
				END {
					mc = med(cr, n); lc = cr[1]; hc = cr[n]; mw = med(wr, n); lw = wr[1]; hw = wr[n]
					printf "%-7s %-5s %-28s | %5.2f %5.2f %5.2f | %5.2f %5.2f %5.2f | %6.1fms %6.1fms %6.1fms %6.1fms | %5.1fMB %5.1fMB\n",
						graph, rev, label, mc, lc, hc, mw, lw, hw, med(gc, n) / 1000, med(oc, n) / 1000,
						med(gw, n) / 1000, med(ow, n) / 1000, grss / 1024, orss / 1024 }' "$work/times"
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
