package git

import (
	"bytes"
	"container/heap"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// ErrNoRepository is returned, wrapped, by Open when neither the directory nor any of its
// parents holds a git repository.
var ErrNoRepository = errors.New("no git repository")

// RevisionError reports a revision that does not resolve to a commit.
type RevisionError struct {
	Rev string // the revision as given
	Err error  // why it does not resolve
}

// Error names the revision and the reason.
func (e *RevisionError) Error() string {
	return fmt.Sprintf("revision %q: %v", e.Rev, e.Err)
}

// Unwrap returns the reason.
func (e *RevisionError) Unwrap() error { return e.Err }

// Reasons carried by RevisionError.Err.
var (
	errRevNotFound  = errors.New("unknown revision")
	errRevAmbiguous = errors.New("ambiguous abbreviated commit id")
	errNotCommit    = errors.New("does not name a commit")
)

// binarySniffBytes is how much of a file git inspects for a NUL byte to call it binary
// (xdiff's buffer_is_binary).
const binarySniffBytes = 8000

// Repo is a read-only view of the git repository that holds a project. It keeps pack files and
// their indexes mapped between reads, so it must be closed. A Repo is not safe for concurrent use.
type Repo struct {
	store *lazyStore
	top   string // the working tree's top directory; "" for a bare repository
	// gitDir holds this working tree's index; commonDir the shared info/exclude.
	gitDir, commonDir string

	graphOpened bool
	graph       *commitGraph // nil without a usable commit-graph
	graphErr    error        // why the commit-graph present is not used; nil if none or used

	// refused notes the files refused as not regular, whatever go-git or the graph made of the
	// error (a loose ref taken as absent, an unusable commit-graph): Resolve and IsAncestor answer
	// with it.
	refused *refusals

	// diffs memoizes tree diffs without rename detection by [base, head]: the gate asks for the
	// changed files and for the added lines of the same pair, and the tree walk is most of both.
	diffs map[[2]string][]treeChange
}

// Open opens the repository that holds dir: dir itself, or the nearest parent with a .git
// entry. Linked worktrees work (their objects and refs come from the common directory, HEAD from
// the worktree). When there is no repository the error wraps ErrNoRepository.
//
// It finds the repository as go-git's PlainOpen with DetectDotGit and EnableDotGitCommonDir
// does, but reads the .git file and commondir itself and gives go-git's storage a guardFS: every
// file of the repository is opened without blocking and refused unless it is a regular file
// (SPEC §2 invariant 9), which go-git's own opens do not do.
func Open(dir string) (*Repo, error) {
	top, gitDir, err := findGitDir(dir)
	if err != nil {
		return nil, err
	}
	objectsDir, err := objectsDirOf(gitDir)
	if err != nil {
		return nil, fmt.Errorf("open git repository in %s: %w", dir, err)
	}
	seen := &refusals{}
	dot := guard(osfs.New(gitDir), seen)
	var common billy.Filesystem
	if commonDir := filepath.Dir(objectsDir); commonDir != filepath.Clean(gitDir) {
		if fi, err := os.Stat(commonDir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("open git repository in %s: the common directory %s that %s names is not a directory", dir, commonDir, filepath.Join(gitDir, "commondir"))
		}
		common = guard(osfs.New(commonDir), seen)
	}
	// KeepDescriptors: without it every object read through go-git reopens its pack file. Objects
	// are read by a lazyStore; go-git's storage serves the references, config and shallow, and
	// objects of alternates (AlternatesFS: absolute alternate paths are paths of the OS).
	st := filesystem.NewStorageWithOptions(dotgit.NewRepositoryFilesystem(dot, common), cache.NewObjectLRU(cache.MiByte),
		filesystem.Options{KeepDescriptors: true, AlternatesFS: guard(osfs.New(string(filepath.Separator)), seen)})
	wt := guard(osfs.New(top), seen)
	if _, err := gogit.Open(st, wt); err != nil { // HEAD present, config readable, extensions known
		_ = st.Close()
		if refused := seen.err(); refused != nil {
			return nil, fmt.Errorf("open git repository in %s: %w", dir, refused)
		}
		if errors.Is(err, gogit.ErrRepositoryNotExists) {
			return nil, fmt.Errorf("open git repository: %w in %s or its parents", ErrNoRepository, dir)
		}
		return nil, fmt.Errorf("open git repository in %s: %w", dir, err)
	}
	store, err := openLazyStore(st, objectsDir)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("open git repository in %s: %w", dir, err)
	}
	return &Repo{store: store, top: wt.Root(), gitDir: dot.Root(), commonDir: filepath.Dir(objectsDir), refused: seen}, nil
}

