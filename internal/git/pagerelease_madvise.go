//go:build linux || darwin || freebsd || netbsd || openbsd

package git

import "golang.org/x/sys/unix"

// releasePages tells the kernel the pages of a read-only file mapping made by mapFile are not
// needed now; they are read from the file again when used. It is advice: a failure is ignored.
func releasePages(data []byte) {
	if len(data) > 0 {
		_ = unix.Madvise(data, unix.MADV_DONTNEED)
	}
}
