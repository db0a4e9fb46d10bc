package git

import (
	"bytes"
	"fmt"
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
	tree, err := r.commitTree("commit", commit)
	if err != nil {
		return PathAbsent, err
	}
	if name == "" {
		return PathDir, nil
	}
	parts := strings.Split(name, "/")
	var entries []treeEntry
	for i, part := range parts {
		typ, data, err := r.readObject(tree)
		if err != nil {
			return PathAbsent, fmt.Errorf("%s at %s: read tree %s: %w", name, short12(commit), tree, err)
		}
		if typ != plumbing.TreeObject {
			return PathAbsent, fmt.Errorf("%s at %s: object %s is a %s, not a tree", name, short12(commit), tree, typ)
		}
		if entries, err = parseTreeEntries(tree, data, entries[:0]); err != nil {
			return PathAbsent, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
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
			return PathAbsent, nil
		case i == len(parts)-1:
			switch found.mode {
			case filemode.Dir:
				return PathDir, nil
			case filemode.Submodule:
				return PathSubmodule, nil
			default:
				return PathFile, nil
			}
		case !found.isDir():
			return PathAbsent, nil
		}
		tree = found.hash
	}
	return PathAbsent, nil
}
