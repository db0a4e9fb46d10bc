package cmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/geas-dev/geas/internal/fsutil"
)

// The environment of the geas this test binary runs as (TestMain): only this file reads it, and
// only in the test binary, so no geas built from the module can be killed or faulted through it.
const (
	envStepsLog = "GEAS_TEST_STEPS_LOG"  // a file each durable write step's name is appended to
	envKillAt   = "GEAS_TEST_KILL_AT"    // N: SIGKILL the process at its Nth write step, before the write
	envFailAt   = "GEAS_TEST_FAIL_AT"    // TEXT: every write step whose name contains TEXT fails with ENOSPC
	envStall    = "GEAS_TEST_HOOK_STALL" // 1: a hook's decision blocks for ever, in a way nothing cancels
)

// installTestHook sets fsutil.TestHook from the environment, for the kill-point and fault tests.
func installTestHook() {
	if os.Getenv(envStall) == "1" {
		hookStall = func() { select {} }
	}
	logFile, failAt := os.Getenv(envStepsLog), os.Getenv(envFailAt)
	killAt, _ := strconv.Atoi(os.Getenv(envKillAt))
	if logFile == "" && failAt == "" && killAt <= 0 {
		return
	}
	n := 0
	fsutil.TestHook = func(step string) error {
		n++
		if logFile != "" {
			if f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(f, "%d %s\n", n, step)
				f.Close()
			}
		}
		if killAt > 0 && n == killAt {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		if failAt != "" && strings.Contains(step, failAt) {
			return syscall.ENOSPC
		}
		return nil
	}
}