// findGitDir returns the working tree's top that holds dir (dir or its nearest parent with a
// .git entry) and its git directory: top/.git, or the directory a .git file's "gitdir: " line
// names. The .git file is read without blocking (readRegular).
func findGitDir(dir string) (top, gitDir string, err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", "", fmt.Errorf("open git repository: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("open git repository: %w", err)
	}
	if !fi.IsDir() {
		abs = filepath.Dir(abs)
	}
	for {
		dotGit := filepath.Join(abs, ".git")
		fi, err := os.Stat(dotGit)
		if err == nil {
			if fi.IsDir() {
				return abs, dotGit, nil
			}
			b, err := readRegular(dotGit, maxSmallFileBytes)
			if err != nil {
				return "", "", fmt.Errorf("open git repository in %s: read .git: %w", dir, err)
			}
			line, _, _ := strings.Cut(string(b), "\n")
			target, ok := strings.CutPrefix(line, "gitdir: ")
			if !ok {
				return "", "", fmt.Errorf("open git repository in %s: %s has no gitdir: prefix", dir, dotGit)
			}
			if target = strings.TrimSpace(target); !filepath.IsAbs(target) {
				target = filepath.Join(abs, target)
			}
			return abs, target, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("open git repository in %s: %w", dir, err)
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", "", fmt.Errorf("open git repository: %w in %s or its parents", ErrNoRepository, dir)
		}
		abs = parent
	}
}

// objectsDirOf returns the object directory of the git directory gitDir: the common directory's
// when gitDir belongs to a linked worktree (it has a commondir file), as git resolves it.
func objectsDirOf(gitDir string) (string, error) {
	common, err := readRegular(filepath.Join(gitDir, "commondir"), maxSmallFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return filepath.Join(gitDir, "objects"), nil
	}
	if err != nil {
		return "", fmt.Errorf("read commondir: %w", err)
	}
	dir := strings.TrimRight(string(common), "\r\n")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	return filepath.Join(dir, "objects"), nil
}

// Close releases the pack files, indexes and commit-graph the Repo keeps mapped.
func (r *Repo) Close() error {
	var errs []error
	if r.graph != nil {
		errs = append(errs, r.graph.close())
		r.graph = nil
	}
	errs = append(errs, r.store.Close())
	return errors.Join(errs...)
}

// commitGraph returns the repository's commit-graph, opened on first use; nil when there is none
// or it cannot be used (then graphErr says why, and the walks read the objects, as without one).
func (r *Repo) commitGraph() *commitGraph {
	if !r.graphOpened {
		r.graph, r.graphErr = openCommitGraph(r.store.objectsDir)
		r.refused.note(r.graphErr) // a special file: an error, not a graph to do without
		r.graphOpened = true
	}
	return r.graph
}

// Resolve returns the full SHA of the commit that rev names: a full or abbreviated (at least 4 hex
// digits, unambiguous among commits and tags) object id, HEAD, a branch, a tag (annotated tags are
// peeled to their commit), a remote-tracking branch or a refs/... name, optionally followed by any
// sequence of ~, ~N, ^, ^N and ^{commit}. A name is looked up as git does: refs before
// abbreviated ids. Anything else (reflog @{...}, :path, ranges) and anything that names a tree or
// a blob is a *RevisionError.
func (r *Repo) Resolve(rev string) (string, error) {
	defer r.readingFor("resolving the revision " + rev)()
	h, err := r.resolve(rev)
	if refused := r.refused.err(); refused != nil {
		return "", &RevisionError{Rev: rev, Err: refused}
	}
	if err != nil {
		return "", &RevisionError{Rev: rev, Err: err}
	}
	return h.String(), nil
}

