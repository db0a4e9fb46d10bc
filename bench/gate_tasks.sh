#!/usr/bin/env bash
# gate_tasks.sh: sourced by gate_vs_git.sh and twins.sh, not run. Defines gate_tasks, which on
# the repository $repo (built by mkrepo.sh, main checked out) sets head, near, far and unmerged
# and writes $repo/.geas: one mission "bench", one task per base, none with an eval command, so
# the gate's cost is its own:
#   near      bench-base, 10 commits back, 20 changed files
#   far       the 10,001st commit of `git rev-list main`
#   unmerged  a commit forked from far and never merged (a loose object, fixed dates: the same
#             SHA every time)
gate_tasks() {
	head=$(git -C "$repo" rev-parse --verify "main^{commit}")
	near=$(git -C "$repo" rev-parse --verify "bench-base^{commit}")
	far=$(git -C "$repo" rev-list "$head" | sed -n 10001p)
	if [[ -z $far ]]; then
		echo "$0: $repo has fewer than 10,001 commits on main" >&2
		exit 1
	fi
	unmerged=$(GIT_COMMITTER_DATE="@1500000000 +0000" GIT_AUTHOR_DATE="@1500000000 +0000" \
		GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com GIT_AUTHOR_NAME=Bench \
		GIT_AUTHOR_EMAIL=bench@example.com git -C "$repo" commit-tree -p "$far" -m "never merged" "$far^{tree}")
	rm -rf "$repo/.geas"
	mkdir -p "$repo/.geas/state"
	echo '{"mission_id": "bench"}' >"$repo/.geas/state/run.json"
	gate_task near "$near"
	gate_task far "$far"
	gate_task unmerged "$unmerged"
}

gate_task() { # gate_task NAME BASE
	local t=$repo/.geas/missions/bench/tasks/$1
	mkdir -p "$t/evidence"
	cat >"$t/contract.json" <<JSON
{
  "version": "1.0", "artifact_type": "task_contract", "artifact_id": "tc-$1",
  "producer_type": "orchestration-authority", "task_id": "$1", "title": "bench",
  "goal": "measure the gate", "task_kind": "implementation", "risk_level": "low",
  "gate_profile": "implementation_change", "vote_round_policy": "never",
  "acceptance_criteria": ["AC1 the change is reviewed"], "eval_commands": [],
  "rubric": {"dimensions": [{"name": "code_quality", "threshold": 3}]},
  "retry_budget": 3, "scope": {"surfaces": ["src/", "docs/", "test/"]},
  "routing": {"primary_worker_type": "software-engineer", "required_reviewer_types": ["design-authority"]},
  "base_snapshot": "$2", "status": "integrated"
}
JSON
	cat >"$t/record.json" <<JSON
{"version": "1.0", "task_id": "$1",
 "self_check": {"confidence": 4, "known_risks": [], "untested_paths": [], "summary": "bench"},
 "integration": {"status": "merged", "branch": "main", "commit": "$head"}}
JSON
	cat >"$t/evidence/design-authority.json" <<JSON
{"version": "1.0", "agent": "design-authority", "task_id": "$1", "role": "reviewer",
 "summary": "reviewed", "verdict": "approved", "concerns": [], "provider_id": "b",
 "criteria_results": [{"criterion": "AC1", "passed": true}],
 "rubric_scores": [{"dimension": "code_quality", "score": 4}]}
JSON
}
