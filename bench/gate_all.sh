#!/usr/bin/env bash
# gate_all.sh [TASKS] [N] [DIR]
#
# Time of `geas gate --all` on a generated mission of TASKS tasks (default 1000), with --jobs 1, 2
# and 4: the medians of N runs each (default 5) of `--dry-run` (nothing written, so every run sees
# the same inputs), as wall ms, wall ms a task and CPU (user + sys) ms a task, runs of the three
# interleaved; then one real run with --jobs 1 and 4 on fresh copies of the mission. The speed-up
# of --jobs 2 over --jobs 1 means something only with two free cores: the load is printed.
# The mission is the one TestGateAllJobsAgree (cmd/gate_all_test.go) builds: copies of the example
# artifact_only task t2 (no git, no eval commands), named t000..., cycling through six kinds:
# pass, fail (a failing review), block (no qa-engineer evidence), error (an invalid regex),
# drafted (not_ready), closure_ready (pass). DIR defaults to a temporary directory.
# GEAS_BENCH_EVENTS=N writes an event log of N lines into .geas/state/events.jsonl first (half
# task transitions of the mission's tasks, half gate_result events with a hash of another
# mission's, which the history check parses and matches to no task of m1): the log every task's
# history check reads (the run's index of it parses each line once; a recorded run reads it whole for
# every task, a dry one only when it changed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ntasks=${1:-1000}
nevents=${GEAS_BENCH_EVENTS:-0}
n=${2:-5}
dir=${3:-$(mktemp -d)}

bin=$(mktemp -d)/geas
(cd "$here/.." && go build -o "$bin" ./cmd/geas)

mission() { # DEST: write the mission into DEST
	local dest=$1 src=$here/../testdata/example
	rm -rf "$dest"
	mkdir -p "$dest"
	cp -r "$src/.geas" "$src/docs" "$dest/"
	local tasks=$dest/.geas/missions/m1/tasks t2=$src/.geas/missions/m1/tasks/t2
	rm -rf "$tasks"
	local kinds=(pass fail block error drafted closure)
	for ((i = 0; i < ntasks; i++)); do
		local id kind
		id=$(printf 't%03d' "$i")
		kind=${kinds[i % ${#kinds[@]}]}
		mkdir -p "$tasks/$id/evidence"
		for f in contract.json record.json evidence/qa-engineer.json evidence/technical-writer.json; do
			sed "s/\"task_id\": \"t2\"/\"task_id\": \"$id\"/" "$t2/$f" >"$tasks/$id/$f"
		done
		case $kind in
		fail) sed -i '0,/"passed": true/s//"passed": false/' "$tasks/$id/evidence/qa-engineer.json" ;;
		block) rm "$tasks/$id/evidence/qa-engineer.json" ;;
		error) sed -i 's/"pattern": "--verbose"/"pattern": "("/' "$tasks/$id/contract.json" ;;
		drafted) sed -i 's/"status": "reviewed"/"status": "drafted"/' "$tasks/$id/contract.json" ;;
		closure) sed -i 's/"gate_profile": "artifact_only"/"gate_profile": "closure_ready"/' "$tasks/$id/contract.json" ;;
		esac
	done
	if ((nevents > 0)); then
		mkdir -p "$dest/.geas/state"
		awk -v n="$nevents" -v t="$ntasks" 'BEGIN {
			for (i = 0; i < n; i++) {
				id = sprintf("t%03d", i % t)
				if (i % 2) printf "{\"timestamp\":\"2026-12-01T12:00:00Z\",\"event_type\":\"gate_result\",\"mission_id\":\"m0\",\"task_id\":\"%s\",\"agent\":\"geas-gate\",\"data\":{\"run_id\":\"gate-%d\",\"verdict\":\"pass\",\"hash\":\"%064x\"}}\n", id, i, i
				else printf "{\"timestamp\":\"2026-12-01T12:00:00Z\",\"event_type\":\"task_transition\",\"mission_id\":\"m1\",\"task_id\":\"%s\",\"agent\":\"orchestration_authority\",\"data\":{\"from\":\"drafted\",\"to\":\"ready\"}}\n", id
			}
		}' >"$dest/.geas/state/events.jsonl"
	fi
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
wall_ms() { # CMD...: wall time of one run in ms (the gate's exit code is the mission's outcome, not a failure)
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
run_ms() { # CMD...: "wall_ms cpu_ms" of one run (cpu: user + sys, from /usr/bin/time)
	local t0 t1 cpu
	t0=$(date +%s%N)
	/usr/bin/time -o "$dir/time.out" -f '%U %S' "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$dir/time.out")
	echo "$(((t1 - t0) / 1000000)) $cpu"
}

mission "$dir/m"
"$bin" -C "$dir/m" --format json gate --all --dry-run --jobs 1 | jq -c '.overall | {counted, counts}' || true
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ntasks tasks, $nevents events, median of $n runs"
for jobs in 1 2 4; do
	"$bin" -C "$dir/m" gate --all --dry-run --jobs "$jobs" -q >/dev/null 2>&1 || true # warm-up
done
for ((r = 0; r < n; r++)); do
	for jobs in 1 2 4; do
		echo "$jobs $(run_ms "$bin" -C "$dir/m" gate --all --dry-run --jobs "$jobs" -q)"
	done
done >"$dir/runs"
for jobs in 1 2 4; do
	wall=$(awk -v j="$jobs" '$1 == j { print $2 }' "$dir/runs" | median)
	cpu=$(awk -v j="$jobs" '$1 == j { print $3 }' "$dir/runs" | median)
	awk -v j="$jobs" -v w="$wall" -v c="$cpu" -v t="$ntasks" \
		'BEGIN { printf "gate --all --dry-run --jobs %d   %6d ms   %.3f ms a task   cpu %.3f ms a task\n", j, w, w / t, c / t }'
done
w1=$(awk '$1 == 1 { print $2 }' "$dir/runs" | median)
w2=$(awk '$1 == 2 { print $2 }' "$dir/runs" | median)
awk -v a="$w1" -v b="$w2" 'BEGIN { printf "--jobs 2 is %.2fx faster than --jobs 1 (wall)\n", a / b }'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for jobs in 1 4; do
	mission "$dir/w$jobs"
	printf 'gate --all (writes) --jobs %d    %6s ms\n' "$jobs" "$(wall_ms "$bin" -C "$dir/w$jobs" gate --all --jobs "$jobs" -q)"
done
# Both real runs recorded the same verdicts.
for jobs in 1 4; do
	for f in "$dir/w$jobs"/.geas/missions/m1/tasks/*/record.json; do
		[[ $f =~ tasks/([^/]+)/ ]] && printf '%s %s\n' "${BASH_REMATCH[1]}" "$(jq -r '.gate_result.verdict // "-"' "$f")"
	done >"$dir/verdicts.$jobs"
done
if cmp -s "$dir/verdicts.1" "$dir/verdicts.4"; then echo "same verdicts with --jobs 1 and --jobs 4"; else
	echo "verdicts differ:" && diff "$dir/verdicts.1" "$dir/verdicts.4"
	exit 1
fi
