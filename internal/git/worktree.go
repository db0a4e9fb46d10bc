package git

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxIndexBytes bounds the index file the working-tree check reads (a 1,000,000-file index is
// about 100 MiB).
const maxIndexBytes = 512 << 20

// WorktreeReport is what the working-tree check found (CheckWorktree).
type WorktreeReport struct {
	HEAD    string   // the commit HEAD resolves to; "" when it does not resolve (HEADErr says why)
	HEADErr string   // why HEAD does not resolve
	Paths   []string // paths that differ from the head, sorted, slash-separated, relative to Top
	Entries int      // index entries compared with the files on disk
	Hashed  int      // files hashed because their stat data differed or was racily clean
}

// Clean reports whether the working tree is the commit head: HEAD resolves to it and no path differs.
func (w *WorktreeReport) Clean(head string) bool {
	return w.HEADErr == "" && w.HEAD == head && len(w.Paths) == 0
}

// Top returns the repository's top directory (the directory that holds .git), absolute.
func (r *Repo) Top() string { return r.top }

// CheckWorktree compares the working tree with the commit head (a full SHA), by the gate's own
// rules (SPEC §5.1), not git's:
//   - HEAD must resolve to head;
//   - the index's entries must all be at stage 0 and equal head's tree (path, mode, blob id): a
//     staged but uncommitted change is a change;
//   - each index entry's file must match it: lstat's size, mtime, ctime, inode and mode are
//     compared with the entry's stat data, and an entry that differs in any of them, or that is
//     racily clean (its mtime is not before the index file's), is hashed as a git blob (a
//     symlink: its target) and compared. Index flags (assume-unchanged, skip-worktree,
//     intent-to-add), core.checkStat, core.trustctime, core.fileMode and clean/smudge filters are
//     ignored: nothing in the repository's configuration can talk the check out of a change;
//   - a missing file is a deleted path, and a file on disk that is not in the index and not
//     ignored is an added path. Ignore rules are read from .git/info/exclude and from the
//     .gitignore files that are tracked (an untracked .gitignore is an untracked file: it cannot
//     hide itself or anything else).
//
// exempt lists paths relative to Top that are not compared: an entry ending in "/" exempts
// everything below that directory, any other entry one file. A submodule (a gitlink entry) is
// compared by running the same check in it against the commit the gitlink names, when it is
// checked out.
func (r *Repo) CheckWorktree(head string, exempt []string) (*WorktreeReport, error) {
	defer r.readingFor("the working-tree check against " + short12(head))()
	h, err := r.commitHash("head", head)
	if err != nil {
		return nil, err
	}
	rep := &WorktreeReport{}
	if got, err := r.Resolve("HEAD"); err != nil {
		rep.HEADErr = err.Error()
	} else {
		rep.HEAD = got
	}
	if r.top == "" {
		return nil, errors.New("working-tree check: the repository has no working tree")
	}
	c := &wtCheck{top: r.top, exempt: exempt}

	// While go-git decodes the index, list the directories and lstat their files: the walk below
	// uses what this prefetch got to before the index was ready.
	c.pf = startPrefetch(r.top, c.isExempt, c.opener())
	defer c.pf.finish()
	idx, idxTime, err := readIndex(filepath.Join(r.gitDir, "index"))
	c.pf.stop.Store(true)
	if err != nil {
		return nil, err
	}
	// The index against the head tree: when the tree the index's entries make (as git write-tree
	// would) is the head's tree, they are equal, and the head's trees need not be read at all.
	commit, err := object.GetCommit(r.store, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	var tree map[string]treeFile
	if got, ok := indexTreeHash(idx.Entries); !ok || got != commit.TreeHash {
		if tree, err = r.headTree(h); err != nil {
			return nil, err
		}
	}
	c.indexAgainstHead(idx.Entries, tree)
	rep.Entries = len(c.entries)

	// The files on disk against the index.
	c.indexTime = idxTime
	c.hashAll = filtersConfigured(r.gitDir, r.commonDir)
	root, err := c.rootPatterns(filepath.Join(r.commonDir, "info", "exclude"))
	if err != nil {
		return nil, err
	}
	if err := c.compareDisk(root); err != nil {
		return nil, err
	}
	rep.Paths = c.paths
	rep.Hashed = c.hashed
	return rep, nil
}

// indexAgainstHead adds the paths where the index's entries are not the head's tree (nil: the
// trees are known to be equal), and records the stage-0 entries to compare with the disk.
func (c *wtCheck) indexAgainstHead(entries []*index.Entry, tree map[string]treeFile) {
	c.entries = make(map[string]*wtEntry, len(entries))
	c.store = make([]wtEntry, 0, len(entries))
	c.dirs = map[string]bool{"": true}
	for _, e := range entries {
		if c.isExempt(e.Name, false) {
			continue
		}
		if !validIndexPath(e.Name) {
			c.add(e.Name) // an index entry git could never check out: not the head, whatever it holds
			continue
		}
		if e.Stage != 0 { // go-git's index.Merged constant is 1; a merged entry decodes as stage 0
			c.add(e.Name) // an unmerged path
			continue
		}
		if tree != nil {
			want, ok := tree[e.Name]
			if !ok || want.mode != e.Mode || want.hash != e.Hash {
				c.add(e.Name) // staged: added, or changed in mode or content
			}
			delete(tree, e.Name)
		}
		c.addEntry(e)
	}
	for name := range tree {
		if !c.isExempt(name, false) {
			c.add(name) // in the head, removed from the index
		}
	}
}

// addEntry records a stage-0 entry to compare with the disk, and the directories above it.
func (c *wtCheck) addEntry(e *index.Entry) {
	if len(c.store) < cap(c.store) { // one allocation for all the entries, when sized up front
		c.store = append(c.store, wtEntry{Entry: e})
		c.entries[e.Name] = &c.store[len(c.store)-1]
	} else {
		c.entries[e.Name] = &wtEntry{Entry: e}
	}
	for d := e.Name; ; {
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			break
		}
		d = d[:i]
		if c.dirs[d] {
			break
		}
		c.dirs[d] = true
	}
}

// compareDisk walks the files below top against the entries, with the ignore patterns of the top
// (more come from tracked .gitignore files on the way), and leaves the differing paths sorted.
func (c *wtCheck) compareDisk(root []gitignore.Pattern) error {
	c.sem = make(chan struct{}, max(4, 4*runtime.GOMAXPROCS(0)))
	c.wg.Add(1)
	go c.walk("", root, false)
	c.wg.Wait()
	if c.err != nil {
		return c.err
	}
	for name, e := range c.entries {
		if !e.seen {
			c.add(name) // deleted
		}
	}
	for _, sub := range c.submodules {
		if c.noSubmodules {
			continue // a checkout's submodule is the empty directory the gate made
		}
		if err := c.checkSubmodule(sub); err != nil {
			return err
		}
	}
	slices.Sort(c.paths)
	c.paths = slices.Compact(c.paths)
	return nil
}

// readIndex decodes the index file (decodeIndex: go-git's answer, checksum verified) and returns
// it with the file's mtime, against which racily clean entries are judged. A missing index is
// empty.
func readIndex(path string) (*index.Index, time.Time, error) {
	f, fi, err := openRegular(path) // a named pipe is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return &index.Index{Version: 2}, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the git index: %w", err)
	}
	defer f.Close()
	if fi.Size() > maxIndexBytes {
		return nil, time.Time{}, fmt.Errorf("read the git index: %s is not a regular file of at most %d bytes", path, maxIndexBytes)
	}
	// Sized up front from the stat, so that reading does not grow and copy the buffer; a file that
	// grew since still reads whole, up to the bound.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, maxIndexBytes+1))
	data := buf.Bytes()
	if err == nil && len(data) > maxIndexBytes {
		err = fmt.Errorf("%s grew past %d bytes", path, maxIndexBytes)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the git index: %w", err)
	}
	idx, err := decodeIndex(data)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the git index %s: %w", path, err)
	}
	return idx, fi.ModTime(), nil
}

