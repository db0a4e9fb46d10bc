package fsutil

import (
	"errors"
	"io/fs"
)

// ReadLimitedAbsent is ReadLimited, except that a file the directory's handle finds missing (an
// error for which errors.Is(err, fs.ErrNotExist) holds) is answered with that error at once,
// without the walk from the outer root: the outer root, asked the same name, finds the same
// directory (the one the handle holds, unless it was replaced since OpenSubdir) and so the same
// missing file, but its error names the whole path. It is for callers that take a missing file
// as absent and never show that error; every other error is asked of the outer root, as
// ReadLimited does, whose answer and text are returned.
func (d *Dir) ReadLimitedAbsent(name string, limit int64) ([]byte, error) {
	if b, ok, err := d.serve(name, limit); ok {
		return b, err
	}
	if rel, ok := d.inside(name); ok {
		b, err := ReadLimited(d.sub, rel, limit)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
	}
	return ReadLimited(d.Outer, name, limit)
}