// revSuffix matches one ancestry operator at the start of the rest of a revision.
var revSuffix = regexp.MustCompile(`^(?:~([0-9]*)|\^\{(?:commit)?\}|\^([0-9]*))`)

// resolve parses rev itself rather than calling go-git's ResolveRevision, which silently ignores
// the operators it does not implement (HEAD@{1}, HEAD^{tree} and HEAD:path all yield HEAD), reads
// ^3 as ^2, and picks one commit when an abbreviated id is ambiguous: a gate must refuse those.
func (r *Repo) resolve(rev string) (plumbing.Hash, error) {
	name, ops := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		name, ops = rev[:i], rev[i:]
	}
	switch {
	case rev == "":
		return plumbing.ZeroHash, errors.New("empty revision")
	case name == "", name == "@", strings.Contains(name, "@{"), strings.ContainsAny(name, ":{}[]?*\\"),
		strings.ContainsFunc(name, func(c rune) bool { return c <= ' ' || c == 0x7f }),
		strings.Contains(name, ".."), strings.HasPrefix(name, "/"), strings.HasPrefix(name, "-"):
		return plumbing.ZeroHash, errors.New("not a commit name this gate supports (a SHA, HEAD, a branch, a tag or refs/...)")
	}
	h, err := r.resolveName(name)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for ops != "" {
		m := revSuffix.FindStringSubmatchIndex(ops)
		if m == nil {
			return plumbing.ZeroHash, fmt.Errorf("unsupported revision syntax at %q (only ~N, ^N and ^{commit} follow a name)", ops)
		}
		tok := ops[:m[1]]
		ops = ops[m[1]:]
		switch {
		case strings.HasPrefix(tok, "~"):
			n, err := revCount(tok[1:])
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if h, err = r.firstParentAncestor(h, n); err != nil {
				return plumbing.ZeroHash, err
			}
		case strings.HasPrefix(tok, "^{"):
			// h is already a commit.
		default:
			n, err := revCount(tok[1:])
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if n > 0 {
				if h, err = r.parent(h, n); err != nil {
					return plumbing.ZeroHash, err
				}
			}
		}
	}
	return h, nil
}

// revCount reads the number after ~ or ^; none means 1.
func revCount(digits string) (int, error) {
	if digits == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > 1<<20 {
		return 0, fmt.Errorf("ancestor number %q out of range", digits)
	}
	return n, nil
}