type treeFile struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// headTree lists every non-tree entry of commit h's tree by path.
func (r *Repo) headTree(h plumbing.Hash) (map[string]treeFile, error) {
	c, err := object.GetCommit(r.store, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	out := map[string]treeFile{}
	var walk func(tree plumbing.Hash, prefix string, depth int) error
	walk = func(tree plumbing.Hash, prefix string, depth int) error {
		if depth > 4096 {
			return fmt.Errorf("tree %s: nested too deep", tree)
		}
		t, err := object.GetTree(r.store, tree)
		if err != nil {
			return fmt.Errorf("read tree %s of %s: %w", tree, h, err)
		}
		for _, e := range t.Entries {
			name := prefix + e.Name
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash, name+"/", depth+1); err != nil {
					return err
				}
				continue
			}
			out[name] = treeFile{mode: e.Mode, hash: e.Hash}
		}
		return nil
	}
	if err := walk(c.TreeHash, "", 0); err != nil {
		return nil, err
	}
	return out, nil
}

// validIndexPath reports whether an index path is one git could check out: relative, no empty,
// "." or ".." component, no .git component (in any letter case).
func validIndexPath(p string) bool {
	if p == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if p[i] == 0 {
				return false
			}
			continue
		}
		// An empty part is a leading, trailing or doubled slash.
		if part := p[start:i]; part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return false
		}
		start = i + 1
	}
	return true
}

