package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic replaces the file name under root with data, so that a reader (or a crash) sees
// either the old content or the new one, never a torn file. It writes a temporary file in the same
// directory, fsyncs it, renames it over name and fsyncs the directory so the rename itself is
// durable; the temporary file is removed on any failure. Missing parent directories are created.
//
// This is google/renameio's recipe done through *os.Root: renameio takes plain paths, which would
// let a name that came from input (or a symlink planted in .geas/) write outside the root.
func WriteFileAtomic(root *os.Root, name string, data []byte, perm os.FileMode) error {
	return writeFile(root, name, data, perm, true)
}

// writeFile implements WriteFileAtomic. With replace false the final step is a hard link instead of
// a rename, which fails with EEXIST when name exists: an atomic "create with this content, never
// overwrite" that a check-then-rename could not give under concurrent writers.
func writeFile(root *os.Root, name string, data []byte, perm os.FileMode, replace bool) (err error) {
	if err := checkName(name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := testStep("write " + name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	dir, base := path.Split(name)
	dir = path.Clean(dir)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	f, tmp, err := createTemp(root, dir, base, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	committed := false
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		if !committed || !replace {
			// After a link the temporary name is a second link to the new file; drop it either way.
			_ = root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	err = f.Close()
	f = nil
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if replace {
		err = root.Rename(tmp, name)
	} else {
		err = root.Link(tmp, name)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	committed = true
	if err := syncDir(root, dir); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	removeStaleTemps(root, dir, base, time.Now())
	return nil
}

// staleTempAge is how old a temporary file must be before a later write of the same file removes
// it: far longer than any write takes, so only the leftovers of a killed writer go.
const staleTempAge = 10 * time.Minute

// removeStaleTemps deletes the temporary files a writer killed mid-write left next to base (SIGKILL
// between create and rename). It is best effort: a failure leaves a harmless file.
func removeStaleTemps(root *os.Root, dir, base string, now time.Time) {
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > staleTempAge {
			_ = root.Remove(path.Join(dir, e.Name()))
		}
	}
}

// checkName refuses names that cannot denote a file inside the root before os.Root gets to see
// them, so the error says what was wrong with the name rather than which syscall failed.
// os.Root still does the real containment (symlinks, races).
func checkName(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fmt.Errorf("invalid name %q: want a slash-separated path inside .geas/ without \"..\"", name)
	}
	return nil
}

func createTemp(root *os.Root, dir, base string, perm os.FileMode) (*os.File, string, error) {
	for range 100 {
		tmp := path.Join(dir, fmt.Sprintf(".%s.tmp-%08x", base, rand.Uint32()))
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", fmt.Errorf("create a temporary file in %s: too many collisions", dir)
}

// syncDir makes a rename in dir durable: without it a crash can forget the rename even though the
// file's data reached the disk.
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Lock is an exclusive lock on one task, held for a whole read-modify-write of its record.json and
// contract.json so that concurrent gate runs (or any other writers) on the same task serialize and
// never lose an update.
type Lock struct {
	f    *os.File
	name string
}

// The polling interval of LockTask: short at first, because most holders finish within
// milliseconds, then capped so a long wait does not busy-loop.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 25 * time.Millisecond
)

// DefaultLockTimeout is how long LockTask waits for a held lock unless told otherwise (SPEC §7.3,
// §10: --lock-timeout, GEAS_LOCK_TIMEOUT).
const DefaultLockTimeout = 10 * time.Minute

// DefaultLockNotice is how long LockTask waits before it says so.
const DefaultLockNotice = time.Second

// LockWait says how LockTask waits for a lock another process holds. The zero value waits
// DefaultLockTimeout and says nothing.
type LockWait struct {
	// Timeout is how long to wait before giving up (DefaultLockTimeout when 0).
	Timeout time.Duration
	// Notice is how long to wait before calling Waiting (DefaultLockNotice when 0).
	Notice time.Duration
	// Waiting is called once, from LockTask's goroutine, when the wait has lasted Notice; holder
	// is the pid written in the lock file by the process that holds it, 0 when it cannot be read.
	Waiting func(name string, holder int)
}

type lockWaitKey struct{}

// WithLockWait returns ctx carrying w, which every LockTask under it follows: the commands set it
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
// timeout, for instance a stopped process.
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

// LockTask takes the exclusive lock of the task directory taskDir (relative to root), waiting for
// another holder to release it. The lock is a flock(2) on taskDir/record.lock, which the kernel
// drops when the holder dies, so a crashed run never leaves a task locked. It polls with
// LOCK_NB rather than blocking so that cancelling ctx stops the wait; the error then wraps
// ctx.Err(). The lock file is created if missing and never deleted: deleting a flock file races
// with a process that has just opened it and would let two holders in.
//
// The holder writes its pid into the lock file, so that a process that waits can name it. The
// wait follows the LockWait of ctx (WithLockWait): after its Notice the Waiting callback says
// who holds the lock, and after its Timeout LockTask gives up with a *LockTimeoutError.
//
// gofrs/flock would do the locking, but it opens plain paths; opening through root keeps the task
// id that named the directory from reaching outside .geas/.
func LockTask(ctx context.Context, root *os.Root, taskDir string) (*Lock, error) {
	if err := checkName(taskDir); err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	name := path.Join(taskDir, "record.lock")
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
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			writeHolder(f)
			return &Lock{f: f, name: name}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		waited := time.Since(start)
		if waited >= wait.Timeout {
			holder := readHolder(f)
			_ = f.Close()
			return nil, &LockTimeoutError{Name: ".geas/" + name, Timeout: wait.Timeout, Holder: holder}
		}
		if !noticed && waited >= wait.Notice {
			noticed = true
			if wait.Waiting != nil {
				wait.Waiting(".geas/"+name, readHolder(f))
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
	err := flock(f, unix.LOCK_UN)
	// Closing the descriptor releases the lock too, so a failed LOCK_UN still unlocks.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.name, err)
	}
	return nil
}

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

// Timestamp formats t the way geas v1 writes every timestamp (its isoUtcTimestamp: UTC, second
// precision, a literal Z), so that files geas and this gate write validate against the same schema.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
