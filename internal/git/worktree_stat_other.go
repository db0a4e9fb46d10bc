//go:build !linux && !darwin

package git

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// statSys has no inode or ctime to give on this platform: every entry is hashed.
func statSys(fs.FileInfo) (ino uint64, ctime time.Time, ok bool) {
	return 0, time.Time{}, false
}

// lstatAt lstats name in the directory abs.
func lstatAt(_ *os.File, abs, name string) (fileStat, error) {
	fi, err := os.Lstat(filepath.Join(abs, name))
	if err != nil {
		return fileStat{}, err
	}
	return fileStatOf(fi), nil
}