type wtEntry struct {
	*index.Entry
	seen bool // written by the one walker that lists the entry's directory
}

// wtCheck is one working-tree comparison in progress.
type wtCheck struct {
	top       string
	exempt    []string
	entries   map[string]*wtEntry // stage-0 index entries by path (read-only during the walk)
	dirs      map[string]bool     // directories that hold index entries ("" is the top)
	indexTime time.Time
	hashAll   bool // the stat data cannot be trusted: hash every entry
	// noSubmodules: a gitlink entry is an empty directory the gate made (a checkout)
	noSubmodules bool
	pf           *prefetcher // nil: nothing was prefetched
	store        []wtEntry   // backing array of entries, never grown past its capacity

	sem chan struct{}
	wg  sync.WaitGroup

	mu         sync.Mutex
	paths      []string
	hashed     int
	submodules []*wtEntry
	err        error
}

// walkOpenDir opens a directory for the walk to list and lstat in: the platform's openDir (a test
// sets the portable openFileDir to run the same cases through it).
var walkOpenDir = openDir

// opener returns how the walk opens a directory.
func (c *wtCheck) opener() func(string) (dirHandle, error) { return walkOpenDir }

func (c *wtCheck) add(p string) {
	c.mu.Lock()
	c.paths = append(c.paths, p)
	c.mu.Unlock()
}

func (c *wtCheck) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// isExempt reports whether path (a directory when dir) is a bookkeeping path.
func (c *wtCheck) isExempt(p string, dir bool) bool {
	for _, e := range c.exempt {
		if strings.HasSuffix(e, "/") {
			if strings.HasPrefix(p, e) || (dir && p+"/" == e) {
				return true
			}
		} else if p == e {
			return true
		}
	}
	return false
}

// rootPatterns reads .git/info/exclude (absent is empty).
func (c *wtCheck) rootPatterns(exclude string) ([]gitignore.Pattern, error) {
	data, err := readRegular(exclude, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", exclude, err)
	}
	return parseIgnore(data, nil), nil
}

