#!/bin/sh
# crash.sh: the long crash test. geas gate on a failing task is SIGKILLed at a random moment,
# ITERATIONS times (default 200); after every kill record.json and gate-history.jsonl must parse, the chain verify,
# gate_result match the chain (or be completed from the run's result.json), no lock be held, the budget equal the contract's budget minus the
# fail entries, and every events.jsonl line be whole. Prints how many kills landed before the history
# append (the commit point), after it, how many left record.json to be completed, and how many runs finished first.
#
#   bench/crash.sh [ITERATIONS]        GEAS_CRASH_SEED=N reproduces a run's delays
set -eu
cd "$(dirname "$0")/.."
n=${1:-${GEAS_CRASH_ITERATIONS:-200}}
go test -count=1 -run '^TestCrashNeverTearsARecord$' -v -timeout 60m ./cmd -crash.iterations="$n" |
	grep -E 'crash_test.go|^(--- |ok|FAIL|PASS)'
