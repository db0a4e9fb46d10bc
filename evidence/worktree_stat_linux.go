//go:build linux

package evidence

import (
	"io/fs"
	"syscall"
	"time"
)

// statSys returns the inode and ctime that lstat reported.
func statSys(fi fs.FileInfo) (ino uint64, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, time.Time{}, false
	}
	return st.Ino, time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true
}
