package git

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/geas-dev/geas/internal/fsutil"
)

// Everything the gate reads from a repository goes through openRegular or openDirectory: agents
// can write every file under .git, and open(2) of a named pipe waits for a writer for ever (SPEC
// §2 invariant 9). Both open with O_NONBLOCK, which makes the open of a FIFO return at once, and
// then check with fstat on the descriptor they opened (not on the path, which can be replaced in
// between) that it is what they wanted; a FIFO, socket or device is refused with an error naming
// the path, never read. On a regular file or a directory O_NONBLOCK changes nothing.

// NotRegularError reports a path that the gate reads as a file (or lists as a directory) but that
// holds a named pipe, a socket, a device, or a directory (a file); or a regular file larger than
// the gate reads at that path.
type NotRegularError struct {
	Path    string
	Mode    os.FileMode // the type bits found
	WantDir bool        // a directory was wanted
	// Size and Limit, when Limit is set: a regular file larger than the gate reads there.
	Size, Limit int64
}

func (e *NotRegularError) Error() string {
	if e.Limit > 0 {
		return fmt.Sprintf("%s has %d bytes, more than the %d the gate reads there: refused, never read", e.Path, e.Size, e.Limit)
	}
	if e.WantDir {
		return fmt.Sprintf("%s is not a directory (%s): refused, never read", e.Path, "a "+fsutil.ModeName(e.Mode))
	}
	return fmt.Sprintf("%s is not a regular file (%s): refused, never read", e.Path, "a "+fsutil.ModeName(e.Mode))
}

// openRegular opens path for reading without blocking and returns it with its fstat, or an error
// (a *NotRegularError when it is not a regular file). The error of a missing file wraps
// fs.ErrNotExist.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readRegular reads the regular file at path whole; one of more than limit bytes is an error,
// never its first limit bytes (a rule or a setting past them would go unseen).
func readRegular(path string, limit int64) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	b := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err = b.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(b.Len()) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b.Bytes(), nil
}

// maxSmallFileBytes bounds the small files of a git directory the gate reads whole: a .git file's
// gitdir: line, commondir, a commit-graph chain, alternates. Git writes a line or a few.
const maxSmallFileBytes = 64 << 10

// openDirectory opens path for listing without blocking, and refuses anything but a directory.
func openDirectory(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = &NotRegularError{Path: path, Mode: fi.Mode(), WantDir: true}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// readDirectory is os.ReadDir through openDirectory: the entries of directory path, by name.
func readDirectory(path string) ([]os.DirEntry, error) {
	f, err := openDirectory(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := f.ReadDir(-1)
	slices.SortFunc(list, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, err
}
