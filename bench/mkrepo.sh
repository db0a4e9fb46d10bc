#!/usr/bin/env bash
# mkrepo.sh DIR [COMMITS] [FILES]
#
# Builds a synthetic repository for the git-facts benchmark with git fast-import: COMMITS commits
# (default 20000) on main over a tree of 3000 files (src/, docs/, test/), with a side branch merged
# back every 100 commits, then a final stretch of 10 commits that change FILES (default 200)
# distinct files under src/. Prints two lines: the base SHA (the commit before the stretch, also
# tagged bench-base) and the head SHA (main). Everything is deterministic: same arguments, same SHAs.
# HOTFILES=N (default 3000, all of them) makes the commits before the stretch change only the first
# N files (src/ first), so that a base far back still differs from main in about N files.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
	echo "usage: $0 DIR [COMMITS] [FILES]" >&2
	exit 64
fi
dir=$1
commits=${2:-20000}
files=${3:-200}
hot=${HOTFILES:-3000}
stretch=10
if ! [[ $commits =~ ^[0-9]+$ && $files =~ ^[0-9]+$ ]] || ((commits < stretch + 2 || files < 1 || files > 2400)); then
	echo "$0: COMMITS must be >= $((stretch + 2)) and FILES between 1 and 2400" >&2
	exit 64
fi
if ! [[ $hot =~ ^[0-9]+$ ]] || ((hot < 1 || hot > 3000)); then
	echo "$0: HOTFILES must be between 1 and 3000" >&2
	exit 64
fi
if [[ -e $dir && -n $(ls -A "$dir") ]]; then
	echo "$0: $dir exists and is not empty" >&2
	exit 1
fi
mkdir -p "$dir"

export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
# fast-import grows and trims the heap thousands of times; where brk is slow (some sandboxes and
# VMs) that alone costs a minute. Keep glibc from trimming: 40 s -> 2 s there, no effect elsewhere.
export GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=67108864
git -C "$dir" -c init.defaultBranch=main init -q

# The stream: commit n has mark :n. Blobs are inline, delimited with <<EOT so no lengths are needed.
awk -v commits="$commits" -v files="$files" -v stretch="$stretch" -v hot="$hot" '
function path(k) {
	if (k < 2400) return sprintf("src/pkg%02d/file%03d.go", int(k / 60), k % 60)
	if (k < 2700) return sprintf("docs/doc%03d.md", k - 2400)
	return sprintf("test/t%03d_test.go", k - 2700)
}
function blob(k, rev,   j) {
	printf "M 100644 inline %s\ndata <<EOT\n// %s revision %d\n", path(k), path(k), rev
	for (j = 1; j <= 12; j++) printf "line %d of a file that mostly stays the same between revisions\n", j
	printf "EOT\n"
}
function header(ref, n, msg) {
	printf "commit %s\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata <<EOT\n%s\nEOT\n", ref, n, 1500000000 + n * 600, msg
}
function rnd() { seed = (seed * 16807) % 2147483647; return seed }
BEGIN {
	seed = 42
	header("refs/heads/main", 1, "initial tree")
	for (k = 0; k < 3000; k++) blob(k, 1)
	print ""
	base = commits - stretch
	for (n = 2; n <= base; n++) {
		if (n % 100 == 0 && n + 1 < base) {
			# a side branch forked a few commits back, merged by the next commit
			header("refs/heads/side", n, "side " n)
			printf "from :%d\n", n - 5
			sidefile = rnd() % hot
			blob(sidefile, n)
			print ""
			continue
		}
		if (n % 100 == 1 && n > 100 && n < base) {
			header("refs/heads/main", n, "merge side " (n - 1))
			printf "merge :%d\n", n - 1
			blob(sidefile, n - 1)
			print ""
			continue
		}
		header("refs/heads/main", n, "change " n)
		m = 1 + (rnd() % 10 == 0) + (rnd() % 10 == 0)
		for (j = 0; j < m; j++) blob(rnd() % hot, n)
		print ""
	}
	printf "reset refs/tags/bench-base\nfrom :%d\n\n", base
	# the stretch: files distinct src/ files (7919 is prime to 2400), spread over stretch commits
	per = int((files + stretch - 1) / stretch)
	k = 0
	for (n = base + 1; n <= commits; n++) {
		header("refs/heads/main", n, "stretch " n)
		for (j = 0; j < per && k < files; j++) { blob((k * 7919) % 2400, n); k++ }
		print ""
	}
	# Big repositories (more than 20,000 commits before the stretch) also get a base 20,000
	# commits back (tag bench-far) and a branch never merged (unmerged), forked there, for a
	# non-ancestor. They come last in the stream, so main is the same as without them.
	far = base - 20000
	if (far > 100) {
		if (far % 100 == 0) far--
		printf "reset refs/tags/bench-far\nfrom :%d\n\n", far
		for (j = 1; j <= stretch; j++) {
			header("refs/heads/unmerged", commits + j, "unmerged " j)
			if (j == 1) printf "from :%d\n", far
			blob(rnd() % 3000, commits + j)
			print ""
		}
	}
}' | git -C "$dir" fast-import --quiet

git -C "$dir" repack -adq
git -C "$dir" rev-parse bench-base main
