package fsutil

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOpenFlags are added to the lock file's open; opening a file on Windows does not block.
const lockOpenFlags = 0

// errHeld is tryLock's error when another holder has the lock.
var errHeld = windows.ERROR_LOCK_VIOLATION

// Windows locks are mandatory: a locked byte cannot be read or written through another handle.
// The lock therefore covers one byte far beyond any content (lockOffsetHigh<<32), so the holder's
// pid stays readable to waiters and an appender's log to readers. Locking past the end of a file
// is allowed.
const lockOffsetHigh = 1 << 30

func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: lockOffsetHigh} }

// tryLock takes an exclusive lock on f without waiting; errHeld if another handle has it.
func tryLock(f *os.File) error {
	return lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
}

// lock takes an exclusive lock on f, waiting for it.
func lock(f *os.File) error { return lockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

func lockFileEx(f *os.File, flags uint32) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	err = rc.Control(func(fd uintptr) {
		lerr = windows.LockFileEx(windows.Handle(fd), flags, 0, 1, 0, lockRange())
	})
	if err != nil {
		return err
	}
	return lerr
}

// unlock releases f's lock.
func unlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	err = rc.Control(func(fd uintptr) {
		uerr = windows.UnlockFileEx(windows.Handle(fd), 0, 1, 0, lockRange())
	})
	if err != nil {
		return err
	}
	return uerr
}
