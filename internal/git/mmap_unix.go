//go:build unix

package git

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only and shared; the mapping outlives f.
func mapFile(f *os.File, size int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
}

// unmap releases a mapping made by mapFile.
func unmap(data []byte) error { return unix.Munmap(data) }
