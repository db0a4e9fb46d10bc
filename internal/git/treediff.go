package git

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// maxTreeDepth bounds how deep the tree diff descends, as git's core.maxTreeDepth (default 4096)
// does: a deeper tree is an error, not a stack of that many frames.
const maxTreeDepth = 4096

// treeEntry is one entry of a tree object, parsed in place: name is a sub-slice of the tree's
// bytes; mode is canonical as git makes it when it reads a tree (any regular file is 100644 or
// 100755), so that 100664 and 100644 are the same mode, as for git diff.
type treeEntry struct {
	name []byte
	mode filemode.FileMode
	hash plumbing.Hash
}

func (e treeEntry) isDir() bool { return e.mode == filemode.Dir }

// parseTreeEntries parses the raw content of tree id (entries of "mode SP name NUL 20-byte id")
// and appends them to dst. It refuses what git's own tools never write: a mode that is not a
// regular file, a symlink, a directory or a gitlink, a missing space or NUL, a short id, an empty
// name, a name with "/" or that is "." or "..", and entries out of git's order (a directory sorts
// as name+"/") or repeated (the same name twice, as a file and as a directory included). Every
// error names the tree.
func parseTreeEntries(id plumbing.Hash, data []byte, dst []treeEntry) ([]treeEntry, error) {
	first := len(dst)
	for off := 0; off < len(data); {
		fail := func(what string) error {
			return fmt.Errorf("tree %s: entry %d at byte %d: %s", id, len(dst)-first+1, off, what)
		}
		rest := data[off:]
		sp := bytes.IndexByte(rest, ' ')
		if sp < 0 {
			return nil, fail("no space after the mode")
		}
		mode, ok := canonicalMode(rest[:sp])
		if !ok {
			return nil, fail(fmt.Sprintf("bad mode %q", rest[:sp]))
		}
		rest = rest[sp+1:]
		nul := bytes.IndexByte(rest, 0)
		if nul < 0 {
			return nil, fail("no NUL after the name")
		}
		name := rest[:nul]
		switch {
		case len(name) == 0:
			return nil, fail("empty name")
		case bytes.IndexByte(name, '/') >= 0, string(name) == ".", string(name) == "..":
			return nil, fail(fmt.Sprintf("bad name %q", name))
		}
		rest = rest[nul+1:]
		if len(rest) < len(plumbing.ZeroHash) {
			return nil, fail(fmt.Sprintf("object id of %d bytes, not %d", len(rest), len(plumbing.ZeroHash)))
		}
		e := treeEntry{name: name, mode: mode, hash: plumbing.Hash(rest[:len(plumbing.ZeroHash)])}
		if err := checkOrder(dst[first:], e); err != nil {
			return nil, fail(err.Error())
		}
		dst = append(dst, e)
		off = len(data) - len(rest) + len(plumbing.ZeroHash)
	}
	return dst, nil
}

// checkOrder checks that e may follow the entries before it: after the last one in git's order,
// and, for a directory, that no file of the same name came before it (a file sorts before the
// directory of its name, maybe with other names between them, all of which start with it).
func checkOrder(before []treeEntry, e treeEntry) error {
	if len(before) == 0 {
		return nil
	}
	last := before[len(before)-1]
	if c := compareEntries(last, e); c >= 0 {
		if c == 0 {
			return fmt.Errorf("name %q repeated", e.name)
		}
		return fmt.Errorf("name %q out of order after %q", e.name, last.name)
	}
	if !e.isDir() {
		return nil
	}
	for i := len(before) - 1; i >= 0 && bytes.HasPrefix(before[i].name, e.name); i-- {
		if len(before[i].name) == len(e.name) {
			return fmt.Errorf("name %q repeated (a file and a directory)", e.name)
		}
	}
	return nil
}

// canonicalMode parses an octal mode as git does (digits 0-7, leading zeros allowed) and
// canonicalizes it as git's canon_mode; ok is false for a mode of no other type.
func canonicalMode(b []byte) (filemode.FileMode, bool) {
	if len(b) == 0 || len(b) > 7 {
		return 0, false
	}
	var m uint32
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, false
		}
		m = m<<3 | uint32(c-'0')
	}
	switch m & 0o170000 {
	case 0o100000:
		if m&0o100 != 0 {
			return filemode.Executable, true
		}
		return filemode.Regular, true
	case 0o120000:
		return filemode.Symlink, true
	case 0o040000:
		return filemode.Dir, true
	case 0o160000:
		return filemode.Submodule, true
	}
	return 0, false
}

// compareEntries orders tree entries as git does (base_name_compare): by name bytes, a directory's
// name as if it ended in "/".
func compareEntries(a, b treeEntry) int {
	n := min(len(a.name), len(b.name))
	if c := bytes.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextNameByte(a, n), nextNameByte(b, n))
}

func nextNameByte(e treeEntry, n int) int {
	switch {
	case n < len(e.name):
		return int(e.name[n])
	case e.isDir():
		return '/'
	}
	return 0
}

// changeSide is one side of a changed path: its mode (0 when the path is absent on that side)
// and object id.
type changeSide struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// treeChange is one path that differs between two trees: added (from.mode 0), deleted (to.mode
// 0), or changed in content, mode or type. The path is slash-separated, byte for byte as in the
// trees.
type treeChange struct {
	path     string
	from, to changeSide
}

