//go:build unix

package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockOpenFlags are added to the lock file's open: a FIFO swapped in at its name after the check
// of openLockFile must not block the open.
const lockOpenFlags = unix.O_NONBLOCK | unix.O_NOFOLLOW

// errHeld is tryLock's error when another holder has the lock.
var errHeld = unix.EWOULDBLOCK

// tryLock takes an exclusive flock on f without waiting; errHeld if another holder has it.
func tryLock(f *os.File) error { return flock(f, unix.LOCK_EX|unix.LOCK_NB) }

// lock takes an exclusive flock on f, waiting for it.
func lock(f *os.File) error { return flock(f, unix.LOCK_EX) }

// unlock releases f's flock.
func unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }

// flock applies how to f, retrying when a signal interrupts a blocking call. It goes through
// SyscallConn rather than Fd so the file keeps its non-blocking mode and cannot be closed under us.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
