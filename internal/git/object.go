package git

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// readObject returns the type and the whole content of object h. The tree diff and the added-line
// scan read every object through it. Today it reads through go-git's store (the lazyStore); a
// faster body reading the mapped pack in place can replace it without changing its callers.
// Callers never modify the bytes: a faster body may hand out memory it shares (a cache, the map).
func (r *Repo) readObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	obj, err := r.store.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	var buf bytes.Buffer
	if size := obj.Size(); size > 0 && size < 1<<40 {
		buf.Grow(int(size))
	}
	if _, err := buf.ReadFrom(rd); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if int64(buf.Len()) != obj.Size() {
		return plumbing.InvalidObject, nil, fmt.Errorf("object %s: %d bytes read, its header says %d: %w",
			h, buf.Len(), obj.Size(), io.ErrUnexpectedEOF)
	}
	return obj.Type(), buf.Bytes(), nil
}
