package fsutil

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadLimited reads a file through root, refusing files larger than limit bytes before reading them.
//
// It opens with O_NONBLOCK, so a named pipe or a device planted where a file should be is refused
// as not regular instead of blocking the caller forever (open(2) of a FIFO waits for a writer).
func ReadLimited(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if limit > 0 && fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	if limit <= 0 {
		return io.ReadAll(f)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit { // the file grew after Stat
		return nil, &TooLargeError{Name: name, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// TooLargeError reports a file refused by size before it was parsed.
type TooLargeError struct {
	Name        string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes exceeds the limit of %d bytes", e.Name, e.Size, e.Limit)
}
