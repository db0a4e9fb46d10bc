//go:build unix && !linux

package proc

// awaitExit reports false where waitid(2) with WNOWAIT is not available (macOS, the BSDs): the
// caller then lets cmd.Wait reap the leader and kills the process group after it, as on Linux
// when the wait fails. The group id could in principle be reused between the two; the Linux path
// has no such window.
func awaitExit(int) bool { return false }
