package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadLimited reads a file through root, refusing files larger than limit bytes before reading them.
//
// It opens with O_NONBLOCK, so a named pipe or a device planted where a file should be is refused
// as not regular instead of blocking the caller forever (open(2) of a FIFO waits for a writer).
func ReadLimited(root *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := openLimited(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readWhole(f, name, fi.Size(), limit)
}

// openLimited opens name through root as ReadLimited does: without blocking, refusing what is
// not a regular file. It returns the file's FileInfo from the open handle.
func openLimited(root *os.Root, name string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", name)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readWhole reads f, an open regular file of size bytes when it was last stated, whole from its
// start (at offset 0 whatever f's offset, so a kept handle reads the file again), refusing it
// when it is, or grows to, more than limit bytes (limit <= 0: no limit).
func readWhole(f *os.File, name string, size, limit int64) ([]byte, error) {
	if limit > 0 && size > limit {
		return nil, &TooLargeError{Name: name, Size: size, Limit: limit}
	}
	r := io.NewSectionReader(f, 0, 1<<63-1)
	if limit <= 0 {
		return io.ReadAll(r)
	}
	b, err := readSized(io.LimitReader(r, limit+1), size)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit { // the file grew after Stat
		return nil, &TooLargeError{Name: name, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// readSized is io.ReadAll into a buffer sized from the file's size (at most the limit, which
// ReadLimited checked): a file that did not change is read in one call, plus the one that finds
// its end, where io.ReadAll's doubling from 512 bytes takes five for a 3 KB contract.
func readSized(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size+1) // +1: the read that finds the end needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		} else if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew after Stat
		}
	}
}

// TooLargeError reports a file refused by size before it was parsed.
type TooLargeError struct {
	Name        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes exceeds the limit of %d bytes", e.Name, e.Size, e.Limit)
}

// OpenRegular opens a file through root for reading, as ReadLimited does: with O_NONBLOCK, so that
// a named pipe planted where a file should be is refused as not regular instead of blocking the
// caller forever. The error of a missing file wraps fs.ErrNotExist.
func OpenRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", name, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenDir opens a directory through root for listing, with O_NONBLOCK, so that a named pipe
// planted where a directory should be is refused as not a directory instead of blocking the
// caller forever. The error of a missing directory wraps fs.ErrNotExist.
func OpenDir(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s: not a directory (%s)", name, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ModeName names a file type for a message: "named pipe", "socket", "character device", "device",
// "directory", "symbolic link", "regular file", or "special file".
func ModeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}