// treeDiffer compares two trees as `git diff --no-renames` does, one level at a time, descending
// only into subtrees whose ids differ; a gitlink is a leaf; a path that is a file on one side and
// a directory on the other is a deletion plus additions.
type treeDiffer struct {
	r       *Repo
	changes []treeChange
	// entries holds the parsed entries of the trees being compared, a stack: diff parses its two
	// trees onto the end and cuts them off when it returns, so that a whole diff reuses one
	// slice instead of allocating two for every tree.
	entries []treeEntry
}

// diff appends the changes between trees a and b (the zero hash is the empty tree) under
// prefix ("" or ending in "/").
func (d *treeDiffer) diff(prefix string, a, b plumbing.Hash, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("tree %s at %q: deeper than %d levels", cmp.Or(a, b), prefix, maxTreeDepth)
	}
	defer func(n int) { d.entries = d.entries[:n] }(len(d.entries))
	ea, err := d.parse(a)
	if err != nil {
		return err
	}
	eb, err := d.parse(b)
	if err != nil {
		return err
	}
	for i, j := 0, 0; i < len(ea) || j < len(eb); {
		c := 0
		switch {
		case i == len(ea):
			c = 1
		case j == len(eb):
			c = -1
		default:
			c = compareEntries(ea[i], eb[j])
		}
		switch {
		case c < 0:
			err = d.one(prefix, ea[i], true, depth)
			i++
		case c > 0:
			err = d.one(prefix, eb[j], false, depth)
			j++
		default:
			x, y := ea[i], eb[j]
			i, j = i+1, j+1
			switch {
			case x.hash == y.hash && x.mode == y.mode:
			case x.isDir():
				err = d.diff(prefix+string(x.name)+"/", x.hash, y.hash, depth+1)
			default:
				d.changes = append(d.changes, treeChange{path: prefix + string(x.name),
					from: changeSide{x.mode, x.hash}, to: changeSide{y.mode, y.hash}})
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// one records an entry present on one side only: deleted when from is true, else added; a
// directory with everything in it.
func (d *treeDiffer) one(prefix string, e treeEntry, from bool, depth int) error {
	if e.isDir() {
		if from {
			return d.diff(prefix+string(e.name)+"/", e.hash, plumbing.ZeroHash, depth+1)
		}
		return d.diff(prefix+string(e.name)+"/", plumbing.ZeroHash, e.hash, depth+1)
	}
	c := treeChange{path: prefix + string(e.name)}
	if from {
		c.from = changeSide{e.mode, e.hash}
	} else {
		c.to = changeSide{e.mode, e.hash}
	}
	d.changes = append(d.changes, c)
	return nil
}

// parse reads and parses tree h onto the end of d.entries and returns its entries; the zero hash
// is the empty tree. The entries stay valid while d.entries is not cut below them (a later parse
// may move d.entries, never the entries already returned).
func (d *treeDiffer) parse(h plumbing.Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	typ, data, err := d.r.readObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	if typ != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, typ)
	}
	n := len(d.entries)
	all, err := parseTreeEntries(h, data, d.entries)
	if err != nil {
		return nil, err
	}
	d.entries = all
	return all[n:len(all):len(all)], nil
}

// commitTree returns the root tree of the commit named by the full SHA sha; what says which
// argument it is, for the errors.
func (r *Repo) commitTree(what, sha string) (plumbing.Hash, error) {
	if len(sha) != 2*len(plumbing.ZeroHash) || !isHex(sha) {
		return plumbing.ZeroHash, fmt.Errorf("%s %q is not a full commit SHA", what, sha)
	}
	h := plumbing.NewHash(sha)
	typ, data, err := r.readObject(h)
	if err == nil && typ != plumbing.CommitObject {
		err = plumbing.ErrObjectNotFound
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s %s is not a commit of this repository: %w", what, sha, err)
	}
	const prefix = "tree "
	hexLen := 2 * len(plumbing.ZeroHash)
	if len(data) < len(prefix)+hexLen+1 || string(data[:len(prefix)]) != prefix || data[len(prefix)+hexLen] != '\n' {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: no tree line", sha)
	}
	var tree plumbing.Hash
	if _, err := hex.Decode(tree[:], data[len(prefix):len(prefix)+hexLen]); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: bad tree id: %w", sha, err)
	}
	return tree, nil
}

// treeChanges returns the changes between the trees of commits base and head (full SHAs),
// without rename detection, ordered by path; computed once per pair and kept (the gate asks for
// the changed files and for the added lines of the same pair). The slice is shared: callers copy
// before they change it.
func (r *Repo) treeChanges(base, head string) ([]treeChange, error) {
	key := [2]string{base, head}
	if changes, ok := r.diffs[key]; ok {
		return changes, nil
	}
	a, err := r.commitTree("base", base)
	if err != nil {
		return nil, err
	}
	b, err := r.commitTree("head", head)
	if err != nil {
		return nil, err
	}
	d := &treeDiffer{r: r, entries: make([]treeEntry, 0, 1024)} // a root tree and a few levels
	if err := d.diff("", a, b, 0); err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", base, head, err)
	}
	if r.diffs == nil {
		r.diffs = map[[2]string][]treeChange{}
	}
	r.diffs[key] = d.changes
	return d.changes, nil
}