// parent returns the nth (1-based) parent of commit h.
func (r *Repo) parent(h plumbing.Hash, n int) (plumbing.Hash, error) {
	c, err := r.readCommit(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n > len(c.parents) {
		return plumbing.ZeroHash, fmt.Errorf("no such ancestor: commit %s has %d parent(s), not %d", h, len(c.parents), n)
	}
	return c.parents[n-1], nil
}

// resolveName resolves a revision without operators to a commit.
func (r *Repo) resolveName(name string) (plumbing.Hash, error) {
	if len(name) == 2*len(plumbing.ZeroHash) && isHex(name) {
		return r.peelToCommit(plumbing.NewHash(strings.ToLower(name)))
	}
	if h, ok := r.lookupRef(name); ok {
		return r.peelToCommit(h)
	}
	if len(name) >= 4 && isHex(name) {
		return r.resolvePrefix(strings.ToLower(name))
	}
	return plumbing.ZeroHash, errRevNotFound
}

// lookupRef tries rev as a reference name in git's order (git-rev-parse(1), "SPECIFYING
// REVISIONS"): refs/<rev>, refs/tags/<rev>, refs/heads/<rev>, refs/remotes/<rev>,
// refs/remotes/<rev>/HEAD; <rev> itself only for refs/... names and pseudo-refs such as HEAD, so
// that a name like "config" never reads a file of .git.
func (r *Repo) lookupRef(rev string) (plumbing.Hash, bool) {
	var names []string
	if strings.HasPrefix(rev, "refs/") || isPseudoRef(rev) {
		names = append(names, rev)
	}
	names = append(names, "refs/"+rev, "refs/tags/"+rev, "refs/heads/"+rev, "refs/remotes/"+rev,
		"refs/remotes/"+rev+"/HEAD")
	for _, name := range names {
		// Any error (absent, a directory, unreadable) means "not this candidate", as for git.
		ref, err := storer.ResolveReference(r.store, plumbing.ReferenceName(name))
		if err == nil && ref.Type() == plumbing.HashReference {
			return ref.Hash(), true
		}
	}
	return plumbing.ZeroHash, false
}

// isPseudoRef reports whether name has the shape of HEAD, ORIG_HEAD, FETCH_HEAD and the like.
func isPseudoRef(name string) bool {
	return !strings.ContainsFunc(name, func(c rune) bool { return (c < 'A' || c > 'Z') && c != '_' })
}

// resolvePrefix resolves an abbreviated object id among the objects that peel to a commit, as git
// does for a commit-ish: one such object → its commit; none → not found; several → ambiguous.
func (r *Repo) resolvePrefix(prefix string) (plumbing.Hash, error) {
	even, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return plumbing.ZeroHash, errRevNotFound
	}
	candidates, err := r.store.HashesWithPrefix(even)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("search abbreviated id: %w", err)
	}
	var found []plumbing.Hash // distinct commits the matching objects peel to
	var matched []string
	for _, c := range candidates {
		if !strings.HasPrefix(c.String(), prefix) {
			continue // the odd last hex digit differs
		}
		commit, err := r.peelToCommit(c)
		if ce := (*CorruptError)(nil); errors.As(err, &ce) {
			return plumbing.ZeroHash, err // a forged candidate is no answer either way
		}
		if err != nil {
			continue // a tree or a blob: not a candidate for a commit-ish
		}
		matched = append(matched, c.String())
		if !slices.Contains(found, commit) {
			found = append(found, commit)
		}
	}
	switch {
	case len(matched) == 0:
		return plumbing.ZeroHash, errRevNotFound
	case len(matched) > 1:
		slices.Sort(matched)
		return plumbing.ZeroHash, fmt.Errorf("%w: matches %s", errRevAmbiguous, strings.Join(matched, ", "))
	}
	return found[0], nil
}

