//go:build !linux && !darwin

package fsutil

import (
	"io/fs"
	"time"
)

// ChangeTime has no inode change time to give on this platform.
func ChangeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
