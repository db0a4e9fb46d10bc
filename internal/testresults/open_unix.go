//go:build unix

package testresults

import "syscall"

// oNoFollow and oNonBlock make the open of a matched file refuse a symlink put in its place and
// never block on a FIFO.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
