package fsutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// Lock is an exclusive lock held on a lock file, for instance a task's, held for a whole
// read-modify-write of its record.json and contract.json so that concurrent gate runs (or any
// other writers) on the same task serialize and never lose an update.
type Lock struct {
	f     *os.File
	root  *os.Root
	name  string
	shown string
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
// error then wraps ctx.Err(). geas never deletes the lock file itself.
//
// A lock is a lock only while name still names the file locked (SPEC §2 invariant 6, §7.3): an
// agent can remove record.lock, or put another file, a symbolic link, a directory or a FIFO in
// its place, and the next run would then lock a different file while the first still holds the
// old one. So once the flock is taken, Acquire checks that name is a regular file, not a link,
// and the very file locked (the same device and inode, os.SameFile of fstat and lstat); if it is
// not, it drops that lock and starts again. A path that is not a regular file (a link, a FIFO, an
// empty directory) is not a lock anyone holds: it is removed and a lock file created in its
// place. The holder checks again with Held before each write, since the path can be replaced
// after it was acquired.
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
	wait := lockWaitOf(ctx)
	start := time.Now()
	noticed := false
	delay := lockPollMin
	failed := 0
	var f *os.File
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	for {
		if f == nil {
			var err error
			if f, err = openLockFile(root, name, shown); err != nil {
				// The path changed between the look and the open (something else put there
				// again): look again, a bounded number of times.
				var persistent *lockPathError
				if failed++; failed > maxLockOpenRetries || errors.As(err, &persistent) {
					return nil, err
				}
				if err := sleepCtx(ctx, lockPollMin); err != nil {
					return nil, fmt.Errorf("lock %s: %w", name, err)
				}
				continue
			}
			failed = 0
		}
		err := tryLock(f)
		if err == nil {
			if err := sameLockFile(root, name, shown, f); err != nil {
				// Locked a file that name no longer names: not a lock. Drop it and start again
				// with what name names now.
				_ = f.Close()
				f = nil
				if time.Since(start) >= wait.Timeout {
					return nil, fmt.Errorf("lock %s: gave up after %s: the lock file kept changing: %v", shown, wait.Timeout, err)
				}
				continue
			}
			writeHolder(f)
			l := &Lock{f: f, root: root, name: name, shown: shown}
			f = nil
			return l, nil
		}
		if !errors.Is(err, errHeld) {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		waited := time.Since(start)
		if waited >= wait.Timeout {
			return nil, &LockTimeoutError{Name: shown, Timeout: wait.Timeout, Holder: readHolder(f)}
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
			return nil, fmt.Errorf("lock %s: %w", name, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, lockPollMax)
		// The file waited on may have been removed or replaced meanwhile; its holder would then
		// never release what name names now. Wait on what name names.
		if sameLockFile(root, name, shown, f) != nil {
			_ = f.Close()
			f = nil
		}
	}
}

// openLockFile opens (creating it if missing) the lock file name. Whatever else is at name — a
// symbolic link, a FIFO, a device, an empty directory — was put there by someone other than geas
// and locks nothing: it is removed first, so that the lock is always taken on a regular file of
// the root and opening it can never block (a FIFO) nor follow a link elsewhere in the root.
func openLockFile(root *os.Root, name, shown string) (*os.File, error) {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("lock task: %w", err)
	case !fi.Mode().IsRegular():
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Persistent only when what is there now is what was seen and still cannot be
			// removed (a directory with entries); otherwise it changed meanwhile: try again.
			again, lerr := root.Lstat(name)
			if lerr != nil || again.Mode().Type() != fi.Mode().Type() {
				return nil, fmt.Errorf("lock task: %s changed while it was replaced: %w", shown, err)
			}
			if err = root.Remove(name); err != nil {
				return nil, &lockPathError{fmt.Errorf("lock task: %s is a %s, not a lock file, and cannot be removed: %w", shown, ModeName(fi.Mode()), err)}
			}
		}
	}
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|lockOpenFlags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	return f, nil
}

// maxLockOpenRetries bounds how often Acquire opens the lock file again after the open failed
// because the path changed under it.
const maxLockOpenRetries = 64

// lockPathError is a lock file that cannot be made: retrying would not help.
type lockPathError struct{ err error }

func (e *lockPathError) Error() string { return e.err.Error() }
func (e *lockPathError) Unwrap() error { return e.err }

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrLockLost is what Held wraps when the lock file was removed or replaced while held: another
// process may hold the task's lock now, so nothing more may be written under this one.
var ErrLockLost = errors.New("the task lock was lost")

// sameLockFile checks that name still names the regular file f is open on: not removed, not
// replaced by another file, a link, a directory or a FIFO.
func sameLockFile(root *os.Root, name, shown string, f *os.File) error {
	held, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", shown, ErrLockLost, err)
	}
	now, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s was removed while locked: %w", shown, ErrLockLost)
	case err != nil:
		return fmt.Errorf("%s: %w: %w", shown, ErrLockLost, err)
	case !now.Mode().IsRegular():
		return fmt.Errorf("%s was replaced by a %s while locked: %w", shown, ModeName(now.Mode()), ErrLockLost)
	case !held.Mode().IsRegular() || !os.SameFile(held, now):
		return fmt.Errorf("%s was replaced by another file while locked: %w", shown, ErrLockLost)
	}
	return nil
}

// Held reports whether the lock is still the task's lock: nil while its file is what the lock
// file's name names, an error wrapping ErrLockLost once it was removed or replaced (another run
// may then have locked the new file). A holder checks it before each write it makes under the
// lock, and writes nothing more once it fails.
func (l *Lock) Held() error {
	if l == nil || l.f == nil {
		return fmt.Errorf("lock %s: not held: %w", l.nameOr(), ErrLockLost)
	}
	return sameLockFile(l.root, l.name, l.shown, l.f)
}

func (l *Lock) nameOr() string {
	if l == nil {
		return "(none)"
	}
	return l.shown
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
