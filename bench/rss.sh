#!/bin/sh
# rss.sh: memory bounds of geas, measured on a normal build (SPEC §2 invariant 9, §10). Peak RSS
# is not asserted inside `go test -race`, whose race detector multiplies memory; this script
# checks it where it means something.
#
#   bench/rss.sh            the hostile cases that carry a maxrss bound, then the evidence cases below
#
# 1. `go test` (no -race) of every testdata/hostile case with a `maxrss` line: each must stay under
#    its bound (the test asserts it on a normal build and logs the figure).
# 2. Real evidence, not sparse files, on the example project (a copy in a temporary directory):
#      40 x 15 MiB   forty files of valid JSON just under the 16 MiB limit of one file, 600 MiB
#                    together: refused from their sizes, none read (goal <= 200 MB peak RSS)
#      4 x 15 MiB    four such files, 60 MiB together, within the 64 MiB total: all read and
#                    parsed, the worst that the default limits let in
#    It prints the verdict, the exit code and the peak RSS of each run, and fails when a peak is
#    over LIMIT_MB (default 200).
set -eu
cd "$(dirname "$0")/.."
limit=${LIMIT_MB:-200}
cases=$(grep -l '^maxrss' testdata/hostile/*.txtar | xargs -n1 basename | sed 's/\.txtar$//' | paste -sd'|' -)
echo "== hostile cases with a maxrss bound: $cases"
go test -count=1 -run "^TestHostileInput\$/^($cases)\$" -v ./cmd | grep -E 'peak RSS|^(--- |ok|FAIL)|--- (PASS|FAIL)'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/geas" ./cmd/geas
fail=0
run_case() { # NAME FILES: N evidence files of 15 MiB
	name=$1 n=$2
	dir=$tmp/$name
	cp -R testdata/example "$dir"
	ev=$dir/.geas/missions/m1/tasks/t1/evidence
	i=0
	while [ "$i" -lt "$n" ]; do
		# a reviewer file whose summary is a 15 MiB string: valid evidence, 15 MiB on disk
		{
			printf '{"version":"1.0","agent":"challenger-%02d","task_id":"t1","role":"reviewer","verdict":"approved","concerns":[],"summary":"' "$i"
			head -c $((15 * 1024 * 1024 - 200)) /dev/zero | tr '\0' 'a'
			printf '"}\n'
		} >"$ev/challenger-$i.json"
		i=$((i + 1))
	done
	out=$(/usr/bin/time -f 'maxrss_kb=%M' "$tmp/geas" -C "$dir" --format json gate --task t1 --dry-run 2>"$tmp/err" || true)
	rss_kb=$(sed -n 's/^maxrss_kb=//p' "$tmp/err")
	verdict=$(printf '%s' "$out" | sed -n 's/^  "verdict": "\(.*\)",$/\1/p')
	causes=$(printf '%s' "$out" | grep -o '"code": "[a-z_]*"' | sort | uniq -c | tr -s ' ' | paste -sd',' -)
	echo "$name: verdict $verdict, causes$causes, peak RSS $((rss_kb / 1024)) MB"
	if [ $((rss_kb / 1024)) -gt "$limit" ]; then
		echo "$name: peak RSS over $limit MB"
		fail=1
	fi
	rm -rf "$dir"
}
echo "== real evidence (limit $limit MB)"
run_case 40x15MiB 40
run_case 4x15MiB 4
exit $fail
