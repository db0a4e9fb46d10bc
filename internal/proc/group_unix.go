//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// groupName is what a timeout kills, as the run's error names it.
const groupName = "process group"

// oNoFollow keeps openLog from opening a symlink planted where the log goes.
const oNoFollow = syscall.O_NOFOLLOW

// setGroup starts cmd's process as the leader of a new process group.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// canRunAs says that a process can be run as another user here (Spec.RunAs).
const canRunAs = true

// setUser makes cmd's process run as u (its uid, gid and supplementary groups); nil leaves it
// the gate's. Call it after setGroup, which sets SysProcAttr.
func setUser(cmd *exec.Cmd, u *User) {
	if u == nil {
		return
	}
	groups := u.Groups
	if groups == nil {
		groups = []uint32{} // an empty list drops the gate's own supplementary groups
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: groups}
}

// killProcessGroup SIGKILLs the group p leads (Setpgid makes the leader's pid the pgid).
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// signalled returns the name of the signal that killed the process, if one did.
func signalled(state *os.ProcessState) (string, bool) {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String(), true
	}
	return "", false
}
