package git

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// EntryKind is what a tree entry is, as the test-integrity checks name it.
type EntryKind string

// Entry kinds; Absent is a path the tree does not have.
const (
	Absent     EntryKind = ""
	File       EntryKind = "file"
	Executable EntryKind = "executable"
	Symlink    EntryKind = "symlink"
	Submodule  EntryKind = "submodule"
	Directory  EntryKind = "directory"
)

func kindOf(m filemode.FileMode) EntryKind {
	switch m {
	case 0:
		return Absent
	case filemode.Regular, filemode.Deprecated:
		return File
	case filemode.Executable:
		return Executable
	case filemode.Symlink:
		return Symlink
	case filemode.Submodule:
		return Submodule
	case filemode.Dir:
		return Directory
	}
	return EntryKind(m.String())
}

// FileSide is one side of a FileChange: the entry's kind and object id ("" when absent).
type FileSide struct {
	Kind EntryKind
	ID   string
}

// FileChange is one path that differs between the trees of two commits, as `git diff
// --no-renames --raw` lists it: added (From absent), deleted (To absent), or changed in content,
// mode or type. A rename is a deletion and an addition.
type FileChange struct {
	Path     string // slash-separated, byte for byte as in the trees
	From, To FileSide
}

// FileChanges returns the changes between the trees of commits base and head (full SHAs), ordered
// by path: the tree diff ChangedFiles reads (made once a pair).
func (r *Repo) FileChanges(base, head string) ([]FileChange, error) {
	changes, err := r.treeChanges(base, head)
	if err != nil {
		return nil, err
	}
	out := make([]FileChange, len(changes))
	for i, c := range changes {
		out[i] = FileChange{Path: c.path, From: side(c.from), To: side(c.to)}
	}
	return out, nil
}

func side(s changeSide) FileSide {
	if s.mode == 0 {
		return FileSide{}
	}
	return FileSide{Kind: kindOf(s.mode), ID: s.hash.String()}
}

// ReadBlob returns the content of blob id (40 hex digits), read through the object store, which
// checks it against its id. A blob larger than maxBytes is an error.
func (r *Repo) ReadBlob(id string, maxBytes int64) ([]byte, error) {
	if len(id) != 2*len(plumbing.ZeroHash) || !isHex(id) {
		return nil, fmt.Errorf("blob %q is not a full object id", id)
	}
	blob, err := object.GetBlob(r.store, plumbing.NewHash(strings.ToLower(id)))
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", id, err)
	}
	if blob.Size > maxBytes {
		return nil, fmt.Errorf("blob %s is %d bytes, over the limit of %d", id, blob.Size, maxBytes)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", id, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", id, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("blob %s is over the limit of %d bytes", id, maxBytes)
	}
	return data, nil
}
