package git

import (
	"os"
)

// dirent is one name a directory of the working tree lists.
type dirent struct {
	name string
	dir  bool // a directory; a symlink, even to a directory, is not one
}

// dirHandle is an open directory of the working-tree walk: its listing, and the lstat of a name in
// it relative to the open directory (one path component resolved, not the whole path).
type dirHandle interface {
	list() ([]dirent, error)
	lstat(name string) (fileStat, error)
	close()
}

// fileDir is the portable dirHandle, an os.File.
type fileDir struct {
	f   *os.File
	abs string
}

// openFileDir opens the directory abs as an os.File.
func openFileDir(abs string) (dirHandle, error) {
	f, err := openDirectory(abs)
	if err != nil {
		return nil, err
	}
	return &fileDir{f: f, abs: abs}, nil
}

func (d *fileDir) list() ([]dirent, error) {
	list, err := d.f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(list))
	for i, e := range list {
		out[i] = dirent{name: e.Name(), dir: e.IsDir()}
	}
	return out, nil
}

func (d *fileDir) lstat(name string) (fileStat, error) { return lstatAt(d.f, d.abs, name) }

func (d *fileDir) close() { d.f.Close() }
