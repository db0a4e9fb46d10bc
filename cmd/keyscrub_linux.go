//go:build linux

package cmd

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/geas-dev/geas/gate"
)

// scrubSigningKey keeps GEAS_GATE_KEY from the processes the gate runs by way of the gate's own
// process (SPEC §9: children never see the key). Their environment is built without it
// (proc.Run withholds it), but the kernel still shows the environment the gate was started with in
// /proc/PID/environ, which an eval command can read through its $PPID; unsetting the variable does
// not change that copy. So, when the key is set, the entry is overwritten with NUL bytes in that
// copy (through /proc/self/mem; the runtime's copy, which os.Getenv reads, stays), and the process
// is made non-dumpable, which keeps other processes of the same user out of its /proc files and
// memory. A key read from GEAS_GATE_KEY_FILE is in the gate's memory too: the process is made
// non-dumpable then as well. It is best effort: without /proc there is nothing to read the key
// from either.
func scrubSigningKey() {
	if !gate.SigningKeySet() {
		return
	}
	defer func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }()
	if os.Getenv(gate.SigningKeyEnv) == "" {
		return
	}
	start, end, ok := environBounds()
	if !ok || end <= start || end-start > 64<<20 {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if n, err := mem.ReadAt(block, start); err != nil || n != len(block) {
		return
	}
	prefix := []byte(gate.SigningKeyEnv + "=")
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		if bytes.HasPrefix(block[off:off+n], prefix) {
			_, _ = mem.WriteAt(make([]byte, n), start+int64(off))
		}
		off += n + 1
	}
}

// environBounds reads env_start and env_end, fields 50 and 51 of /proc/self/stat (proc(5)).
func environBounds() (start, end int64, ok bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(b[i+1:])) // fields[0] is field 3
	if len(fields) < 51-2 {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(fields[50-3], 10, 64)
	end, err2 := strconv.ParseInt(fields[51-3], 10, 64)
	return start, end, err1 == nil && err2 == nil
}
