package evidence

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// DemoCommit is one commit InitDemoRepo writes: the files it adds or replaces (slash-separated
// paths relative to the repository root) and its message.
type DemoCommit struct {
	Message string
	Files   map[string]string
}

// demoSignature is the author and committer of every demo commit; with the fixed dates the commit
// ids are the same on every machine.
var demoSignature = object.Signature{Name: "geas demo", Email: "demo@geas.invalid", When: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}

// InitDemoRepo creates a git repository in dir (an existing, empty directory) on branch main and
// makes one commit per entry of commits, in order, each a minute after the previous one. It
// returns the commit ids. It needs no git binary and no git configuration: author and committer
// are set explicitly. It is the only writer in this package, for geas demo and tests; the gate
// itself only reads repositories.
func InitDemoRepo(dir string, commits []DemoCommit) ([]string, error) {
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return nil, fmt.Errorf("init git repository in %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("init git repository in %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var shas []string
	for i, c := range commits {
		if len(c.Files) == 0 {
			return nil, errors.New("demo commit without files")
		}
		for _, name := range slices.Sorted(maps.Keys(c.Files)) {
			rel := filepath.FromSlash(name)
			if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
				return nil, fmt.Errorf("write %s: %w", name, err)
			}
			if err := root.WriteFile(rel, []byte(c.Files[name]), 0o644); err != nil {
				return nil, fmt.Errorf("write %s: %w", name, err)
			}
			if _, err := wt.Add(name); err != nil {
				return nil, fmt.Errorf("git add %s: %w", name, err)
			}
		}
		sig := demoSignature
		sig.When = sig.When.Add(time.Duration(i) * time.Minute)
		h, err := wt.Commit(c.Message, &git.CommitOptions{Author: &sig, Committer: &sig})
		if err != nil {
			return nil, fmt.Errorf("git commit %q: %w", c.Message, err)
		}
		shas = append(shas, h.String())
	}
	return shas, nil
}
