package git

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ReadFileAt returns the content of the file name (slash-separated, relative to the root of the
// repository's work tree) as it is in commit (a full SHA). ok is false when that commit's tree has
// no such file. A file larger than maxBytes, a symlink, a submodule or a directory at name is an
// error: the caller asked for a regular file's content and must not be handed something else.
func (r *Repo) ReadFileAt(commit, name string, maxBytes int64) (data []byte, ok bool, err error) {
	defer r.readingFor("reading " + name + " at " + short12(commit))()
	h, err := r.commitHash("commit", commit)
	if err != nil {
		return nil, false, err
	}
	c, err := object.GetCommit(r.store, h)
	if err != nil {
		return nil, false, fmt.Errorf("read commit %s: %w", commit, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, false, fmt.Errorf("read the tree of %s: %w", commit, err)
	}
	name = path.Clean(strings.TrimPrefix(name, "./"))
	entry, err := tree.FindEntry(name)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
	}
	if entry.Mode != filemode.Regular && entry.Mode != filemode.Executable && entry.Mode != filemode.Deprecated {
		return nil, false, fmt.Errorf("%s at %s is not a regular file (mode %s)", name, short12(commit), entry.Mode)
	}
	blob, err := object.GetBlob(r.store, entry.Hash)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
	}
	if maxBytes > 0 && blob.Size > maxBytes {
		return nil, false, fmt.Errorf("%s at %s is %d bytes, over the limit of %d", name, short12(commit), blob.Size, maxBytes)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
	}
	defer rd.Close()
	data, err = io.ReadAll(rd)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", name, short12(commit), err)
	}
	return data, true, nil
}

// WorkTreeRel returns dir relative to the root of the git work tree that holds it (the nearest
// ancestor with a .git entry, as Open finds it), slash-separated; "" when dir is that root.
func WorkTreeRel(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return "", nil
			}
			return filepath.ToSlash(rel), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w in %s or its parents", ErrNoRepository, dir)
		}
		d = parent
	}
}

func short12(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
