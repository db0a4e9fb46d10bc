package fsutil

import (
	"io/fs"
	"os"
)

// Dir is a directory of a root opened once, so that reading several of its files costs one
// openat each instead of a walk from the root per file (os.Root opens every element of a name
// in turn: missions/M/tasks/T/contract.json is five openat and four close).
//
// Every method answers exactly what the same call through the outer root with the full name
// (Name + "/" + rel) answers: it tries the directory's own handle first and, on any error at all,
// asks the outer root, whose answer (and error text) is then returned. So nothing is refused
// that the outer root accepts and nothing is accepted that it refuses:
//   - a symbolic link that leaves .geas (the outer root) is refused, as before;
//   - a symbolic link inside the directory that leaves it but stays inside the outer root (a
//     task's evidence/x.json -> ../../t2/evidence/x.json) is refused by the directory's handle
//     and then followed through the outer root, as geas has always done. That is kept on
//     purpose, not a hole: what such a link reaches is a file of .geas that agents could as
//     well have written in place, and every reader checks what it reads for the task it is
//     read for (the contract's and each evidence file's task_id), so another task's files
//     are refused by their content, not by where they are;
//   - a directory that cannot be opened as a root (missing, a symbolic link leaving the outer
//     root, not a directory) leaves Dir without a handle, and every call goes to the outer root.
//
// The handle is the directory as it was when OpenSubdir ran: a caller that must see a directory
// replaced meanwhile (renamed away, planted anew) opens a new Dir.
type Dir struct {
	Outer *os.Root
	Name  string   // the directory, relative to Outer
	sub   *os.Root // nil: every call goes through Outer
	// served answers the reads of the names given to Serve (ServedDir); nil: none.
	served map[string]served
}

// OpenSubdir opens name, a directory of outer, for the reads of Dir. It never fails: a directory
// that cannot be opened is read through outer (which then reports why).
func OpenSubdir(outer *os.Root, name string) *Dir {
	d := &Dir{Outer: outer, Name: name}
	if sub, err := openDirRoot(outer, name); err == nil {
		d.sub = sub
	}
	return d
}

// openDirRoot is root.OpenRoot(name) that never waits: os.Root opens the last element of a name
// without O_DIRECTORY, and open(2) of a named pipe planted there waits for a writer. As name/.,
// the element is opened as a directory (O_DIRECTORY), which a pipe is refused as at once; a
// directory, or a symbolic link to one, opens as before.
func openDirRoot(root *os.Root, name string) (*os.Root, error) {
	return root.OpenRoot(name + "/.")
}

// Close releases the directory's handle; the outer root stays open.
func (d *Dir) Close() error {
	if d == nil || d.sub == nil {
		return nil
	}
	err := d.sub.Close()
	d.sub = nil
	return err
}

// Reader reads files by their names relative to one root: a *Dir, or RootReader's root.
type Reader interface {
	ReadLimited(name string, limit int64) ([]byte, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	OpenDir(name string) (*os.File, error)
}

// RootReader is the Reader of root itself: ReadLimited, root.Stat and OpenDir.
func RootReader(root *os.Root) Reader { return rootReader{root} }

type rootReader struct{ root *os.Root }

func (r rootReader) ReadLimited(name string, limit int64) ([]byte, error) {
	return ReadLimited(r.root, name, limit)
}
func (r rootReader) Stat(name string) (fs.FileInfo, error)  { return r.root.Stat(name) }
func (r rootReader) Lstat(name string) (fs.FileInfo, error) { return r.root.Lstat(name) }
func (r rootReader) OpenDir(name string) (*os.File, error)  { return OpenDir(r.root, name) }

// inside is name relative to the directory, when name is the directory itself (".") or a file
// under it (d.Name + "/" + rel) and the directory has a handle.
func (d *Dir) inside(name string) (string, bool) {
	if d.sub != nil && name == d.Name {
		return ".", true
	}
	if d.sub == nil || len(name) <= len(d.Name)+1 || name[:len(d.Name)] != d.Name || name[len(d.Name)] != '/' {
		return "", false
	}
	return name[len(d.Name)+1:], true
}

// ReadLimited is ReadLimited(d.Outer, name, limit); name is relative to the outer root.
func (d *Dir) ReadLimited(name string, limit int64) ([]byte, error) {
	if b, ok, err := d.serve(name, limit); ok {
		return b, err
	}
	if rel, ok := d.inside(name); ok {
		if b, err := ReadLimited(d.sub, rel, limit); err == nil {
			return b, nil
		}
	}
	return ReadLimited(d.Outer, name, limit)
}

// Stat is d.Outer.Stat(name); name is relative to the outer root.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	if rel, ok := d.inside(name); ok {
		if fi, err := d.sub.Stat(rel); err == nil {
			return fi, nil
		}
	}
	return d.Outer.Stat(name)
}

// Lstat is d.Outer.Lstat(name); name is relative to the outer root.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	// Not the directory itself: its handle is what a symbolic link there leads to.
	if rel, ok := d.inside(name); ok && rel != "." {
		if fi, err := d.sub.Lstat(rel); err == nil {
			return fi, nil
		}
	}
	return d.Outer.Lstat(name)
}

// OpenDir is OpenDir(d.Outer, name); name is relative to the outer root.
func (d *Dir) OpenDir(name string) (*os.File, error) {
	if rel, ok := d.inside(name); ok {
		if f, err := OpenDir(d.sub, rel); err == nil {
			return f, nil
		}
	}
	return OpenDir(d.Outer, name)
}

// Subdir is the Dir of d.Name + "/" + rel, a directory inside d: opened through d's handle when
// it can be (one openat), else through the outer root, so that it answers as
// OpenSubdir(d.Outer, d.Name+"/"+rel) does.
func (d *Dir) Subdir(rel string) *Dir {
	s := &Dir{Outer: d.Outer, Name: d.Name + "/" + rel}
	if d.sub != nil {
		if sub, err := openDirRoot(d.sub, rel); err == nil {
			s.sub = sub
			return s
		}
	}
	if sub, err := openDirRoot(d.Outer, s.Name); err == nil {
		s.sub = sub
	}
	return s
}