func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func ignoredBy(ps []gitignore.Pattern, parts []string, isDir bool) bool {
	for i := len(ps) - 1; i >= 0; i-- {
		if m := ps[i].Match(parts, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// walk compares directory dir (relative to top, "" for the top) with the index. patterns are the
// ignore rules in force above it; ignored says the directory itself is ignored (its untracked
// files are then ignored too, as in git).
func (c *wtCheck) walk(dir string, patterns []gitignore.Pattern, ignored bool) {
	defer c.wg.Done()
	c.sem <- struct{}{}
	defer func() { <-c.sem }()

	wd := &walkDir{dir: dir, abs: filepath.Join(c.top, filepath.FromSlash(dir)), open: c.opener()}
	if dir != "" {
		wd.prefix = dir + "/"
	}
	defer wd.close()
	// A tracked .gitignore adds its rules for this directory and below.
	if e, ok := c.entries[wd.prefix+".gitignore"]; ok && e.Mode.IsFile() {
		data, err := readRegular(filepath.Join(wd.abs, ".gitignore"), 1<<20)
		if err == nil {
			patterns = append(slices.Clip(patterns), parseIgnore(data, splitPath(dir))...)
		} // unreadable or missing: the entry itself is reported below
	}
	list, err := c.list(wd)
	if err != nil {
		if dir == "" {
			c.fail(fmt.Errorf("list the working tree %s: %w", wd.abs, err))
		}
		return // a directory that vanished: its entries are reported deleted
	}
	for _, d := range list {
		name := d.name
		if dir == "" && name == ".git" {
			continue
		}
		if d.dir {
			c.walkSubdir(wd, name, patterns, ignored)
			continue
		}
		if err := c.walkFile(wd, name, patterns, ignored); err != nil {
			c.fail(err)
			return
		}
	}
}

// walkDir is the directory walk is at: where it is, and how its entries are lstatted.
type walkDir struct {
	dir    string // relative to top, slash-separated; "" for the top
	prefix string // dir + "/", or "" for the top
	abs    string
	open   func(string) (dirHandle, error)
	h      dirHandle           // the open directory, opened on first need; closed by close
	stats  map[string]fileStat // lstats the prefetcher made; nil when it did not read dir
}

// lstat lstats name in the directory, from the prefetched stats when there are some.
func (d *walkDir) lstat(name string) (fileStat, error) {
	if st, ok := d.stats[name]; ok {
		return st, nil
	}
	if d.h == nil {
		var err error
		if d.h, err = d.open(d.abs); err != nil {
			return fileStat{}, err
		}
	}
	return d.h.lstat(name)
}

func (d *walkDir) close() {
	if d.h != nil {
		d.h.close()
	}
}

// list returns the entries of wd, as the prefetcher read them or read now.
func (c *wtCheck) list(wd *walkDir) ([]dirent, error) {
	if pd := c.pf.get(wd.dir); pd != nil {
		wd.stats = pd.stats
		return pd.list, nil
	}
	var err error
	if wd.h, err = wd.open(wd.abs); err != nil {
		return nil, err
	}
	return wd.h.list()
}

// walkSubdir handles the directory name of wd: exempt, a submodule, ignored, a nested
// repository, or walked in its own goroutine.
func (c *wtCheck) walkSubdir(wd *walkDir, name string, patterns []gitignore.Pattern, ignored bool) {
	rel := wd.prefix + name
	if c.isExempt(rel, true) {
		return
	}
	e, tracked := c.entries[rel]
	if tracked && e.Mode == filemode.Submodule {
		e.seen = true
		c.mu.Lock()
		c.submodules = append(c.submodules, e)
		c.mu.Unlock()
		return
	}
	if tracked {
		c.add(rel) // a file in the index, a directory on disk
	}
	ign := ignored || ignoredBy(patterns, splitPath(rel), true)
	if !c.dirs[rel] && ign {
		return // an ignored directory without tracked files
	}
	if !c.dirs[rel] {
		if _, err := os.Lstat(filepath.Join(wd.abs, name, ".git")); err == nil {
			c.add(rel + "/") // a nested repository that is not a submodule of this one
			return
		}
	}
	c.wg.Add(1)
	go c.walk(rel, patterns, ign)
}

// walkFile compares the non-directory name of wd with its index entry: untracked (and not
// ignored), the same, or changed.
func (c *wtCheck) walkFile(wd *walkDir, name string, patterns []gitignore.Pattern, ignored bool) error {
	rel := wd.prefix + name
	if c.isExempt(rel, false) {
		return nil
	}
	e, ok := c.entries[rel]
	if !ok {
		if !ignored && !ignoredBy(patterns, splitPath(rel), false) {
			c.add(rel) // untracked, not ignored
		}
		return nil
	}
	e.seen = true
	same, hashed, err := c.compare(wd.lstat, wd.abs, name, e.Entry)
	if err != nil {
		return err
	}
	if hashed {
		c.mu.Lock()
		c.hashed++
		c.mu.Unlock()
	}
	if !same {
		c.add(rel)
	}
	return nil
}

// compare tells whether file name of directory abs holds index entry e, and whether it had to be
// hashed; statOf lstats a name of the directory.
func (c *wtCheck) compare(statOf func(string) (fileStat, error), abs, name string, e *index.Entry) (same, hashed bool, err error) {
	st, err := statOf(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("lstat %s: %w", filepath.Join(abs, name), err)
	}
	var mode filemode.FileMode
	switch {
	case st.mode&fs.ModeSymlink != 0:
		mode = filemode.Symlink
	case st.mode.IsRegular() && st.mode&0o100 != 0:
		mode = filemode.Executable
	case st.mode.IsRegular():
		mode = filemode.Regular
	default:
		return false, false, nil // a directory, device, fifo or socket where a file was
	}
	if mode != e.Mode {
		return false, false, nil // the index equals the head, so the head has another mode
	}
	if !c.hashAll && st.matches(e) && st.mtime.Before(c.indexTime) {
		return true, false, nil
	}
	h, err := blobHash(filepath.Join(abs, name), mode)
	if err != nil {
		return false, true, err
	}
	return h == e.Hash, true, nil
}

// fileStat is what lstat says about a file, as far as the check compares it.
type fileStat struct {
	mode         fs.FileMode // type bits and permissions
	size         int64
	mtime, ctime time.Time
	ino          uint64
	full         bool // ctime and ino are known
}

// fileStatOf converts an os.FileInfo from lstat.
func fileStatOf(fi fs.FileInfo) fileStat {
	st := fileStat{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
	st.ino, st.ctime, st.full = statSys(fi)
	return st
}

// matches compares size, mtime, ctime and inode with the entry's cached stat data (the index
// keeps 32 bits of size and inode, as git does).
func (st fileStat) matches(e *index.Entry) bool {
	if uint32(st.size) != e.Size || !st.mtime.Equal(e.ModifiedAt) {
		return false
	}
	if !st.full {
		return false // no ctime and inode on this platform: hash
	}
	return uint32(st.ino) == e.Inode && st.ctime.Equal(e.CreatedAt)
}

// blobHash hashes the file's raw bytes (a symlink's target) as a git blob: no filter, no line
// ending conversion.
func blobHash(path string, mode filemode.FileMode) (plumbing.Hash, error) {
	if mode == filemode.Symlink {
		target, err := os.Readlink(path)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read link %s: %w", path, err)
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), nil
	}
	f, fi, err := openRegular(path) // without blocking: the file may be replaced by a named pipe since lstat
	var notRegular *NotRegularError
	if errors.As(err, &notRegular) {
		return plumbing.ZeroHash, nil // replaced while being read: differs
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("hash %s: %w", path, err)
	}
	if n != fi.Size() {
		return plumbing.ZeroHash, nil // changed while being read: differs
	}
	return h.Sum(), nil
}

// checkSubmodule compares a checked-out submodule with the commit its gitlink names.
func (c *wtCheck) checkSubmodule(e *wtEntry) error {
	dir := filepath.Join(c.top, filepath.FromSlash(e.Name))
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		// Not checked out (git leaves an empty directory): nothing there can be read by a command.
		list, _ := readDirectory(dir)
		if len(list) > 0 {
			c.add(e.Name + "/")
		}
		return nil
	}
	sub, err := Open(dir)
	if err != nil {
		c.add(e.Name + "/")
		return nil
	}
	defer sub.Close()
	if sub.top != dir {
		if a, b := evalPath(sub.top), evalPath(dir); a != b {
			c.add(e.Name + "/")
			return nil
		}
	}
	if _, err := sub.commitHash("head", e.Hash.String()); err != nil {
		c.add(e.Name + "/") // the submodule does not have the commit the gitlink names
		return nil
	}
	rep, err := sub.CheckWorktree(e.Hash.String(), nil)
	if err != nil {
		return fmt.Errorf("submodule %s: %w", e.Name, err)
	}
	if !rep.Clean(e.Hash.String()) {
		c.add(e.Name + "/")
	}
	return nil
}

func evalPath(p string) string {
	if q, err := filepath.EvalSymlinks(p); err == nil {
		return q
	}
	return p
}

// filtersConfigured reports whether a git configuration that git would read for this repository
// mentions a filter or includes another file. A clean filter lets `git add` or the index refresh
// of `git status` store a changed file's stat data beside the unchanged blob id, so the index's
// stat data no longer says anything about the content: every entry is then hashed.
func filtersConfigured(gitDir, commonDir string) bool {
	files := []string{
		filepath.Join(commonDir, "config"), filepath.Join(gitDir, "config.worktree"),
		"/etc/gitconfig",
	}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, env := range []string{"XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if v := os.Getenv(env); v != "" {
			if env == "XDG_CONFIG_HOME" {
				v = filepath.Join(v, "git", "config")
			}
			files = append(files, v)
		}
	}
	for _, f := range files {
		if f == os.DevNull {
			// GIT_CONFIG_GLOBAL=/dev/null, the usual way to run git without a user's
			// configuration, names an empty configuration (git reads it so): it is not a special
			// file of the repository, and refusing it would hash every entry of every run.
			continue
		}
		data, err := readRegular(f, 4<<20)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return true // a configuration it cannot read whole may define a filter: hash every entry
		}
		low := bytes.ToLower(data)
		if bytes.Contains(low, []byte("filter")) || bytes.Contains(low, []byte("include")) {
			return true
		}
	}
	return false
}

