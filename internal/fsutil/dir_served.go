package fsutil

import "os"

// ServedDir is a Dir of outer's directory name without a handle of its own, whose reads of the
// files given to Serve answer what the caller already read of them (through a HeldFile), so that
// a parser that reads a task's files by name (record.LoadFrom) parses those bytes without
// opening the files again. Every other call answers as OpenSubdir's Dir without a handle does:
// through the outer root.
func ServedDir(outer *os.Root, name string) *Dir {
	return &Dir{Outer: outer, Name: name, served: map[string]served{}}
}

// served is what a read of a served name answers.
type served struct {
	data []byte
	err  error
}

// Serve makes reads of name (relative to the outer root) answer data, or err when it is set (the
// error the read of name returned, so that a missing file answers as missing). Only on a Dir of
// ServedDir.
func (d *Dir) Serve(name string, data []byte, err error) {
	d.served[name] = served{data: data, err: err}
}

// serve is the answer to a read of name when it is served: the bytes, refused as ReadLimited
// refuses them when they are more than limit (limit <= 0: no limit).
func (d *Dir) serve(name string, limit int64) ([]byte, bool, error) {
	s, ok := d.served[name]
	if !ok {
		return nil, false, nil
	}
	if s.err != nil {
		return nil, true, s.err
	}
	if limit > 0 && int64(len(s.data)) > limit {
		return nil, true, &TooLargeError{Name: name, Size: int64(len(s.data)), Limit: limit}
	}
	return s.data, true, nil
}
