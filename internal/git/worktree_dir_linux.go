package git

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// rawDir is a directory of the working-tree walk opened as a bare descriptor: no os.File, so no
// fcntl and no failed registration with the poller, listed with getdents64 into a pooled buffer
// (no DirEntry per name) and lstatted with fstatat relative to the descriptor.
type rawDir struct {
	fd  int
	abs string
}

// openDir opens the directory abs for the working-tree walk, as os.Open would (following a
// symlink), and refuses anything but a directory.
func openDir(abs string) (dirHandle, error) {
	for {
		fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return &rawDir{fd: fd, abs: abs}, nil
	}
}

func (d *rawDir) close() { unix.Close(d.fd) }

func (d *rawDir) lstat(name string) (fileStat, error) {
	var st unix.Stat_t
	if err := fstatatNoFollow(d.fd, name, &st); err != nil {
		return fileStat{}, err
	}
	return fileStatOfUnix(&st), nil
}

// direntBufs holds getdents64 buffers (os uses 8 KiB as well).
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// list reads every name of the directory but "." and "..". A name whose type the file system does
// not report (DT_UNKNOWN) is lstatted, and skipped when it no longer exists, as os.File.ReadDir does.
func (d *rawDir) list() ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []dirent
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: d.abs, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		if out, err = d.parseDirents(buf[:n], out); err != nil {
			return nil, err
		}
	}
}

// linux_dirent64: d_ino (8 bytes, native endian), d_off (8), d_reclen (2), d_type (1), then the NUL-terminated name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// countDirents counts the records in b, as far as their lengths are sound (parseDirents refuses
// the rest).
func countDirents(b []byte) int {
	n := 0
	for len(b) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen < direntName || reclen > len(b) {
			break
		}
		b = b[reclen:]
		n++
	}
	return n
}

// parseDirents appends the names of the linux_dirent64 records in b to out. A record whose length
// does not fit the buffer is an error (the kernel never writes one): os.File.ReadDir would stop at
// it without one, and a name not listed could be an untracked file the check never sees.
func (d *rawDir) parseDirents(b []byte, out []dirent) ([]dirent, error) {
	out = slices.Grow(out, countDirents(b))
	for len(b) > 0 {
		if len(b) < direntName {
			return nil, fmt.Errorf("readdirent %s: a record of %d bytes", d.abs, len(b))
		}
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen < direntName || reclen > len(b) {
			return nil, fmt.Errorf("readdirent %s: a record of length %d in %d bytes", d.abs, reclen, len(b))
		}
		rec := b[direntName:reclen]
		typ := b[direntType]
		b = b[reclen:] // d_ino is not read: on Linux an inode of 0 is a name (old XFS, FUSE), as in os
		nameLen := 0
		for nameLen < len(rec) && rec[nameLen] != 0 {
			nameLen++
		}
		name := rec[:nameLen]
		if nameLen == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		e := dirent{name: string(name), dir: typ == unix.DT_DIR}
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			err := fstatatNoFollow(d.fd, e.name, &st)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			e.dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
		out = append(out, e)
	}
	return out, nil
}
