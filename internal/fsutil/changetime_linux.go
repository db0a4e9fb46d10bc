package fsutil

import (
	"io/fs"
	"syscall"
	"time"
)

// ChangeTime returns the inode change time (ctime) of what fi describes, which, unlike the
// modification time, a process cannot set back: ok is false where the platform gives none.
func ChangeTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true
}
