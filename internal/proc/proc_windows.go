package proc

import (
	"os"
	"os/exec"
)

// groupName is what a timeout kills, as the run's error names it: on Windows only the direct
// child (see the package doc).
const groupName = "process"

// oNoFollow is 0: Windows has no O_NOFOLLOW, and openLog's O_CREATE|O_EXCL already refuses a
// name that exists, a symlink included.
const oNoFollow = 0

// setGroup does nothing: Windows has no process groups.
func setGroup(*exec.Cmd) {}

// canRunAs is false: Windows processes are not started as another user here (Spec.RunAs).
const canRunAs = false

// setUser does nothing: validate refuses a Spec with RunAs on Windows.
func setUser(*exec.Cmd, *User) {}

// killProcessGroup kills p alone: Windows has no process groups, so a grandchild p started
// survives it.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

// signalled reports false: a Windows process is not killed by a signal.
func signalled(*os.ProcessState) (string, bool) { return "", false }

// awaitExit reports false: cmd.Wait reaps the child, and killProcessGroup after it finds it gone.
func awaitExit(int) bool { return false }