// indexTreeHash computes the id of the tree that the index's entries make, as git write-tree does;
// ok is false when the entries cannot make a tree (an unmerged or intent-to-add entry, a path git
// could not check out, a directory and a file of the same name).
func indexTreeHash(entries []*index.Entry) (h plumbing.Hash, ok bool) {
	for _, e := range entries {
		if e.Stage != 0 || e.IntentToAdd || !validIndexPath(e.Name) {
			return plumbing.ZeroHash, false
		}
	}
	sorted := slices.IsSortedFunc(entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	if !sorted {
		entries = slices.Clone(entries)
		slices.SortFunc(entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	}
	h, n, ok := (&treeBuilder{}).build(entries, 0, 0)
	return h, ok && n == len(entries)
}

// treeBuilder hashes the trees the index's entries make, with one buffer of tree bytes per depth
// reused across the directories of that depth.
type treeBuilder struct {
	bufs [][]byte
}

// build hashes the tree of the entries that share the first prefix bytes of their names (a
// directory and its slash), starting at entries[0], at directory depth depth, and returns how many
// entries it used.
//
// The entries are sorted by name, so a directory's entries are contiguous, and the order in which
// its items (files, and subdirectories by their first entry) come is git's tree order, a tree's
// name ordered as if it ended in "/": a file sorts before a directory's first entry exactly when
// its name sorts before the directory's name and slash. A file and a directory of the same name
// are refused when they are neighbours in that order, as the sort by that key found them.
func (b *treeBuilder) build(entries []*index.Entry, prefix, depth int) (plumbing.Hash, int, bool) {
	if depth >= len(b.bufs) {
		b.bufs = append(b.bufs, nil)
	}
	buf := b.bufs[depth][:0]
	prev := ""
	i := 0
	for i < len(entries) {
		rest := entries[i].Name[prefix:]
		name, mode, hash := rest, entries[i].Mode, entries[i].Hash
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			i++
		} else {
			dir := entries[i].Name[:prefix+slash+1]
			j := i
			for j < len(entries) && strings.HasPrefix(entries[j].Name, dir) {
				j++
			}
			sub, n, ok := b.build(entries[i:j], len(dir), depth+1)
			if !ok || n != j-i {
				return plumbing.ZeroHash, 0, false
			}
			name, mode, hash = rest[:slash], filemode.Dir, sub
			i = j
		}
		if len(buf) > 0 && prev == name {
			return plumbing.ZeroHash, 0, false // a file and a directory of the same name
		}
		prev = name
		buf = appendTreeMode(buf, mode)
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, 0)
		buf = append(buf, hash[:]...)
		if slash >= 0 && i < len(entries) && !strings.HasPrefix(entries[i].Name, entries[0].Name[:prefix]) {
			break
		}
	}
	b.bufs[depth] = buf
	return plumbing.ComputeHash(plumbing.TreeObject, buf), i, true
}

