#!/bin/sh
# walk.sh: follow the task id through one whole gate run, phase by phase (bench/walk).
#
# Builds geas with coverage, runs the demo, then gates its farewell task again as a new attempt
# (one reviewer's summary reworded, at the commit the task was built on), so that every phase runs
# in full: the lock and crash completion, the snapshot, the evaluation, the ledger. The walk
# follows only the call sites that run executed.
#
# usage: bench/walk.sh [-v]   (-v prints the walk itself, one line per file entry)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$ROOT"
go build -cover -coverpkg=./... -o "$W/geas" ./cmd/geas
go build -o "$W/walk" ./bench/walk
go list -deps -export -json ./cmd > "$W/pkgs.json"
"$W/geas" demo --keep "$W/demo" > "$W/demo.out" 2>&1
E="$W/demo/.geas/missions/demo/tasks/farewell/evidence/design-authority.json"
sed 's/"Small and readable"/"Small and readable, reworded"/' "$E" > "$E.new" && mv "$E.new" "$E"
mkdir "$W/cov"
(
	cd "$W/demo"
	git checkout -q "$(git log --format=%H --grep='^greeter: farewell$')"
	GOCOVERDIR="$W/cov" "$W/geas" gate --task farewell > "$W/rerun.out" 2>&1 || true
)
go tool covdata textfmt -i "$W/cov" -o "$W/run.prof"
"$W/walk" -dir "$ROOT" -list "$W/pkgs.json" -profile "$W/run.prof" -skip-trivial \
	-types project.Task,tiers.Snapshot -names task,taskID,TaskID,id,ID "$@"
