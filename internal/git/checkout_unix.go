//go:build linux || darwin

package git

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// fdDir is a directory of a checkout being written, as a bare descriptor: a file is one openat of
// one component (O_CREAT|O_EXCL|O_NOFOLLOW), its writes, one fstat and a close, with no os.File
// (which costs four fcntl and a failed registration with the poller per file, a fifth of the
// system calls of a checkout).
type fdDir struct{ fd int }

// openCheckoutDir returns the top of a checkout being written, opened from its root.
func openCheckoutDir(root *os.Root) (ckDir, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: root.Name(), Err: err}
	}
	unix.CloseOnExec(fd)
	return fdDir{fd}, nil
}

// retryEINTR calls f until it does not fail with EINTR.
func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

func (d fdDir) mkdir(name string, open bool) (ckDir, error) {
	if err := retryEINTR(func() error { return unix.Mkdirat(d.fd, name, 0o755) }); err != nil {
		return nil, &fs.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	if !open {
		return nil, nil
	}
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return fdDir{fd}, nil
}

func (d fdDir) writeFile(name string, perm os.FileMode, data []byte, rc io.Reader) (fileStat, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return fileStat{}, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	w := fdWriter{fd}
	if rc != nil {
		_, err = io.Copy(w, rc)
	} else {
		_, err = w.Write(data)
	}
	var st unix.Stat_t
	if err == nil {
		if err = retryEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
			err = &fs.PathError{Op: "fstat", Path: name, Err: err}
		}
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = &fs.PathError{Op: "close", Path: name, Err: cerr}
	}
	if err != nil {
		return fileStat{}, err
	}
	return fileStatOfUnix(&st), nil
}

func (d fdDir) symlink(target, name string) (fileStat, error) {
	if err := retryEINTR(func() error { return unix.Symlinkat(target, d.fd, name) }); err != nil {
		return fileStat{}, &fs.PathError{Op: "symlinkat", Path: name, Err: err}
	}
	var st unix.Stat_t
	if err := fstatatNoFollow(d.fd, name, &st); err != nil {
		return fileStat{}, err
	}
	return fileStatOfUnix(&st), nil
}

func (d fdDir) close() { _ = unix.Close(d.fd) }

// fdWriter writes to a descriptor, all of p or an error.
type fdWriter struct{ fd int }

func (w fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := unix.Write(w.fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "write", Path: "checkout file", Err: err}
		}
		if k == 0 {
			return n, errors.New("write: no progress")
		}
		n += k
	}
	return n, nil
}