// appendTreeMode appends mode in octal, as a tree entry spells it: the usual modes without
// formatting a number.
func appendTreeMode(buf []byte, mode filemode.FileMode) []byte {
	switch mode {
	case filemode.Regular:
		return append(buf, "100644"...)
	case filemode.Executable:
		return append(buf, "100755"...)
	case filemode.Symlink:
		return append(buf, "120000"...)
	case filemode.Dir:
		return append(buf, "40000"...)
	case filemode.Submodule:
		return append(buf, "160000"...)
	}
	return strconv.AppendUint(buf, uint64(mode), 8)
}

// prefetcher lists directories and lstats their files while the index is being decoded, until
// stop is set. It never follows a symlink, skips .git and the exempt directories, and keeps
// nothing it did not finish.
type prefetcher struct {
	top    string
	exempt func(string, bool) bool
	open   func(string) (dirHandle, error)
	stop   atomic.Bool
	dirs   sync.Map // dir (relative, "" for the top) → *preDir
	sem    chan struct{}
	wg     sync.WaitGroup
}

// preDir is a directory the prefetcher listed, with the lstat of its files by name.
type preDir struct {
	list  []dirent
	stats map[string]fileStat
}

func startPrefetch(top string, exempt func(string, bool) bool, open func(string) (dirHandle, error)) *prefetcher {
	p := &prefetcher{top: top, exempt: exempt, open: open, sem: make(chan struct{}, max(2, 2*runtime.GOMAXPROCS(0)))}
	p.wg.Add(1)
	go p.visit("")
	return p
}

