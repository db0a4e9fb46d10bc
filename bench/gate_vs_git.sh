#!/usr/bin/env bash
# gate_vs_git.sh [REPO] [N]
#
# The gate's whole overhead on a big repository: `geas gate --dry-run` on a task without eval
# commands, against the two git processes a shell-based gate would run for the same facts
# (`git merge-base --is-ancestor BASE HEAD` and `git diff --name-only BASE HEAD`).
# REPO defaults to /tmp/geas-bench and is built with mkrepo.sh (20,000 commits, 200 changed files)
# when it does not exist. Prints the medians of N runs (default 21) in ms and their ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-/tmp/geas-bench}
n=${2:-21}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C

if [[ ! -d $repo/.git ]]; then
	"$here/mkrepo.sh" "$repo" 20000 200 >/dev/null
fi
base=$(git -C "$repo" rev-parse --verify "bench-base^{commit}")
head=$(git -C "$repo" rev-parse --verify "main^{commit}")

bin=$(mktemp -d)/geas
(cd "$here/.." && go build -o "$bin" ./cmd/geas)

# A mission with one task that needs no eval command: the gate's cost is its own.
t=$repo/.geas/missions/bench/tasks/facts
rm -rf "$repo/.geas"
mkdir -p "$t/evidence" "$repo/.geas/state"
echo '{"mission_id": "bench"}' >"$repo/.geas/state/run.json"
cat >"$t/contract.json" <<JSON
{
  "version": "1.0", "artifact_type": "task_contract", "artifact_id": "tc-facts",
  "producer_type": "orchestration-authority", "task_id": "facts", "title": "bench",
  "goal": "measure the gate", "task_kind": "implementation", "risk_level": "low",
  "gate_profile": "implementation_change", "vote_round_policy": "never",
  "acceptance_criteria": ["AC1 the change is reviewed"], "eval_commands": [],
  "rubric": {"dimensions": [{"name": "code_quality", "threshold": 3}]},
  "retry_budget": 3, "scope": {"surfaces": ["src/", "docs/", "test/"]},
  "routing": {"primary_worker_type": "software-engineer", "required_reviewer_types": ["design-authority"]},
  "base_snapshot": "$base", "status": "integrated"
}
JSON
cat >"$t/record.json" <<JSON
{"version": "1.0", "task_id": "facts",
 "self_check": {"confidence": 4, "known_risks": [], "untested_paths": [], "summary": "bench"},
 "integration": {"status": "merged", "branch": "main", "commit": "$head"}}
JSON
cat >"$t/evidence/design-authority.json" <<JSON
{"version": "1.0", "agent": "design-authority", "task_id": "facts", "role": "reviewer",
 "summary": "reviewed", "verdict": "approved", "concerns": [], "provider_id": "b",
 "criteria_results": [{"criterion": "AC1", "passed": true}],
 "rubric_scores": [{"dimension": "code_quality", "score": 4}]}
JSON

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
run_ms() { # N CMD...: median wall time in ms over N runs after one warm-up
	local count=$1
	shift
	"$@" >/dev/null || true
	for ((i = 0; i < count; i++)); do
		local s e
		s=$(date +%s%N)
		"$@" >/dev/null || true
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | median | awk '{ printf "%.1f", $1 / 1000 }'
}
git_facts() {
	git -C "$repo" merge-base --is-ancestor "$base" "$head"
	git -C "$repo" diff --name-only "$base" "$head"
}
gate() { "$bin" -C "$repo" gate --task facts --dry-run; }

verdict=$("$bin" -C "$repo" --format json gate --task facts --dry-run | awk -F'"' '/"verdict"/ { print $4; exit }' || true)
files=$(git -C "$repo" diff --name-only "$base" "$head" | wc -l)
echo "repo $repo: $(git -C "$repo" rev-list --count "$head") commits, $files changed files; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo "gate verdict on the bench task: $verdict"
g=$(run_ms "$n" git_facts)
m=$(run_ms "$n" gate)
printf '%-58s %8s ms\n' "git merge-base --is-ancestor + git diff --name-only" "$g"
printf '%-58s %8s ms\n' "geas gate --dry-run (whole run, no eval commands)" "$m"
awk -v g="$g" -v m="$m" 'BEGIN { printf "%-58s %8.2f\n", "ratio gate / git", m / g }'
rss=$( { /usr/bin/time -f '%M' "$bin" -C "$repo" gate --task facts --dry-run >/dev/null; } 2>&1 | tail -1)
echo "geas gate --dry-run peak RSS: $((rss / 1024)) MiB"
