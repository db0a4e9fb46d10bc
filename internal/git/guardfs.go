package git

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
)

// errReadOnly refuses a write through guardFS: a Repo only reads.
var errReadOnly = errors.New("the gate opens the repository read-only")

// guardFS is the filesystem go-git's storage reads references, config, shallow and (through
// alternates) objects from. It is the billy filesystem go-git would use (a chroot of the OS
// filesystem) for names, stat and links, but opens files itself, through openRegular and
// openDirectory: go-git's own opens block on a named pipe planted at .git/HEAD, config,
// packed-refs, a loose ref or a refs directory (SPEC §2 invariant 9). It refuses writes.
//
// go-git treats a loose ref it cannot open as absent and looks in packed-refs instead, and turns an
// unreadable HEAD into "no repository": so the refusals are also noted in a refusals, which the
// Repo answers with, naming the file, whatever go-git made of the error.
type guardFS struct {
	billy.Filesystem
	seen *refusals
}

// guard wraps fs, a filesystem rooted at an OS directory; refusals are noted in seen.
func guard(fs billy.Filesystem, seen *refusals) billy.Filesystem { return guardFS{fs, seen} }

// refusals keeps the first file refused for not being a regular file (or a directory).
type refusals struct {
	mu    sync.Mutex
	first error
}

// note keeps err when it is the first refusal of a special file.
func (r *refusals) note(err error) {
	var nr *NotRegularError
	if !errors.As(err, &nr) {
		return
	}
	r.mu.Lock()
	if r.first == nil {
		r.first = err
	}
	r.mu.Unlock()
}

// err is the first refusal, or nil.
func (r *refusals) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// path maps a name of the filesystem to the OS path under its root; a name that climbs out of the
// root is refused, as the chroot does.
func (g guardFS) path(name string) (string, error) {
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(name), "/")))
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: %w", name, billy.ErrCrossedBoundary)
	}
	return filepath.Join(g.Root(), rel), nil
}

// Open opens a regular file for reading without blocking.
func (g guardFS) Open(name string) (billy.File, error) { return g.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile opens a regular file for reading without blocking; any other flag is refused.
func (g guardFS) OpenFile(name string, flag int, _ os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_TRUNC) != 0 {
		return nil, fmt.Errorf("open %s for writing: %w", name, errReadOnly)
	}
	p, err := g.path(name)
	if err != nil {
		return nil, err
	}
	f, fi, err := openRegular(p)
	if err == nil {
		if limit := guardLimit(name); fi.Size() > limit {
			_ = f.Close()
			err = &NotRegularError{Path: p, Mode: fi.Mode(), Size: fi.Size(), Limit: limit}
		}
	}
	if err != nil {
		g.seen.note(err)
		return nil, err
	}
	return &guardFile{File: f, name: name}, nil
}

// guardLimit bounds the size of a file go-git reads whole or line by line: HEAD and a loose ref are
// a line (4 MiB), config a few KiB (64 MiB, as a configuration padded past the 4 MiB that
// filtersConfigured reads must still open), packed-refs and shallow grow with the repository
// (1 GiB), objects (of alternates) are not bounded here. A sparse file of terabytes is never read.
func guardLimit(name string) int64 {
	switch base := filepath.Base(filepath.FromSlash(name)); {
	case strings.Contains(filepath.ToSlash(name), "objects/"):
		return math.MaxInt64
	case base == "packed-refs" || base == "shallow":
		return 1 << 30
	case strings.HasPrefix(base, "config"):
		return 64 << 20
	default:
		return 4 << 20
	}
}

// Create is refused.
func (g guardFS) Create(name string) (billy.File, error) {
	return nil, fmt.Errorf("create %s: %w", name, errReadOnly)
}

// TempFile is refused.
func (g guardFS) TempFile(dir, _ string) (billy.File, error) {
	return nil, fmt.Errorf("create a temporary file in %s: %w", dir, errReadOnly)
}

// ReadDir lists a directory without blocking on a named pipe in its place.
func (g guardFS) ReadDir(name string) ([]os.FileInfo, error) {
	p, err := g.path(name)
	if err != nil {
		return nil, err
	}
	list, err := readDirectory(p)
	if err != nil {
		g.seen.note(err)
		return nil, err
	}
	infos := make([]os.FileInfo, 0, len(list))
	for _, e := range list {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		infos = append(infos, fi)
	}
	return infos, nil
}

// Chroot keeps the guard on the sub-filesystem.
func (g guardFS) Chroot(name string) (billy.Filesystem, error) {
	sub, err := g.Filesystem.Chroot(name)
	if err != nil {
		return nil, err
	}
	return guardFS{sub, g.seen}, nil
}

// Capabilities are those of the wrapped filesystem less writing and locking.
func (g guardFS) Capabilities() billy.Capability {
	return billy.Capabilities(g.Filesystem) &^ (billy.WriteCapability | billy.ReadAndWriteCapability |
		billy.TruncateCapability | billy.LockCapability)
}

// guardFile is a regular file opened for reading.
type guardFile struct {
	*os.File
	name string
}

// Name is the name as given to Open.
func (f *guardFile) Name() string { return f.name }

// Lock does nothing: go-git locks packed-refs while reading it, with a blocking flock(2) that an
// agent holding the lock would stall for ever; git itself takes no such lock (it replaces
// packed-refs by rename), and a Repo only reads.
func (f *guardFile) Lock() error { return nil }

// Unlock does nothing (Lock).
func (f *guardFile) Unlock() error { return nil }

// Truncate is refused.
func (f *guardFile) Truncate(int64) error {
	return fmt.Errorf("truncate %s: %w", f.name, errReadOnly)
}