// get returns what was prefetched for dir, or nil.
func (p *prefetcher) get(dir string) *preDir {
	if p == nil {
		return nil
	}
	if v, ok := p.dirs.Load(dir); ok {
		return v.(*preDir)
	}
	return nil
}

// finish stops the prefetch and waits for it.
func (p *prefetcher) finish() {
	p.stop.Store(true)
	p.wg.Wait()
}

func (p *prefetcher) visit(dir string) {
	defer p.wg.Done()
	if p.stop.Load() {
		return
	}
	p.sem <- struct{}{}
	defer func() { <-p.sem }()
	if p.stop.Load() {
		return
	}
	abs := filepath.Join(p.top, filepath.FromSlash(dir))
	h, err := p.open(abs)
	if err != nil {
		return
	}
	defer h.close()
	list, err := h.list()
	if err != nil {
		return
	}
	// Not sized from the listing: the prefetch is usually stopped before it lstats most names.
	pd := &preDir{list: list, stats: make(map[string]fileStat)}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	for _, d := range list {
		name := d.name
		if d.dir {
			if name == ".git" || p.exempt(prefix+name, true) || p.stop.Load() {
				continue
			}
			p.wg.Add(1)
			go p.visit(prefix + name)
			continue
		}
		if p.stop.Load() {
			break // the rest is lstat-ed by the walk
		}
		if st, err := h.lstat(name); err == nil {
			pd.stats[name] = st
		}
	}
	p.dirs.Store(dir, pd)
}
