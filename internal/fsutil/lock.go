package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Lock is an exclusive lock held on a lock file, for instance a task's, held for a whole
// read-modify-write of its record.json and contract.json so that concurrent gate runs (or any
// other writers) on the same task serialize and never lose an update.
type Lock struct {
	f    *os.File
	name string
}

// The polling interval of Acquire: short at first, because most holders finish within
// milliseconds, then capped so a long wait does not busy-loop.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 25 * time.Millisecond
)

// DefaultLockTimeout is how long Acquire waits for a held lock unless told otherwise (SPEC §7.3,
// §10: --lock-timeout, GEAS_LOCK_TIMEOUT).
const DefaultLockTimeout = 10 * time.Minute

// DefaultLockNotice is how long Acquire waits before it says so.
const DefaultLockNotice = time.Second

// LockWait says how Acquire waits for a lock another process holds. The zero value waits
// DefaultLockTimeout and says nothing.
type LockWait struct {
	// Timeout is how long to wait before giving up (DefaultLockTimeout when 0).
	Timeout time.Duration
	// Notice is how long to wait before calling Waiting (DefaultLockNotice when 0).
	Notice time.Duration
	// Waiting is called once, from Acquire's goroutine, when the wait has lasted Notice; holder
	// is the pid written in the lock file by the process that holds it, 0 when it cannot be read.
	Waiting func(name string, holder int)
}

type lockWaitKey struct{}

// WithLockWait returns ctx carrying w, which every Acquire under it follows: the commands set it
// once from their flags, and every path that takes a task lock waits the same way.
func WithLockWait(ctx context.Context, w LockWait) context.Context {
	return context.WithValue(ctx, lockWaitKey{}, w)
}

func lockWaitOf(ctx context.Context) LockWait {
	w, _ := ctx.Value(lockWaitKey{}).(LockWait)
	if w.Timeout <= 0 {
		w.Timeout = DefaultLockTimeout
	}
	if w.Notice <= 0 {
		w.Notice = DefaultLockNotice
	}
	return w
}

// LockTimeoutError is a lock wait that gave up (SPEC §7.3): the holder kept the lock for the whole
// timeout, for instance a stopped process. The one lock geas waits for is a task's, and the
// message says so, with how to find the holder and where the wait is set.
type LockTimeoutError struct {
	Name    string
	Timeout time.Duration
	Holder  int // 0: unknown
}

func (e *LockTimeoutError) Error() string {
	who := "another process"
	if e.Holder > 0 {
		who = fmt.Sprintf("process %d", e.Holder)
	}
	return fmt.Sprintf("gave up waiting for the task lock %s after %s: %s holds it (a stopped or hung geas run? check it with ps -p %s; the wait is set by --lock-timeout or GEAS_LOCK_TIMEOUT)",
		e.Name, e.Timeout, who, holderText(e.Holder))
}

func holderText(pid int) string {
	if pid > 0 {
		return strconv.Itoa(pid)
	}
	return "PID"
}

// Acquire takes the exclusive lock of the file name (relative to root, created if missing),
// waiting for another holder to release it; shown is how waits and errors name it. The lock is a
// flock(2) (LockFileEx on Windows), which the system drops when the holder dies, so a crashed run
// never leaves it held. Acquire polls without blocking so that cancelling ctx stops the wait; the
// error then wraps ctx.Err(). The lock file is never deleted: deleting a flock file races with a
// process that has just opened it and would let two holders in.
//
// The holder writes its pid into the lock file, so that a process that waits can name it. The
// wait follows the LockWait of ctx (WithLockWait): after its Notice the Waiting callback says
// who holds the lock, and after its Timeout Acquire gives up with a *LockTimeoutError.
//
// gofrs/flock would do the locking, but it opens plain paths; opening through root keeps the
// input that named the file from reaching outside the root.
func Acquire(ctx context.Context, root *os.Root, name, shown string) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	wait := lockWaitOf(ctx)
	start := time.Now()
	noticed := false
	delay := lockPollMin
	for {
		err := tryLock(f)
		if err == nil {
			writeHolder(f)
			return &Lock{f: f, name: name}, nil
		}
		if !errors.Is(err, errHeld) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		waited := time.Since(start)
		if waited >= wait.Timeout {
			holder := readHolder(f)
			_ = f.Close()
			return nil, &LockTimeoutError{Name: shown, Timeout: wait.Timeout, Holder: holder}
		}
		if !noticed && waited >= wait.Notice {
			noticed = true
			if wait.Waiting != nil {
				wait.Waiting(shown, readHolder(f))
			}
		}
		next := delay
		if !noticed {
			next = min(next, max(wait.Notice-waited, lockPollMin))
		}
		next = min(next, max(wait.Timeout-waited, lockPollMin))
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, lockPollMax)
	}
}

// maxHolderBytes bounds what readHolder reads: a pid and a newline.
const maxHolderBytes = 32

// writeHolder records the calling process as the lock's holder. It is best effort: a lock whose
// holder cannot be written still locks, and waiters then say "another process".
func writeHolder(f *os.File) {
	if err := f.Truncate(0); err != nil {
		return
	}
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
}

// readHolder returns the pid the holder wrote into the lock file, or 0 when there is none that
// reads as a pid.
func readHolder(f *os.File) int {
	buf := make([]byte, maxHolderBytes)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Unlock releases the lock. Calling it again is a no-op, so a deferred Unlock after an explicit
// one is harmless.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	err := unlock(f)
	// Closing the descriptor releases the lock too, so a failed unlock still unlocks.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.name, err)
	}
	return nil
}

// LockExclusive takes an exclusive lock on the open file f, blocking until it is free: for a
// holder that keeps it for one write, such as an appender. Closing f releases it.
func LockExclusive(f *os.File) error { return lock(f) }

// UnlockFile releases a lock LockExclusive took on f.
func UnlockFile(f *os.File) error { return unlock(f) }
