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
#   pass     geas gate --task shoutpass       (a recorded pass: a fresh copy of shout, never gated,
#                                              with shout's commit checked out and a
#                                              .geas/gate-policy.json: the defaults, as written
#                                              by geas init's example)
#   error    geas gate --task benchmark       (a recorded error: eval_unstartable, its commit
#                                              checked out)
#   all      geas gate --all --dry-run        over 101 tasks (96 copies of simplify added)
#   allrec   geas gate --all                  recorded, over 105 tasks (100 fresh copies of shout
#                                              added, shout's commit checked out: they pass)
# For each binary (default: geas built from this tree) it prints one line per scenario and file:
# scenario, file, opens, and the most opens of any one path of that name (for `all` and
# `allrec` the opens are summed over all tasks: a task's own files should be opened about once or
# twice per task, at most twice for any one task; the shared ones (events.jsonl, run.json,
# debt-register.json) a few times in total). Needs strace and git. Linux only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 69; }
command -v strace >/dev/null || { echo "$0: needs strace" >&2; exit 69; }
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
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
	# -y: the result is printed with the path the descriptor names (opens go through directory
	# handles, so the argument alone does not say which task's file it is)
	(cd "$dir" && strace -f -qq -y -e trace=openat,open -o "$work/st" "$bin" "$@" >/dev/null 2>&1) || true
	grep -v O_DIRECTORY "$work/st" | grep -v 'O_WRONLY\|O_RDWR' |
		grep -oE '= [0-9]+<[^>]*>$' | sed -E 's/^= [0-9]+<//; s/>$//' | awk -v re="$inputs" '{ b = $0; sub(/.*\//, "", b) } b ~ re { print b, $0 }' |
		sort | uniq -c | awk -v l="$label" '{ n[$2] += $1; if ($1 > m[$2]) m[$2] = $1 }
			END { for (f in n) printf "%-8s %-24s %4d %4d\n", l, f, n[f], m[f] }' | sort -k3,3nr -k2,2
}
# fresh_task DIR FROM TO: a never-gated copy of task FROM named TO (contract status integrated)
fresh_task() {
	local t=$1/.geas/missions/demo/tasks f
	mkdir -p "$t/$3/evidence"
	jq --arg id "$3" '.task_id = $id | .status = "integrated"' "$t/$2/contract.json" >"$t/$3/contract.json"
	jq --arg id "$3" '{created_at, self_check, task_id: $id, version}' "$t/$2/record.json" >"$t/$3/record.json"
	cp "$t/$2/integration.json" "$t/$3/"
	for f in "$t/$2"/evidence/*.json; do
		jq --arg id "$3" '.task_id = $id' "$f" >"$t/$3/evidence/${f##*/}"
	done
}
# checkout DIR TASK: the task's integration commit in DIR's working tree
checkout() { git -C "$1" checkout -q "$(jq -r .commit "$1/.geas/missions/demo/tasks/$2/integration.json")"; }
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
	fresh; fresh_task "$work/w" shout shoutpass; checkout "$work/w" shout
	mkdir "$work/init" && git -C "$work/init" init -q && "$bin" -C "$work/init" init >/dev/null 2>&1 || true
	cp "$work/init/.geas/gate-policy.example.json" "$work/w/.geas/gate-policy.json" && rm -rf "$work/init"
	count "$bin" pass "$work/w" gate --task shoutpass
	fresh; checkout "$work/w" benchmark
	count "$bin" error "$work/w" gate --task benchmark
	fresh; checkout "$work/w" shout
	for i in $(seq 1 100); do fresh_task "$work/w" shout "s$i"; done
	count "$bin" allrec "$work/w" gate --all
	rm -rf "$work/base"
done
