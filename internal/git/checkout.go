package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// checkoutPrefix names the temporary directories Checkout makes.
const checkoutPrefix = "geas-checkout-"

// checkoutStreamAbove is the size over which a blob is streamed into its file (hashed as it goes,
// verified at its end) instead of read whole: a checkout's memory does not grow with its largest
// file.
const checkoutStreamAbove = 16 << 20

// maxSymlinkTarget bounds a symlink's target (its blob), as git's PATH_MAX-sized buffers do.
const maxSymlinkTarget = 1 << 16

// Checkout is a checkout of one commit made by the gate (Repo.Checkout), with the stat data of
// every file as the gate wrote it: the gate's own index, which no one else has written.
type Checkout struct {
	Dir     string // the top of the checkout
	entries []*index.Entry
	written time.Time // when the last file was written: later mtimes are racily clean
}

// Checkout writes the tree of commit head (a full SHA) into a new temporary directory (no git
// binary, no filters, no hooks). Regular files keep their executable bit, symlinks are made as
// symlinks, a submodule is an empty directory; there is no .git. Every object is read through the
// repository's own store and verified against its id (verify.go): a blob over
// checkoutStreamAbove is streamed and verified at its end, and a forged one fails the checkout.
// Every write is relative to its directory, opened once (a bare descriptor on linux and darwin,
// an os.Root elsewhere), one path component at a time, O_EXCL and never through a symlink, so a
// tree entry cannot write outside the checkout. The stat data of each file is taken from the open
// file before it is closed (one fstat, no lstat of the path afterwards). The caller removes the
// checkout with RemoveCheckout.
//
// The whole tree is written: the commands run in a checkout may read any file of it, and nothing
// short of a file system in user space could write a file only when it is first read.
func (r *Repo) Checkout(head string) (*Checkout, error) {
	defer r.readingFor("the isolated checkout of " + short12(head))()
	tree, err := r.commitTree("head", head)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", checkoutPrefix)
	if err != nil {
		return nil, fmt.Errorf("make the checkout directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open the checkout directory: %w", err)
	}
	defer root.Close()
	co := &Checkout{Dir: dir}
	w := &treeWriter{r: r, co: co}
	top, err := openCheckoutDir(root)
	if err == nil {
		defer top.close()
		err = w.tree(top, tree, "", 0)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("check out %s: %w", head, err)
	}
	co.written = time.Now()
	return co, nil
}

// Changed lists the paths of the checkout that no longer hold the commit (modified, deleted, or
// untracked and not ignored by the commit's .gitignore files), by the rules of CheckWorktree
// against the stat data the gate recorded when it wrote them. After Overlay, the overlaid paths
// are compared with what Overlay wrote.
func (co *Checkout) Changed() ([]string, error) {
	c := &wtCheck{top: co.Dir, indexTime: co.written, entries: make(map[string]*wtEntry, len(co.entries)), dirs: map[string]bool{"": true}}
	for _, e := range co.entries {
		e := *e
		c.addEntry(&e)
	}
	c.noSubmodules = true
	if err := c.compareDisk(nil); err != nil {
		return nil, err
	}
	return c.paths, nil
}

// Overlay makes each of paths (slash-separated, relative to the checkout's top: a file, a symlink
// or a directory) in the checkout what it is in commit (a full SHA) of repository r, which need
// not be the repository checked out (a held-out ref of another repository), as
// `git checkout --no-overlay COMMIT -- PATHS` does in a worktree:
//   - whatever the checkout has at a path (a file, a symlink, a directory and everything in it,
//     tracked or left by a command) is removed, and the commit's file or directory written there,
//     every object verified against its id as Checkout's are;
//   - a path the commit does not have is removed and stays absent;
//   - a directory above a path that the checkout has as a file or a symlink (the work may have
//     made `test` a link to `src`) is replaced by a real directory, so that no overlaid file lands
//     anywhere but at its own path.
//
// Changed then compares the overlaid paths with what Overlay wrote, and the rest with the checked
// out commit. The base's test files over a checkout of the head (SWE-bench's harness restores
// them so), and held-out checks from a ref over a checkout of the head, are both this call; a
// checkout of the base itself is Repo.Checkout of the base.
func (co *Checkout) Overlay(r *Repo, commit string, paths []string) error {
	defer r.readingFor("the overlay of " + short12(commit) + " onto the isolated checkout")()
	tree, err := r.commitTree("overlay", commit)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if !validIndexPath(p) {
			return fmt.Errorf("overlay: %q is not a path a checkout can hold", p)
		}
	}
	root, err := os.OpenRoot(co.Dir)
	if err != nil {
		return fmt.Errorf("open the checkout directory: %w", err)
	}
	defer root.Close()
	w := &treeWriter{r: r, co: co, dropped: map[string]bool{}}
	for _, p := range paths {
		if err := w.overlay(root, tree, p); err != nil {
			return fmt.Errorf("overlay %s of %s: %w", p, short12(commit), err)
		}
	}
	co.entries = slices.DeleteFunc(co.entries, func(e *index.Entry) bool { return w.dropped[e.Name] })
	co.entries = append(co.entries, w.added...)
	co.written = time.Now()
	return nil
}

