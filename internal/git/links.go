package git

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Limits of the symbolic-link check, as the kernel's: a target longer than maxLinkTarget bytes
// cannot be made (PATH_MAX), and a path that follows more than maxLinkHops links does not open
// (ELOOP, Linux's MAXSYMLINKS).
const (
	maxLinkTarget = 4096
	maxLinkHops   = 40
)

// LinkEscape is a symbolic link of a commit's tree whose target is not the commit's content.
type LinkEscape struct {
	Path   string   // the link, slash-separated, relative to Top
	Target string   // its target as committed
	Chain  []string // the other links followed on the way, each "path -> target", in order
	Why    string   // where it leads: "an absolute path", "out of the repository", "into .git", …
}

// LinkReport is what CheckLinks found.
type LinkReport struct {
	Links   int          // symbolic links judged (those below a fenced path are not)
	Escapes []LinkEscape // in path order
	// Dangling are the links that stay in the repository but lead to a path the tree does not
	// have (Why is the path, relative to Top): in a checkout of the commit they lead nowhere until
	// a command makes the path, while in a working tree an ignored file may already be there.
	Dangling []LinkEscape
}

// CheckLinks judges every symbolic link of commit head's tree (a full SHA), wherever it is and
// whether or not the diff touched it: the code a command runs through a link must be the commit's
// (SPEC §5.1). A link escapes when, resolved as the kernel would resolve it in a checkout of head
// (component by component, following the links of the tree on the way, ".." from where the
// link before it led), it
//   - is absolute, or leads through a link that is;
//   - climbs above the repository's top, or climbs ("..") back out of a name that is not a
//     directory of the tree (on disk it may be a link to anywhere);
//   - passes through a component named .git (in any letter case, and ignoring what HFS+ and NTFS
//     ignore in a name): the repository's own files are not the commit;
//   - passes through a path of fenced (slash-separated, relative to Top; an entry ending in "/" is
//     a directory and everything below it, any other entry one file), compared the same way: the
//     caller fences the paths whose content on disk is not compared with the commit;
//   - has an empty target, a NUL byte or more than maxLinkTarget bytes in it, or needs more than
//     maxLinkHops links to resolve: no checkout can make or follow it.
//
// A path that is not in the tree (a dangling link, a file an eval command makes) and a submodule
// are not the tree's to judge: the lookup stops there and only the rules above apply to the rest.
// Links below a fenced path are not judged: their content is not the commit's to begin with, and
// any link that leads into them escapes. Only trees and the links' blobs are read.
func (r *Repo) CheckLinks(head string, fenced []string) (*LinkReport, error) {
	root, err := r.commitTree("head", head)
	if err != nil {
		return nil, err
	}
	lw := &linkWalk{r: r, root: root, trees: map[plumbing.Hash][]treeEntry{}, stack: make([]treeEntry, 0, 1024)}
	for _, f := range fenced {
		dir := strings.HasSuffix(f, "/")
		lw.fences = append(lw.fences, linkFence{parts: foldParts(strings.TrimSuffix(f, "/")), dir: dir})
	}
	var links []treeFile
	var paths []string
	if err := lw.walk(root, "", 0, func(path string, e treeEntry) {
		links = append(links, treeFile{mode: e.mode, hash: e.hash})
		paths = append(paths, path)
	}); err != nil {
		return nil, err
	}
	rep := &LinkReport{Links: len(links)}
	for i, l := range links {
		esc, dangling, err := lw.resolve(paths[i], l.hash)
		switch {
		case err != nil:
			return nil, err
		case esc != nil:
			rep.Escapes = append(rep.Escapes, *esc)
		case dangling != nil:
			rep.Dangling = append(rep.Dangling, *dangling)
		}
	}
	return rep, nil
}

// linkFence is one fenced path, its components folded (foldName).
type linkFence struct {
	parts []string
	dir   bool
}

// linkWalk finds and resolves the links of one tree.
type linkWalk struct {
	r      *Repo
	root   plumbing.Hash
	fences []linkFence
	trees  map[plumbing.Hash][]treeEntry // trees parsed for the lookups of resolve
	stack  []treeEntry                   // the entries of the trees walk is in
}

