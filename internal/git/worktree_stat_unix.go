//go:build linux || darwin

package git

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/geas-dev/geas/internal/fsutil"
)

// statSys returns the inode and ctime that lstat reported.
func statSys(fi fs.FileInfo) (ino uint64, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, time.Time{}, false
	}
	ctime, _ = fsutil.ChangeTime(fi)
	return uint64(st.Ino), ctime, true
}

// lstatAt lstats name in the open directory dir with fstatat, which resolves one component
// instead of the whole path.
func lstatAt(dir *os.File, _ string, name string) (fileStat, error) {
	var st unix.Stat_t
	if err := fstatatNoFollow(int(dir.Fd()), name, &st); err != nil {
		return fileStat{}, err
	}
	return fileStatOfUnix(&st), nil
}

// fstatatNoFollow lstats name relative to the directory descriptor dirfd.
func fstatatNoFollow(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		return nil
	}
}

// fileStatOfUnix converts what fstatat reported.
func fileStatOfUnix(st *unix.Stat_t) fileStat {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	default:
		mode |= fs.ModeIrregular
	}
	return fileStat{
		mode: mode, size: st.Size, ino: uint64(st.Ino), full: true,
		mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)),
	}
}