// treeWriter writes trees into a checkout and records an index entry, with its stat data, for
// every file it writes.
type treeWriter struct {
	r       *Repo
	co      *Checkout
	parsed  []treeEntry     // the entries of the trees being written, a stack (as treeDiffer's)
	dropped map[string]bool // Overlay: entries of the checkout removed from disk
	added   []*index.Entry  // Overlay: entries written, added to the checkout's after the drop
}

// record adds the entry of a file written at name.
func (w *treeWriter) record(e *index.Entry) {
	if w.dropped != nil {
		w.added = append(w.added, e)
		return
	}
	w.co.entries = append(w.co.entries, e)
}

// readTree reads and parses tree h onto the end of w.parsed and returns its entries, valid until
// w.parsed is cut below them.
func (w *treeWriter) readTree(h plumbing.Hash) ([]treeEntry, error) {
	typ, data, err := w.r.readObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	if typ != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, not a tree", h, typ)
	}
	n := len(w.parsed)
	all, err := parseTreeEntries(h, data, w.parsed)
	if err != nil {
		return nil, err
	}
	w.parsed = all
	return all[n:len(all):len(all)], nil
}

// tree writes tree h into dir, which is the checkout's directory prefix ("" for the top, else
// ending in "/").
func (w *treeWriter) tree(dir ckDir, h plumbing.Hash, prefix string, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("tree %s: nested too deep", h)
	}
	n := len(w.parsed)
	defer func() { w.parsed = w.parsed[:n] }()
	entries, err := w.readTree(h)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := w.entry(dir, string(e.name), prefix, e, depth); err != nil {
			return err
		}
	}
	return nil
}

// entry writes tree entry e as name in dir, the checkout's directory prefix.
func (w *treeWriter) entry(dir ckDir, name, prefix string, e treeEntry, depth int) error {
	full := prefix + name
	if !validIndexPath(full) {
		return fmt.Errorf("tree entry %q cannot be checked out", full)
	}
	switch e.mode {
	case filemode.Dir:
		sub, err := dir.mkdir(name, true)
		if err != nil {
			return err
		}
		defer sub.close()
		return w.tree(sub, e.hash, full+"/", depth+1)
	case filemode.Submodule:
		if _, err := dir.mkdir(name, false); err != nil {
			return err
		}
		w.record(&index.Entry{Name: full, Mode: e.mode, Hash: e.hash})
		return nil
	case filemode.Symlink:
		return w.symlink(dir, name, full, e.hash)
	case filemode.Regular, filemode.Executable:
		return w.file(dir, name, full, e)
	}
	return fmt.Errorf("tree entry %q has mode %s", full, e.mode)
}

// symlink makes the symlink name in dir, its target blob h.
func (w *treeWriter) symlink(dir ckDir, name, full string, h plumbing.Hash) error {
	typ, target, err := w.r.readObject(h)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", full, err)
	case typ != plumbing.BlobObject:
		return fmt.Errorf("%s: object %s is a %s, not a blob", full, h, typ)
	case len(target) > maxSymlinkTarget:
		return fmt.Errorf("%s: blob %s is %d bytes, more than %d", full, h, len(target), maxSymlinkTarget)
	}
	st, err := dir.symlink(string(target), name)
	if err != nil {
		return err
	}
	w.record(statEntry(full, filemode.Symlink, h, st))
	return nil
}

// file writes the regular file name in dir, entry e, in one write (a blob read whole) or streamed,
// and takes its stat data from the open file.
func (w *treeWriter) file(dir ckDir, name, full string, e treeEntry) error {
	perm := os.FileMode(0o644)
	if e.mode == filemode.Executable {
		perm = 0o755
	}
	b, err := w.r.openBlob(full, e.hash, checkoutStreamAbove)
	if err != nil {
		return err
	}
	defer b.close()
	st, err := dir.writeFile(name, perm, b.data, b.rc) // a stream's last read verifies the blob's id
	if err != nil {
		return fmt.Errorf("%s: %w", full, err)
	}
	w.record(statEntry(full, e.mode, e.hash, st))
	return nil
}

// statEntry is the index entry of a file just written, with its stat data.
func statEntry(name string, mode filemode.FileMode, h plumbing.Hash, st fileStat) *index.Entry {
	e := &index.Entry{Name: name, Mode: mode, Hash: h, Size: uint32(st.size), ModifiedAt: st.mtime}
	if st.full {
		e.Inode, e.CreatedAt = uint32(st.ino), st.ctime
	}
	return e
}

