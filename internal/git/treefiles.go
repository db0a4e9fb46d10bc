package git

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ReadTreeFiles opens the repository at dir (a bare repository, a .git directory or a working
// tree), resolves rev (a full ref name such as refs/heads/holdout, a branch, a tag or a commit SHA)
// and calls fn with every regular file of its commit's tree: its slash-separated path, whether it
// is executable, and its content, each object verified against its id. A symbolic link or a
// submodule in the tree is refused, and so is a tree of more than maxFiles files or maxBytes bytes
// in all.
func ReadTreeFiles(dir, rev string, maxFiles int, maxBytes int64, fn func(path string, exec bool, data []byte)) error {
	r, err := Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	sha, err := r.Resolve(rev)
	if err != nil {
		return err
	}
	defer r.readingFor("the files of " + rev + " in " + dir)()
	c, err := object.GetCommit(r.store, plumbing.NewHash(sha))
	if err != nil {
		return fmt.Errorf("read commit %s: %w", sha, err)
	}
	files, total := 0, int64(0)
	var walk func(tree plumbing.Hash, prefix string, depth int) error
	walk = func(tree plumbing.Hash, prefix string, depth int) error {
		if depth > 4096 {
			return fmt.Errorf("tree %s: nested too deep", tree)
		}
		t, err := object.GetTree(r.store, tree)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", tree, err)
		}
		for _, e := range t.Entries {
			name := prefix + e.Name
			if strings.Contains(e.Name, "/") || !validIndexPath(name) {
				return fmt.Errorf("tree entry %q cannot be read", name)
			}
			switch e.Mode {
			case filemode.Dir:
				if err := walk(e.Hash, name+"/", depth+1); err != nil {
					return err
				}
			case filemode.Regular, filemode.Deprecated, filemode.Executable:
				files++
				if files > maxFiles {
					return fmt.Errorf("more than %d files", maxFiles)
				}
				data, err := r.ReadBlob(e.Hash.String(), maxBytes-total)
				if err != nil {
					return fmt.Errorf("%s: %w (at most %d bytes in all)", name, err, maxBytes)
				}
				total += int64(len(data))
				fn(name, e.Mode == filemode.Executable, data)
			default:
				return fmt.Errorf("%s has mode %s: only regular files are read", name, e.Mode)
			}
		}
		return nil
	}
	return walk(c.TreeHash, "", 0)
}
