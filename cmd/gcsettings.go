package cmd

import (
	"os"
	"runtime/debug"
)

// Garbage collector settings of geas gate --all (bench/README.md, "GC"): a mission's runs
// allocate a few MB each and keep little, so at the default GOGC of 100 the collector ran 73
// times on 1,000 tasks. GOGC 400 under a soft limit of 48 MiB cut the run's CPU time by about 18 %
// and raised its peak RSS from 34 to 54 MB; the limit keeps a mission with large evidence from
// growing its heap five times over what it holds. A single gate run collected 1 to 6 times at the
// defaults (gctrace: unmerged 1, near 3, far 6 on bench/gate_vs_git.sh's repository; its heap
// passes the runtime's first 4 MB goal while the schemas compile and the index is read), so Main
// applies the same settings to every command (tuneGC): near's CPU fell by about 15 %, far's by
// about 20 %, peak RSS unchanged (28.9 and 47.8 MB, bench/pairtime).
const (
	allGCPercent   = 400
	allMemoryLimit = 48 << 20
)

// tuneGCForAll applies the --all settings unless the user set GOGC or GOMEMLIMIT, and returns
// what puts the previous ones back (Main runs in-process in the tests).
func tuneGCForAll() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(allGCPercent)
	limit := debug.SetMemoryLimit(allMemoryLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// tuneGC applies the collector settings to one command's run (Main), as tuneGCForAll does.
func tuneGC() (restore func()) { return tuneGCForAll() }
