#!/usr/bin/env bash
# mkbigrepo.sh DIR [COMMITS]
#
# Builds the repository of the go-git speed benchmark (bench/gitgit.sh) with mkrepo.sh:
# COMMITS commits (default 100000) with a merge every 100, about six objects a commit, all in one
# pack, no commit-graph and no .rev file (git 2.39's defaults). Besides main and bench-base (the
# commit 10 before main) it has bench-far (a main commit about 20,000 back) and unmerged (a branch
# forked at bench-far, never merged: a non-ancestor of main). Prints the commit and object counts.
# Deterministic: the same arguments give the same SHAs.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 DIR [COMMITS]" >&2
	exit 64
fi
commits=${2:-100000}
if ! [[ $commits =~ ^[0-9]+$ ]] || ((commits < 20200)); then
	echo "$0: COMMITS must be at least 20200" >&2
	exit 64
fi
"$(dirname "$0")/mkrepo.sh" "$1" "$commits" 200 >/dev/null
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
echo "$(git -C "$1" rev-list --count --all) commits," \
	"$(git -C "$1" count-objects -v | awk '/^in-pack:/ { print $2 }') objects in" \
	"$(ls "$1"/.git/objects/pack/*.pack | wc -l) pack(s)"
git -C "$1" rev-parse bench-base bench-far unmerged main
