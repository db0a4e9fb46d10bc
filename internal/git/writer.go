package git

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FileCommit is one commit a Writer writes: the files it adds or replaces (slash-separated paths
// relative to the repository root) and its message.
type FileCommit struct {
	Message string
	Files   map[string]string
}

// fixedSignature is the author and committer of every commit a Writer makes; with the fixed dates
// the commit ids are the same on every machine.
var fixedSignature = object.Signature{Name: "geas demo", Email: "demo@geas.invalid", When: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}

// Writer is a git repository built commit by commit, as geas demo builds its project. It is the
// only writer in this package; the gate itself only reads repositories.
type Writer struct {
	dir  string
	repo *gogit.Repository
	wt   *gogit.Worktree
	n    int // commits made so far
}

// Init creates a git repository in dir (an existing, empty directory) on branch main and returns
// its Writer. It needs no git binary and no git configuration: author and committer are set
// explicitly, and with the fixed dates the commit ids are the same on every machine.
func Init(dir string) (*Writer, error) {
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return nil, fmt.Errorf("init git repository in %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("init git repository in %s: %w", dir, err)
	}
	return &Writer{dir: dir, repo: repo, wt: wt}, nil
}

// Commit writes c's files into the working tree, adds them and commits them on main, a minute
// after the previous commit. It returns the commit id; the working tree is then that commit.
func (w *Writer) Commit(c FileCommit) (string, error) {
	if len(c.Files) == 0 {
		return "", errors.New("commit without files")
	}
	root, err := os.OpenRoot(w.dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	for _, name := range slices.Sorted(maps.Keys(c.Files)) {
		rel := filepath.FromSlash(name)
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
		if err := root.WriteFile(rel, []byte(c.Files[name]), 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
		if _, err := w.wt.Add(name); err != nil {
			return "", fmt.Errorf("git add %s: %w", name, err)
		}
	}
	sig := fixedSignature
	sig.When = sig.When.Add(time.Duration(w.n) * time.Minute)
	h, err := w.wt.Commit(c.Message, &gogit.CommitOptions{Author: &sig, Committer: &sig})
	if err != nil {
		return "", fmt.Errorf("git commit %q: %w", c.Message, err)
	}
	w.n++
	return h.String(), nil
}
