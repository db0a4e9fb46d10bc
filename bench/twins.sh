#!/usr/bin/env bash
# twins.sh [REPO] [PAIRS]
#
# What each hand-written twin of a library is worth to a whole gate run: geas as built (the twin)
# against geas built with -tags lib_NAME (the library path in its place), interleaved pair by pair
# with bench/pairtime (wall, user+system CPU). A twin is kept only when it saves at least 10 % of
# a whole run on some case (STYLE.md "Libraries"); its doc comment gives the figures. The twins
# and their tags:
#   lib_inflate     internal/git/inflate.go      (klauspost/compress zlib, inflate_lib.go)
#   lib_parse       schemas/parse.go             (encoding/json: schemas.decodeStd)
#   lib_entryscan   record/entryscan.go          (schemas.Decode + HistoryEntry.UnmarshalJSON)
#   lib_entrycanon  record/entrycanon.go         (encoding/json + internal/canon)
#   lib_events      record/events_read.go's fastEvent (encoding/json)
# (internal/canon's hand-written canonical writer was measured the same way and removed: it saved
# nothing measurable.) Both builds must print the same report on every case, or the script says so.
# TWINS="inflate parse" picks some (default: every tag still in the tree; "all" builds them all
# at once). Cases:
#   near, far, unmerged   bench/gate_vs_git.sh's tasks on REPO (default /tmp/geas-gate-bench, built
#                         as there when absent), `gate --task T --dry-run`, without a
#                         commit-graph (GRAPH=1: with one, written into REPO)
#   all                   `gate --all --dry-run` over a mission of TASKS (default 100) copies of the
#                         example's failing task, each after HIST (default 30) recorded runs
#   long                  `gate --task t000 --dry-run` after LONG (default 500) more recorded runs
# Prints per twin and case the median ratios library/twin of CPU and wall time, with the first
# and third quartiles, and the twin's medians in ms. A ratio of 1.10: the library path takes 10 %
# longer than the twin.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-/tmp/geas-gate-bench}
pairs=${2:-15}
ntasks=${TASKS:-100} hist=${HIST:-30} long=${LONG:-500}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
twins=${TWINS:-}
if [[ -z $twins ]]; then
	twins=$(cd "$here/.." && grep -rhoE '^//go:build lib_[a-z]+$' --include='*.go' . | sed 's/.*lib_//' | sort -u | tr '\n' ' ')
fi
(cd "$here/.." && go build -o "$work" ./cmd/geas ./bench/pairtime)
for t in $twins; do
	tags=lib_$t
	if [[ $t = all ]]; then
		tags=$(cd "$here/.." && grep -rhoE '^//go:build lib_[a-z]+$' --include='*.go' . | sed 's/.*build //' | sort -u | paste -sd, -)
	fi
	mkdir -p "$work/$t"
	(cd "$here/.." && go build -tags "$tags" -o "$work/$t/geas" ./cmd/geas)
done
bin=$work/geas

# The git tasks: those of gate_vs_git.sh.
if [[ ! -d $repo/.git ]]; then
	HOTFILES=1500 "$here/mkrepo.sh" "$repo" 20000 20 >/dev/null
fi
g() { git -C "$repo" "$@"; }
g checkout -q -f main
rm -rf "$repo/.git/objects/info/commit-graph" "$repo/.git/objects/info/commit-graphs"
graph="no commit-graph"
if [[ ${GRAPH:-0} = 1 ]]; then
	g commit-graph write --reachable --no-progress
	graph="commit-graph written"
fi
# shellcheck source=gate_tasks.sh
. "$here/gate_tasks.sh"
gate_tasks

# The history mission: copies of the example's t2 with a failing review and a budget that lasts,
# gated (recorded) HIST times, t000 LONG times more.
m=$work/mission
mkdir -p "$m"
cp -r "$here/../testdata/example/.geas" "$here/../testdata/example/docs" "$m/"
tasks=$m/.geas/missions/m1/tasks src=$m/.geas/missions/m1/tasks/t2
mv "$src" "$work/t2"
rm -rf "$tasks" && mkdir -p "$tasks"
for ((i = 0; i < ntasks; i++)); do
	id=$(printf 't%03d' "$i")
	mkdir -p "$tasks/$id/evidence"
	for f in contract.json record.json evidence/qa-engineer.json evidence/technical-writer.json; do
		sed "s/\"task_id\": \"t2\"/\"task_id\": \"$id\"/" "$work/t2/$f" >"$tasks/$id/$f"
	done
	sed -i '0,/"passed": true/s//"passed": false/' "$tasks/$id/evidence/qa-engineer.json"
	sed -i 's/"retry_budget": 2/"retry_budget": 100000/' "$tasks/$id/contract.json"
done
for ((i = 0; i < hist; i++)); do "$bin" -C "$m" gate --all -q >/dev/null 2>&1 || true; done
for ((i = 0; i < long; i++)); do "$bin" -C "$m" gate --task t000 -q >/dev/null 2>&1 || true; done

echo "repo $repo: near ${near:0:12}, far ${far:0:12}, unmerged ${unmerged:0:12}, $graph"
echo "mission: $ntasks tasks, $(cat "$tasks"/t001/gate-history.jsonl | wc -l) history lines each," \
	"t000 $(wc -l <"$tasks/t000/gate-history.jsonl"), $(wc -l <"$m/.geas/state/events.jsonl") events"
echo "$(nproc) cores, $(go version | cut -d' ' -f3); $pairs interleaved pairs a case; twins: $twins"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-9s | %-17s | %-17s | %9s %9s\n' twin case "CPU lib/twin m,q1,q3" "wall lib/twin m,q1,q3" "twin cpu" "twin wall"
for t in $twins; do
	for c in near far unmerged all long; do
		case $c in
		all) args=(-C "$m" gate --all --dry-run) ;;
		long) args=(-C "$m" gate --task t000 --dry-run) ;;
		*) args=(-C "$repo" gate --task "$c" --dry-run) ;;
		esac
		# Both builds must give the same verdict and report.
		a=$("$bin" --format json "${args[@]}" 2>&1 | grep -vE '"(run_id|[a-z_]+_at|[a-z_]*ms)"' || true)
		b=$("$work/$t/geas" --format json "${args[@]}" 2>&1 | grep -vE '"(run_id|[a-z_]+_at|[a-z_]*ms)"' || true)
		if [[ $a != "$b" ]]; then
			echo "$t $c: the two builds answer differently" >&2
			diff <(echo "$a") <(echo "$b") | head -20 >&2 || true
		fi
		"$work/pairtime" -exit 3 "$pairs" "$bin" "${args[@]}" == "$work/$t/geas" "${args[@]}" >"$work/times"
		awk -v twin="$t" -v c="$c" '
			function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
			function q(a, n, f,   k) { k = 1 + (n - 1) * f; return a[int(k)] + (k - int(k)) * (a[int(k) + 1] - a[int(k)]) }
			{ n++; cr[n] = $5 / $2; wr[n] = $4 / $1; tc[n] = $2; tw[n] = $1 }
			END {
				sortv(cr, n); sortv(wr, n); sortv(tc, n); sortv(tw, n)
				printf "%-10s %-9s | %5.3f %5.3f %5.3f | %5.3f %5.3f %5.3f | %7.1fms %7.1fms\n", twin, c,
					q(cr, n, .5), q(cr, n, .25), q(cr, n, .75), q(wr, n, .5), q(wr, n, .25), q(wr, n, .75),
					q(tc, n, .5) / 1000, q(tw, n, .5) / 1000 }' "$work/times"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
