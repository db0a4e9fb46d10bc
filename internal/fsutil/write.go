// Package fsutil owns how geas touches files whose names come from input: every path goes
// through an *os.Root. It writes files atomically and durably (WriteFileAtomic, CreateFileAtomic),
// takes the exclusive locks that serialize writers (Acquire with its LockWait, and LockExclusive
// for appends), and reads files with a size bound that a named pipe or a device cannot hang
// (ReadLimited). The locks are flock(2) on unix and LockFileEx on Windows.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"time"
)

// TestHook is nil in geas itself. Tests set it to be called before each durable write (a history
// append, an atomic file write, an event append) with the step's name; an error it returns is
// that write's error, so a test can kill the process at a chosen step or inject a failure such as
// ENOSPC. No production code sets it, and nothing reads an environment variable for it.
var TestHook func(step string) error

// BeforeWrite runs TestHook for step, if set. Every durable write calls it first, those of this
// package and the appends its callers make themselves.
func BeforeWrite(step string) error {
	if TestHook != nil {
		return TestHook(step)
	}
	return nil
}

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

// CreateFileAtomic is WriteFileAtomic for a file that must not exist yet: the final step is a hard
// link instead of a rename, which fails with EEXIST when name exists. It is an atomic "create with
// this content, never overwrite" that a check-then-rename could not give under concurrent writers.
func CreateFileAtomic(root *os.Root, name string, data []byte, perm os.FileMode) error {
	return writeFile(root, name, data, perm, false)
}

// writeFile implements WriteFileAtomic (replace) and CreateFileAtomic (link).
func writeFile(root *os.Root, name string, data []byte, perm os.FileMode, replace bool) (err error) {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := BeforeWrite("write " + name); err != nil {
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
	if err := SyncDir(root, dir); err != nil {
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
	d, err := OpenDir(root, dir) // a named pipe in its place is refused, not waited on
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

// CheckName refuses names that cannot denote a file inside the root before os.Root gets to see
// them, so the error says what was wrong with the name rather than which syscall failed.
// os.Root still does the real containment (symlinks, races).
func CheckName(name string) error {
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

// SyncDir makes a rename in dir durable: without it a crash can forget the rename even though the
// file's data reached the disk.
func SyncDir(root *os.Root, dir string) error {
	d, err := OpenDir(root, dir) // a named pipe in its place is refused, not waited on
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
