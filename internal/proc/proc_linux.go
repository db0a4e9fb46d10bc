package proc

import "golang.org/x/sys/unix"

// awaitExit blocks until process pid has exited, without reaping it (WNOWAIT): cmd.Wait still
// collects its status. It reports false on an unexpected error; cmd.Wait then does the waiting.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