// ckDir is a directory of a checkout being written: every name is one path component, created
// where nothing is (a symlink is never followed).
type ckDir interface {
	// mkdir makes the directory name and, when open, opens it.
	mkdir(name string, open bool) (ckDir, error)
	// writeFile creates the file name with perm and writes data, or rc when it is not nil, and
	// returns the stat data of the open file.
	writeFile(name string, perm os.FileMode, data []byte, rc io.Reader) (fileStat, error)
	// symlink makes the symlink name to target and returns its lstat.
	symlink(target, name string) (fileStat, error)
	close()
}

// rootDir is the portable ckDir, an os.Root.
type rootDir struct{ r *os.Root }

func (d rootDir) mkdir(name string, open bool) (ckDir, error) {
	if err := d.r.Mkdir(name, 0o755); err != nil || !open {
		return nil, err
	}
	sub, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return rootDir{sub}, nil
}

func (d rootDir) writeFile(name string, perm os.FileMode, data []byte, rc io.Reader) (fileStat, error) {
	f, err := d.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fileStat{}, err
	}
	if rc != nil {
		_, err = io.Copy(f, rc)
	} else {
		_, err = f.Write(data)
	}
	var fi fs.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileStat{}, err
	}
	return fileStatOf(fi), nil
}

func (d rootDir) symlink(target, name string) (fileStat, error) {
	if err := d.r.Symlink(target, name); err != nil {
		return fileStat{}, err
	}
	fi, err := d.r.Lstat(name)
	if err != nil {
		return fileStat{}, err
	}
	return fileStatOf(fi), nil
}

func (d rootDir) close() { _ = d.r.Close() }

// overlay makes path p of the checkout what it is in tree (Overlay).
func (w *treeWriter) overlay(root *os.Root, tree plumbing.Hash, p string) error {
	n := len(w.parsed)
	defer func() { w.parsed = w.parsed[:n] }()
	want, found, err := w.lookup(tree, p)
	if err != nil {
		return err
	}
	parts := strings.Split(p, "/")
	parent := ""
	for _, part := range parts[:len(parts)-1] {
		parent += part
		if err := w.realDir(root, parent, found); err != nil {
			return err
		}
		parent += "/"
	}
	if err := w.remove(root, p); err != nil {
		return err
	}
	if !found {
		return nil
	}
	dir := rootDir{root}
	if parent != "" {
		sub, err := root.OpenRoot(strings.TrimSuffix(parent, "/"))
		if err != nil {
			return err
		}
		defer sub.Close()
		dir = rootDir{sub}
	}
	return w.entry(dir, parts[len(parts)-1], parent, want, 0)
}

// lookup finds path p in tree; found is false when the tree does not have it.
func (w *treeWriter) lookup(tree plumbing.Hash, p string) (e treeEntry, found bool, err error) {
	parts := strings.Split(p, "/")
	cur := tree
	for i, part := range parts {
		entries, err := w.readTree(cur)
		if err != nil {
			return treeEntry{}, false, err
		}
		k := slices.IndexFunc(entries, func(e treeEntry) bool { return string(e.name) == part })
		if k < 0 {
			return treeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return entries[k], true, nil
		}
		if !entries[k].isDir() {
			return treeEntry{}, false, nil
		}
		cur = entries[k].hash
	}
	return treeEntry{}, false, nil
}

// realDir makes sure that name, a directory above an overlaid path, is a real directory of the
// checkout: anything else there is removed, and the directory made when make is set (a path the
// overlay only removes needs no directory above it).
func (w *treeWriter) realDir(root *os.Root, name string, make bool) error {
	fi, err := root.Lstat(name)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		if err := w.remove(root, name); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if !make {
		return nil
	}
	return root.Mkdir(name, 0o755)
}

// remove removes whatever the checkout has at name, and drops the entries at and below it.
func (w *treeWriter) remove(root *os.Root, name string) error {
	if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
		makeWritable(filepath.Join(w.co.Dir, filepath.FromSlash(name)))
	}
	if err := root.RemoveAll(name); err != nil {
		return err
	}
	for _, e := range w.co.entries {
		if e.Name == name || strings.HasPrefix(e.Name, name+"/") {
			w.dropped[e.Name] = true
		}
	}
	for i, e := range w.added {
		if e.Name == name || strings.HasPrefix(e.Name, name+"/") {
			w.added[i] = nil
		}
	}
	w.added = slices.DeleteFunc(w.added, func(e *index.Entry) bool { return e == nil })
	return nil
}

// makeWritable makes every directory below dir, dir included, writable by its owner, without
// following symlinks: eval commands may have left read-only directories behind.
func makeWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// RemoveCheckout removes a directory made by Checkout, and refuses any other.
func RemoveCheckout(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), checkoutPrefix) || filepath.Dir(dir) != filepath.Clean(os.TempDir()) {
		return fmt.Errorf("%s is not a checkout made by the gate", dir)
	}
	makeWritable(dir)
	return os.RemoveAll(dir)
}
