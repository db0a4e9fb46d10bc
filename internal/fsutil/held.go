package fsutil

import "os"

// HeldFile is a file read through a handle that is kept open, so that the file can be read again
// (ReadAgain) without opening it while its path still names it.
type HeldFile struct {
	f    *os.File
	info os.FileInfo
	// last is what Stat of the handle said just before its latest read (Hold or ReadAgain): a
	// file that changed during or after that read no longer matches it (Unchanged).
	last os.FileInfo
}

// Hold reads name through root as ReadLimited(root, name, limit) does (the same checks and
// errors) and keeps the file open; nil with the error when it cannot be read.
func Hold(root *os.Root, name string, limit int64) (*HeldFile, []byte, error) {
	f, fi, err := openLimited(root, name)
	if err != nil {
		return nil, nil, err
	}
	data, err := readWhole(f, name, fi.Size(), limit)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &HeldFile{f: f, info: fi, last: fi}, data, nil
}

// ReadAgain reads the held file again from its start, as Hold read it, when name (through root)
// still names that file (os.SameFile on a Stat of the path, which opens nothing); ok is false
// when it does not (another file, or not a regular file, is there now), and the caller reads the
// path.
func (h *HeldFile) ReadAgain(root *os.Root, name string, limit int64) (data []byte, ok bool, err error) {
	if h == nil || h.f == nil {
		return nil, false, nil
	}
	if _, ok := h.stillNamed(root, name); !ok {
		return nil, false, nil
	}
	now, err := h.f.Stat()
	if err != nil {
		return nil, true, err
	}
	h.last = now
	data, err = readWhole(h.f, name, now.Size(), limit)
	return data, true, err
}

// Unchanged reports whether name (through root) still names the held file with what it held at
// the latest read: a Stat of the path, which opens nothing, finds the same file (os.SameFile),
// with the size, modification time and inode change time (ChangeTime) the handle had just before
// that read. A platform without a change time answers false (the caller reads again, through the
// handle), for a modification time can be set back. What it cannot see is a write in place, to
// the same size, within the file system's timestamp granularity of that read (nor, once Released,
// another file given the same inode number within that granularity).
func (h *HeldFile) Unchanged(root *os.Root, name string) bool {
	if h == nil || h.last == nil {
		return false
	}
	fi, ok := h.stillNamed(root, name)
	return ok && sameState(fi, h.last)
}

// stillNamed returns a Stat of name through root, which opens nothing, when name still names the
// held file: a regular file that os.SameFile finds to be the one Hold opened.
func (h *HeldFile) stillNamed(root *os.Root, name string) (os.FileInfo, bool) {
	fi, err := root.Stat(name)
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, h.info) {
		return nil, false
	}
	return fi, true
}

// sameState reports whether a and b, two Stats of one file, show the same size, modification
// time and change time; false where the platform has no change time.
func sameState(a, b os.FileInfo) bool {
	ca, okA := ChangeTime(a)
	cb, okB := ChangeTime(b)
	return okA && okB && ca.Equal(cb) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Release closes the handle but keeps what Stat said of the file, so that Unchanged still answers
// (a Stat of the path against it) while ReadAgain answers false: for a caller that holds many
// files and must not run out of descriptors. Safe on nil.
func (h *HeldFile) Release() {
	if h != nil && h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

// Open reports whether the handle is still open (not Released, not Closed). Safe on nil.
func (h *HeldFile) Open() bool { return h != nil && h.f != nil }

// Close closes the held file. Safe on nil.
func (h *HeldFile) Close() { h.Release() }