// peelToCommit follows annotated tags from h until it reaches a commit.
func (r *Repo) peelToCommit(h plumbing.Hash) (plumbing.Hash, error) {
	const maxTagChain = 16
	for range maxTagChain {
		obj, err := r.store.EncodedObject(plumbing.AnyObject, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return plumbing.ZeroHash, errRevNotFound
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read object %s: %w", h, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(r.store, obj)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("read tag %s: %w", h, err)
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%w: %s is a %s", errNotCommit, h, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%w: tag chain longer than %d", errNotCommit, maxTagChain)
}

// IsAncestor reports whether base is head or is reachable from head through any parent, as
// `git merge-base --is-ancestor base head` does. base and head are full SHAs of commits (from
// Resolve). Commits listed in .git/shallow are treated as having no parents, as git does.
func (r *Repo) IsAncestor(base, head string) (bool, error) {
	defer r.readingFor("the ancestry of " + short12(base) + " in " + short12(head))()
	b, err := r.commitHash("base", base)
	if err != nil {
		return false, err
	}
	h, err := r.commitHash("head", head)
	if err != nil {
		return false, err
	}
	ok, err := r.reachable(b, h)
	if refused := r.refused.err(); refused != nil {
		return false, refused
	}
	return ok, err
}

// reachable decides exactly whether base is reachable from head, walking from both commits at
// once. Two facts end the walk early without trusting commit dates:
//   - reaching base from head proves it;
//   - a strict ancestor of base cannot lead back to base (history is acyclic), so the walk from
//     head need not go below a commit that the walk from base has reached.
//
// Both walks share one queue, newest committer date first; dates only choose the order, so skewed
// dates can cost time but never change the answer (pruning by date would). The answer is false
// once every commit left to explore from head is an ancestor of base: for a base on an unmerged
// branch that happens just below the fork point, not at the root. Commits listed in .git/shallow
// have no parents, as in git.
//
// With a commit-graph, the walk is reachableByGraph instead, pruned by generation numbers; a
// malformed or inconsistent graph falls back to the walk here. git too ignores the commit-graph
// of a shallow repository.
func (r *Repo) reachable(base, head plumbing.Hash) (bool, error) {
	if base == head {
		return true, nil
	}
	shallowList, err := r.store.Shallow()
	if err != nil {
		return false, fmt.Errorf("read shallow commits: %w", err)
	}
	if len(shallowList) == 0 {
		if g := r.commitGraph(); g != nil {
			ok, err := r.reachableByGraph(g, base, head)
			if !errors.Is(err, errBadGraph) {
				return ok, err
			}
			r.graphErr = err // not used again
			_ = g.close()
			r.graph = nil
		}
	}
	shallow := make(map[plumbing.Hash]bool, len(shallowList))
	for _, s := range shallowList {
		shallow[s] = true
	}
	return r.reachableByWalk(base, head, shallow)
}

// reachableByWalk is reachable without a commit-graph: the walk from head and base at once,
// newest commit first, that stops when nothing reached from head alone is left to explore.
// Commits in shallow have no parents. It reads each commit only as far as its parents
// (readCommitStart); when it reaches base, the commits of the path from head are read whole,
// verified, and must name the same parents (confirmWalkPath).
func (r *Repo) reachableByWalk(base, head plumbing.Hash, shallow map[plumbing.Hash]bool) (bool, error) {
	const fromHead, fromBase = 1, 2
	type node struct {
		parents []plumbing.Hash
		when    int64
		flags   uint8
		queued  bool
		child   plumbing.Hash // the commit through which the walk from head reached this one
		checked bool          // read whole and verified already: its parents need no confirmation
	}
	nodes := map[plumbing.Hash]*node{}
	queue := &commitQueue{}
	live := 0 // queued commits reached from head and not from base: the walk from head still to do
	isLive := func(n *node) int {
		if n.queued && n.flags == fromHead {
			return 1
		}
		return 0
	}
	// mark adds flags to commit h, a parent of child (ZeroHash for head and base), and queues it
	// when they are news. The commits are read by their start (readCommitStart): the path the
	// answer rests on is confirmed at the end.
	mark := func(h plumbing.Hash, flags uint8, child plumbing.Hash) error {
		n, ok := nodes[h]
		if !ok {
			c, err := r.store.readCommitStart(h)
			if err != nil {
				return fmt.Errorf("read commit %s: %w", h, err)
			}
			n = &node{when: c.when, checked: c.verified}
			if !shallow[h] {
				n.parents = c.parents
			}
			nodes[h] = n
		}
		if n.flags|flags == n.flags {
			return nil
		}
		live -= isLive(n)
		if flags&fromHead != 0 && n.flags&fromHead == 0 {
			n.child = child
		}
		n.flags |= flags
		if !n.queued {
			n.queued = true
			heap.Push(queue, queuedCommit{h, n.when})
		}
		live += isLive(n)
		return nil
	}

	if err := mark(head, fromHead, plumbing.ZeroHash); err != nil {
		return false, err
	}
	if err := mark(base, fromBase, plumbing.ZeroHash); err != nil {
		return false, err
	}
	for live > 0 {
		h := heap.Pop(queue).(queuedCommit).hash
		n := nodes[h]
		live -= isLive(n)
		n.queued = false
		for _, p := range n.parents {
			if p == base && n.flags&fromHead != 0 {
				return true, r.confirmWalkPath(h, head, func(c plumbing.Hash) (plumbing.Hash, []plumbing.Hash, bool) {
					return nodes[c].child, nodes[c].parents, nodes[c].checked
				})
			}
			if err := mark(p, n.flags, h); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// confirmWalkPath confirms the path reachableByWalk found, from last (whose parent is base) back
// to head through the children the walk recorded (step gives a commit's child on the path, the
// parents the walk used and whether the walk read it whole, verified): each commit of it that the
// walk read only by its start is read whole, verified against its id, and must name the parents
// the walk used. A "not an ancestor" answer rests on no path and is not confirmed: a forgery can
// only make the gate refuse, never pass.
func (r *Repo) confirmWalkPath(last, head plumbing.Hash, step func(plumbing.Hash) (plumbing.Hash, []plumbing.Hash, bool)) error {
	for c := last; ; {
		child, parents, checked := step(c)
		if !checked {
			got, err := r.readCommit(c)
			if err != nil {
				return err
			}
			if !slices.Equal(got.parents, parents) {
				return r.store.corruption(c, fmt.Sprintf("its start names the parents [%s], the whole object [%s]",
					joinHashes(parents), joinHashes(got.parents)))
			}
		}
		if c == head {
			return nil
		}
		if child.IsZero() {
			return fmt.Errorf("the walk's path from %s does not lead back to head %s", last, head)
		}
		c = child
	}
}

// queuedCommit is a commit waiting in the reachability walk.
type queuedCommit struct {
	hash plumbing.Hash
	when int64 // committer time, unix seconds
}

// commitQueue is a heap of commits, newest committer time first (ties by hash, for a
// deterministic walk).
type commitQueue []queuedCommit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if q[i].when != q[j].when {
		return q[i].when > q[j].when
	}
	return bytes.Compare(q[i].hash[:], q[j].hash[:]) < 0
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(queuedCommit)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// commitHash parses a full SHA and checks that it names a commit; what says which argument it is.
func (r *Repo) commitHash(what, sha string) (plumbing.Hash, error) {
	if len(sha) != 2*len(plumbing.ZeroHash) || !isHex(sha) {
		return plumbing.ZeroHash, fmt.Errorf("%s %q is not a full commit SHA", what, sha)
	}
	h := plumbing.NewHash(strings.ToLower(sha))
	if _, err := r.store.EncodedObject(plumbing.CommitObject, h); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s %s is not a commit of this repository: %w", what, sha, err)
	}
	return h, nil
}

// ChangedFiles returns the paths that `git diff --name-only --no-renames base head` lists: every
// file added, deleted, or changed in content or mode between the two commits' trees; a rename
// yields both paths. base and head are full SHAs; the paths are slash-separated, sorted, unique,
// byte for byte as in the trees.
func (r *Repo) ChangedFiles(base, head string) ([]string, error) {
	defer r.readingFor("the diff " + short12(base) + ".." + short12(head))()
	changes, err := r.treeChanges(base, head)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.path)
	}
	if !slices.IsSorted(paths) { // the walk is in path order; this costs one pass
		slices.Sort(paths)
	}
	return slices.Compact(paths), nil
}

// AddedLine is one line that a diff adds.
type AddedLine struct {
	Path string // slash-separated path in head
	Line int    // 1-based line number in head's version of the file
	Text string // the line without its line ending
}

// renameOptions mirror git diff's defaults (diff.renames=true, 50% similarity, diff.renameLimit
// 1000), so that a moved file contributes only the lines that changed, as in `git diff base head`.
var renameOptions = &object.DiffTreeOptions{DetectRenames: true, RenameScore: 50, RenameLimit: 1000}

// appendAdded numbers the inserted lines of a line diff by their position in the new text.
func appendAdded(added []AddedLine, path string, diffs []diffmatchpatch.Diff) []AddedLine {
	line := 1 // number of the next line of the new text
	for _, d := range diffs {
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			line += countLines(d.Text)
		case diffmatchpatch.DiffInsert:
			for text := range strings.Lines(d.Text) {
				text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
				added = append(added, AddedLine{Path: path, Line: line, Text: text})
				line++
			}
		}
	}
	return added
}

// countLines counts lines the way strings.Lines splits them: a final line without "\n" counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func isHex(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(c rune) bool {
		return (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F')
	})
}
