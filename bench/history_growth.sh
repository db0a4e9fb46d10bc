#!/usr/bin/env bash
# bench/history_growth.sh [RUNS] — how a run's time grows with the task's history (goal: run
# 1,000 within 1.5x of run 1). Builds the demo project, gives its failing task a budget that does
# not run out, and gates it RUNS times (default 1000), one recorded run after another; prints the
# median wall time of the first and the last twenty runs and their ratio. Needs only geas and git.
set -euo pipefail
runs=${1:-1000}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
# KEEP=1 keeps the project and the times (printed at the end) for a look afterwards.
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
go build -o "$work/geas" ./cmd/geas
geas="$work/geas"
"$geas" demo --keep "$work/p" >/dev/null
p="$work/p"
t=.geas/missions/demo/tasks/farewell
git -C "$p" checkout -q HEAD~2 # farewell's commit (base, shout, farewell, french, benchmark)
python3 - "$p/$t/contract.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["retry_budget"] = 100000
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
"$geas" -C "$p" task approve --task farewell --by orchestration-authority --reason "bench: a budget that lasts" >/dev/null
times="$work/times" cpus="$work/cpus"
# Wall time, and CPU time (user + system, from /usr/bin/time when there is one): on a shared
# machine the wall time also counts the waits for a core, the CPU time does not.
timer=()
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f '%U %S' -o "$work/cpu1"); fi
for i in $(seq 1 "$runs"); do
  s=$(date +%s%N)
  "${timer[@]}" "$geas" -C "$p" gate --task farewell -q >/dev/null 2>&1 || true
  e=$(date +%s%N)
  echo $(( (e - s) / 1000000 )) >> "$times"
  if [ ${#timer[@]} -gt 0 ]; then tail -1 "$work/cpu1" | awk '{printf "%d\n", ($1 + $2) * 1000}' >> "$cpus"; fi
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
first=$(head -20 "$times" | median)
last=$(tail -20 "$times" | median)
echo "runs: $runs; history lines: $(wc -l < "$p/$t/gate-history.jsonl"); events: $(wc -l < "$p/.geas/state/events.jsonl")"
echo "wall: median of runs 1-20: ${first} ms; of the last 20: ${last} ms; ratio $(awk -v a="$last" -v b="$first" 'BEGIN {printf "%.2f", a/b}') (goal <= 1.5)"
if [ -s "$cpus" ]; then
  cfirst=$(head -20 "$cpus" | median)
  clast=$(tail -20 "$cpus" | median)
  echo "cpu:  median of runs 1-20: ${cfirst} ms; of the last 20: ${clast} ms; ratio $(awk -v a="$clast" -v b="$cfirst" 'BEGIN {printf "%.2f", a/b}') (10 ms granularity)"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
if [ -n "${KEEP:-}" ]; then echo "kept: $work (times in $work/times)"; fi
