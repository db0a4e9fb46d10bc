//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package git

// releasePages does nothing where there is no madvise: the mapping keeps its pages until unmapped.
func releasePages([]byte) {}
