#!/usr/bin/env bash
# bench/attribution.sh [TASKS] [PAIRS] — the cost of attribution (SPEC §5.3 B) to one gate run: a
# mission of TASKS tasks (default 5) created up front and done one after another on one branch,
# each passed; the last one's run (geas gate --dry-run) is timed against geas built at BEFORE
# (default: the commit before attribution, main's merge base), interleaved pair by pair
# (bench/pairtime; PAIRS, default 21). The old build fails the last task with scope_violation (the
# earlier tasks' files): it stops at the same stage (part B) after running everything before it,
# so the two sides do the same work but the attribution. Prints the medians of CPU time (user +
# system) and wall time of each side and their ratios. Needs git and go.
set -euo pipefail
tasks=${1:-5}
pairs=${2:-21}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
# KEEP=1 keeps the project (printed at the end) for a look afterwards.
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$work"' EXIT; fi
(cd "$here/.." && go build -o "$work" ./cmd/geas ./bench/pairtime)
before=${BEFORE:-$(git -C "$here/.." merge-base HEAD main)}
mkdir -p "$work/before/src"
git -C "$here/.." archive "$before" | tar -x -C "$work/before/src"
(cd "$work/before/src" && go build -o "$work/before" ./cmd/geas)
geas=$work/geas
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@geas.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@geas.invalid
export GIT_CONFIG_NOSYSTEM=1 HOME=$work
p=$work/p
git init -q -b main "$p"
cd "$p"
"$geas" init >/dev/null
git add .geas && git commit -qm 'geas init'
for i in $(seq 1 "$tasks"); do
	"$geas" task new --task "t$i" --criterion "t$i.txt exists" --eval "test -f t$i.txt" --surface "t$i.txt" >/dev/null
done
for i in $(seq 1 "$tasks"); do
	t=t$i
	# Each task changes 20 files of its own, so that attribution looks up real paths.
	mkdir -p "$t"
	for j in $(seq 1 20); do echo "$t $j" >"$t/f$j.txt"; done
	echo "$t" >"$t.txt"
	git add -A . ':!.geas' && git commit -qm "$t"
	python3 - ".geas/missions/mission-001/tasks/$t/contract.json" "$t" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["scope"]["surfaces"] = [sys.argv[2] + ".txt", sys.argv[2] + "/"]
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
	"$geas" task record add --task "$t" --section self_check --data '{"confidence": 4, "summary": "done", "known_risks": [], "untested_paths": []}' >/dev/null
	"$geas" evidence add --task "$t" --agent design-authority --role reviewer --data '{"summary": "ok", "verdict": "approved", "concerns": [], "criteria_results": [{"criterion": "AC1", "passed": true}], "rubric_scores": [{"dimension": "code_quality", "score": 4}]}' >/dev/null
	"$geas" task integrate --task "$t" --commit HEAD >/dev/null
	"$geas" task transition --id "$t" --to ready,implementing,reviewed,integrated >/dev/null
	if [[ $i -lt $tasks ]]; then "$geas" gate --task "$t" -q >/dev/null 2>&1; fi
done
last=t$tasks
echo "$tasks tasks in sequence, 21 files each; timing geas gate --task $last --dry-run"
echo "new: $("$geas" gate --task "$last" --dry-run 2>/dev/null | grep '^verdict')" \
	"old ($before): $("$work/before/geas" gate --task "$last" --dry-run 2>/dev/null | grep '^verdict' || true)"
echo "$(nproc) cores; $pairs interleaved pairs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/pairtime" -exit 3 "$pairs" "$work/before/geas" gate --task "$last" --dry-run -q == "$geas" gate --task "$last" --dry-run -q >"$work/times"
awk '
	function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
	function med(a, n) { sortv(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ n++; oc[n] = $2; nc[n] = $5; ow[n] = $1; nw[n] = $4; cr[n] = $5 / $2; wr[n] = $4 / $1 }
	END { printf "cpu  old %.1f ms, new %.1f ms, median ratio %.2f\nwall old %.1f ms, new %.1f ms, median ratio %.2f\n",
		med(oc, n) / 1000, med(nc, n) / 1000, med(cr, n), med(ow, n) / 1000, med(nw, n) / 1000, med(wr, n) }' "$work/times"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n ${KEEP:-} ]]; then echo "kept: $p"; fi
