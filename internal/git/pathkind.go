package git

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// PathKind is what a path names in a commit's tree.
type PathKind int

// The kinds of PathKind.
const (
	PathAbsent    PathKind = iota // no entry at the path (or a file where the path needs a directory)
	PathFile                      // a regular or executable file, or a symbolic link
	PathDir                       // a tree
	PathSubmodule                 // a gitlink
)

// KindAt returns what name (slash-separated, relative to the root of the repository's tree, byte
// for byte as git stores it: case-sensitive, no "." or ".." elements) is in commit (a full SHA).
// A path below a file or a submodule is absent: only a tree has entries.
func (r *Repo) KindAt(commit, name string) (PathKind, error) {
	mode, err := r.modeAt(commit, name)
	switch {
	case err != nil || mode == 0:
		return PathAbsent, err
	case mode == filemode.Dir:
		return PathDir, nil
	case mode == filemode.Submodule:
		return PathSubmodule, nil
	}
	return PathFile, nil
}

// EntryKindAt is KindAt with the entry's kind as the test-integrity checks name it (a file, an
// executable, a symbolic link…); name may start with "./".
func (r *Repo) EntryKindAt(commit, name string) (EntryKind, error) {
	name = path.Clean(strings.TrimPrefix(name, "./"))
	if name == "." {
		name = ""
	}
	mode, err := r.modeAt(commit, name)
	if err != nil {
		return Absent, err
	}
	return kindOf(mode), nil
}

// modeAt returns the mode of the entry at name in commit's tree (filemode.Dir for the root), or 0
// when the tree has nothing there. Each tree on the way is read (and verified) once.
func (r *Repo) modeAt(commit, name string) (filemode.FileMode, error) {
	mode, _, err := r.entryAt(commit, name)
	return mode, err
}

// entryAt returns the mode and object id of the entry at name in commit's tree (filemode.Dir and
// the root tree for ""), or 0 when the tree has nothing there. Each tree on the way is read (and
// verified) once.
func (r *Repo) entryAt(commit, name string) (filemode.FileMode, plumbing.Hash, error) {
	tree, err := r.commitTree("commit", commit)
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	if name == "" {
		return filemode.Dir, tree, nil
	}
	parts := strings.Split(name, "/")
	var entries []treeEntry
	for i, part := range parts {
		typ, data, err := r.readObject(tree)
		if err != nil {
			return 0, plumbing.ZeroHash, fmt.Errorf("%s at %s: read tree %s: %w", name, short12(commit), tree, err)
		}
		if typ != plumbing.TreeObject {
			return 0, plumbing.ZeroHash, fmt.Errorf("%s at %s: object %s is a %s, not a tree", name, short12(commit), tree, typ)
		}
		if entries, err = parseTreeEntries(tree, data, entries[:0]); err != nil {
			return 0, plumbing.ZeroHash, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
		}
		var found *treeEntry
		for j := range entries {
			if bytes.Equal(entries[j].name, []byte(part)) {
				found = &entries[j]
				break
			}
		}
		switch {
		case found == nil:
			return 0, plumbing.ZeroHash, nil
		case i == len(parts)-1:
			return found.mode, found.hash, nil
		case !found.isDir():
			return 0, plumbing.ZeroHash, nil
		}
		tree = found.hash
	}
	return 0, plumbing.ZeroHash, nil
}
