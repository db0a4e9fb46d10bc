package git

import "github.com/go-git/go-git/v5/plumbing/filemode"

// SubmoduleChange is a submodule (a gitlink entry) that base..head adds, moves to another commit
// or removes. Its content lives in another repository's objects: the diff of this one does not
// see which of its files changed.
type SubmoduleChange struct {
	Path string // slash-separated, relative to Top
	From string // the commit the base's gitlink names; "" when the base has no submodule there
	To   string // the commit the head's gitlink names; "" when the head has no submodule there
}

// ChangedSubmodules returns the submodules whose gitlink differs between base and head (full
// SHAs), in path order: added, moved to another commit, removed, or a file or directory replaced
// by one (and back). It reads the tree diff ChangedFiles reads (made once a pair).
func (r *Repo) ChangedSubmodules(base, head string) ([]SubmoduleChange, error) {
	changes, err := r.treeChanges(base, head)
	if err != nil {
		return nil, err
	}
	var out []SubmoduleChange
	for _, c := range changes {
		from, to := c.from.mode == filemode.Submodule, c.to.mode == filemode.Submodule
		if !from && !to {
			continue
		}
		sc := SubmoduleChange{Path: c.path}
		if from {
			sc.From = c.from.hash.String()
		}
		if to {
			sc.To = c.to.hash.String()
		}
		out = append(out, sc)
	}
	return out, nil
}
