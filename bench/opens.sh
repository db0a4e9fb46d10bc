#!/usr/bin/env bash
# opens.sh [BIN ...]
#
# How often one gate run opens each of its input files, counted with strace (openat/open that
# succeed, read-only: writes are the ledger's and are not counted). The demo project
# (`geas demo --keep`) is copied fresh for each scenario:
#   fail     geas gate --task simplify        (a recorded run that fails: tests_modified)
#   dryrun   geas gate --task simplify --dry-run
#   block    geas gate --task french          (missing_review)
#   recheck  geas gate --task shout           (a verified task: re-checked, nothing written)
#   verify   geas gate verify --task shout
#   all      geas gate --all --dry-run        over 101 tasks (96 copies of simplify added)
# For each binary (default: geas built from this tree) it prints one line per scenario and file:
# scenario, file, opens. For `all` the count is over all tasks: a task's own files should be
# opened about once or twice per task (101–202), the shared ones (events.jsonl, run.json,
# debt-register.json) a few times in total. Linux only (needs strace).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v strace >/dev/null || { echo "$0: needs strace" >&2; exit 69; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bins=("$@")
if [[ ${#bins[@]} -eq 0 ]]; then
	(cd "$here/.." && go build -o "$work/geas" ./cmd/geas)
	bins=("$work/geas")
fi
inputs='^(contract\.json|contract\.pinned\.json|record\.json|integration\.json|gate-history\.jsonl|events\.jsonl|debt-register\.json|gate-policy\.json|run\.json|[a-z-]+\.json)$'
count() { # bin label dir args...
	local bin=$1 label=$2 dir=$3
	shift 3
	(cd "$dir" && strace -f -qq -e trace=openat,open -o "$work/st" "$bin" "$@" >/dev/null 2>&1) || true
	grep -v ENOENT "$work/st" | grep -v O_DIRECTORY | grep -v 'O_WRONLY\|O_RDWR' |
		grep -oE '"[^"]*"' | tr -d '"' | sed 's#.*/##' | grep -E "$inputs" |
		sort | uniq -c | sort -rn | awk -v l="$label" '{printf "%-8s %-24s %4d\n", l, $2, $1}'
}
for bin in "${bins[@]}"; do
	echo "# $bin"
	"$bin" demo --keep "$work/base" >/dev/null 2>&1 || true
	fresh() { rm -rf "$work/w" && cp -a "$work/base" "$work/w"; }
	fresh; count "$bin" fail "$work/w" gate --task simplify
	fresh; count "$bin" dryrun "$work/w" gate --task simplify --dry-run
	fresh; count "$bin" block "$work/w" gate --task french
	fresh; count "$bin" recheck "$work/w" gate --task shout
	fresh; count "$bin" verify "$work/w" gate verify --task shout
	fresh
	tasks=$work/w/.geas/missions/demo/tasks
	for i in $(seq 1 96); do
		cp -a "$tasks/simplify" "$tasks/t$i"
		sed -i.bak "s/\"simplify\"/\"t$i\"/" "$tasks/t$i/contract.json" && rm -f "$tasks/t$i/contract.json.bak"
	done
	count "$bin" all "$work/w" gate --all --dry-run
	rm -rf "$work/base"
done