// walk calls fn for every symbolic link below tree h (at prefix), in path order, skipping fenced
// directories. The trees it reads are parsed onto lw.stack and cut off again, not kept.
func (lw *linkWalk) walk(h plumbing.Hash, prefix string, depth int, fn func(string, treeEntry)) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("tree %s at %q: deeper than %d levels", h, prefix, maxTreeDepth)
	}
	typ, data, err := lw.r.readObject(h)
	if err != nil {
		return fmt.Errorf("read tree %s: %w", h, err)
	}
	if typ != plumbing.TreeObject {
		return fmt.Errorf("object %s is a %s, not a tree", h, typ)
	}
	n := len(lw.stack)
	defer func() { lw.stack = lw.stack[:n] }()
	all, err := parseTreeEntries(h, data, lw.stack)
	if err != nil {
		return err
	}
	lw.stack = all
	for i := n; i < len(all); i++ {
		e := all[i]
		switch e.mode {
		case filemode.Dir:
			name := prefix + string(e.name)
			if lw.fenced(foldParts(name), true) {
				continue
			}
			if err := lw.walk(e.hash, name+"/", depth+1, fn); err != nil {
				return err
			}
		case filemode.Symlink:
			if name := prefix + string(e.name); !lw.fenced(foldParts(name), false) {
				fn(name, e)
			}
		}
	}
	return nil
}

// parse reads and parses tree h for resolve, once per check.
func (lw *linkWalk) parse(h plumbing.Hash) ([]treeEntry, error) {
	if entries, ok := lw.trees[h]; ok {
		return entries, nil
	}
	typ, data, err := lw.r.readObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	if typ != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, typ)
	}
	entries, err := parseTreeEntries(h, data, nil)
	if err != nil {
		return nil, err
	}
	lw.trees[h] = entries
	return entries, nil
}

