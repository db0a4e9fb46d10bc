package git

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// mapFile maps the first size bytes of f read-only (a file mapping and a view of it); the
// mapping outlives f. The mapping object's handle is closed at once: the view holds it open.
// While mapped, the file cannot be deleted or replaced, as with git for Windows itself.
func mapFile(f *os.File, size int) ([]byte, error) {
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, 0, 0, nil)
	if err != nil {
		return nil, os.NewSyscallError("CreateFileMapping", err)
	}
	defer windows.CloseHandle(h)
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, os.NewSyscallError("MapViewOfFile", err)
	}
	// addr is memory the system mapped, outside the Go heap: converting it is safe.
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size), nil
}

// unmap releases a mapping made by mapFile.
func unmap(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return windows.UnmapViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(data))))
}
