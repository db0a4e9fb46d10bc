package tiers

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// ancestors returns the pids of the gate's parent, its parent, and so on up to the first process
// (at most 64 of them), read from /proc/PID/stat (proc(5): field 4 is the parent's pid).
func ancestors() []int {
	var pids []int
	for pid := os.Getppid(); pid > 0 && len(pids) < 64; {
		pids = append(pids, pid)
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			break
		}
		i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
		if i < 0 {
			break
		}
		fields := strings.Fields(string(b[i+1:])) // fields[0] is field 3
		if len(fields) < 2 {
			break
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil || ppid == pid {
			break
		}
		pid = ppid
	}
	return pids
}