// fenced reports whether the path of folded components parts is at or below a fenced path; a
// fenced file also fences what a path names below it (the kernel refuses that, but nothing of
// the commit is there).
func (lw *linkWalk) fenced(parts []string, dir bool) bool {
	for _, f := range lw.fences {
		if len(parts) < len(f.parts) {
			continue
		}
		match := true
		for i, p := range f.parts {
			if parts[i] != p {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// lookup returns the entry name of tree h.
func (lw *linkWalk) lookup(h plumbing.Hash, name string) (treeEntry, bool, error) {
	entries, err := lw.parse(h)
	if err != nil {
		return treeEntry{}, false, err
	}
	for _, e := range entries {
		if string(e.name) == name {
			return e, true, nil
		}
	}
	return treeEntry{}, false, nil
}

// linkTarget reads the target of the link whose blob is h; why is set when no checkout could
// make it.
func (lw *linkWalk) linkTarget(h plumbing.Hash) (target, why string, err error) {
	typ, data, err := lw.r.readObject(h)
	if err != nil {
		return "", "", fmt.Errorf("read link blob %s: %w", h, err)
	}
	if typ != plumbing.BlobObject {
		return "", "", fmt.Errorf("link object %s is a %s, not a blob", h, typ)
	}
	switch {
	case len(data) == 0:
		return "", "an empty target", nil
	case len(data) > maxLinkTarget:
		return string(data[:64]) + "…", fmt.Sprintf("a target of %d bytes, more than %d", len(data), maxLinkTarget), nil
	case bytes.IndexByte(data, 0) >= 0:
		return strings.ReplaceAll(string(data), "\x00", `\0`), "a target with a NUL byte", nil
	}
	return string(data), "", nil
}

// resolve follows the link at path (blob h) as the kernel would in a checkout of the tree, and
// says how it escapes (nil when it does not), or, when it does not escape but leads to a path the
// tree does not have, names that path (dangling, its Why the path).
func (lw *linkWalk) resolve(path string, h plumbing.Hash) (esc, dangling *LinkEscape, err error) {
	target, why, err := lw.linkTarget(h)
	if err != nil {
		return nil, nil, err
	}
	esc = &LinkEscape{Path: path, Target: target}
	if why != "" {
		esc.Why = why
		return esc, nil, nil
	}
	// Where the resolution stands: the directory names from the top, and the tree of each (the
	// zero hash once it has left the commit's trees: a path not in the tree, or a submodule).
	names := strings.Split(path, "/")
	names = names[:len(names)-1]
	trees := []plumbing.Hash{lw.root}
	for _, n := range names {
		e, ok, err := lw.lookup(trees[len(trees)-1], n)
		if err != nil {
			return nil, nil, err
		}
		if !ok || e.mode != filemode.Dir {
			return nil, nil, fmt.Errorf("link %s: directory %s is not in the tree", path, n)
		}
		trees = append(trees, e.hash)
	}
	// kinds says, for each of names, what the tree has there: a directory ('d'), nothing ('-',
	// where the resolution left the tree), a file or a submodule ('f'), or, below a path that is
	// not a directory of the tree, unknown ('?').
	kinds := bytes.Repeat([]byte{'d'}, len(names))
	folded := foldParts(strings.Join(names, "/"))
	escape := func(why string) (*LinkEscape, *LinkEscape, error) {
		esc.Why = why
		return esc, nil, nil
	}
	if absoluteTarget(target) {
		return escape("an absolute path")
	}
	// The components still to walk: a stack of targets, the innermost (the link met last) on top.
	stack := [][]string{strings.Split(target, "/")}
	hops := 0
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if len(top) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		c := top[0]
		stack[len(stack)-1] = top[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(names) == 0 {
				return escape("out of the repository")
			}
			if k := kinds[len(kinds)-1]; k != 'd' {
				// The kernel takes ".." from where the path really is: below a name that is not
				// a directory of the tree (an ignored directory, or a link to one, on disk) that
				// may be anywhere.
				return escape("back out of " + strings.Join(names, "/") + ", which is not a directory of the commit")
			}
			names, trees, folded, kinds = names[:len(names)-1], trees[:len(trees)-1], folded[:len(folded)-1], kinds[:len(kinds)-1]
			continue
		}
		fc := foldName(c)
		if fc == ".git" {
			return escape("into .git")
		}
		names, folded = append(names, c), append(folded, fc)
		if lw.fenced(folded, true) {
			return escape("into " + strings.Join(names, "/") + ", whose content is not compared with the commit")
		}
		dir := trees[len(trees)-1]
		var e treeEntry
		found := false
		if !dir.IsZero() {
			if e, found, err = lw.lookup(dir, c); err != nil {
				return nil, nil, err
			}
		}
		switch {
		case found && e.mode == filemode.Dir:
			trees, kinds = append(trees, e.hash), append(kinds, 'd')
		case found && e.mode == filemode.Symlink:
			hops++
			if hops > maxLinkHops {
				return escape(fmt.Sprintf("through more than %d links", maxLinkHops))
			}
			next, why, err := lw.linkTarget(e.hash)
			if err != nil {
				return nil, nil, err
			}
			linkPath := strings.Join(names, "/")
			esc.Chain = append(esc.Chain, linkPath+" -> "+next)
			switch {
			case why != "":
				return escape(why + " (of " + linkPath + ")")
			case absoluteTarget(next):
				return escape("an absolute path (through " + linkPath + ")")
			}
			// The link is replaced by its target, walked from the link's directory.
			names, folded = names[:len(names)-1], folded[:len(folded)-1]
			stack = append(stack, strings.Split(next, "/"))
		default:
			// A file, a submodule or a path the tree does not have: nothing below it is the
			// tree's; the rest is still walked for the rules that need no tree.
			kind := byte('?')
			switch {
			case found:
				kind = 'f'
			case !dir.IsZero():
				kind = '-'
			}
			trees, kinds = append(trees, plumbing.ZeroHash), append(kinds, kind)
		}
	}
	if i := bytes.IndexFunc(kinds, func(r rune) bool { return r != 'd' }); i >= 0 && kinds[i] == '-' {
		return nil, &LinkEscape{Path: path, Target: target, Chain: esc.Chain, Why: strings.Join(names, "/")}, nil
	}
	return nil, nil, nil
}

// absoluteTarget reports a link target that names a path from a root: "/…", "\…", or a Windows
// drive path ("C:…", absolute or relative to the drive's current directory), never inside the tree.
func absoluteTarget(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) || isDrivePath(s)
}

// isDrivePath reports a Windows drive path ("C:" followed by anything): absolute, or relative to
// a drive's current directory, never inside the tree.
func isDrivePath(s string) bool {
	return len(s) >= 2 && s[1] == ':' && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// foldParts splits a slash-separated path into its folded components (foldName); "" is none.
func foldParts(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = foldName(s)
	}
	return parts
}

// foldName is a path component as a case-insensitive file system may see it: without the code
// points HFS+ ignores (git's is_hfs_dotgit), without trailing dots and spaces (NTFS), in simple
// case folding; so ".GIT", ".git." and ".g\u200cit" are all ".git".
func foldName(s string) string {
	s = strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(s, ". ")
	if s == "" {
		return "."
	}
	return strings.Map(foldRune, s)
}

// foldRune maps a rune to the smallest rune of its simple case-folding orbit, so that runes that
// fold together ('K', 'k' and the Kelvin sign; 's' and the long s) map to one rune.
func foldRune(r rune) rune {
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	return unicode.ToLower(min)
}

// hfsIgnorable reports the code points HFS+ ignores in a file name (git's utf8.c next_hfs_char).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
