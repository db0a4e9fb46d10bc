package tiers

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/geas-dev/geas/internal/git"
)

// surfaceEntry is one scope.surfaces entry as the matcher reads it.
type surfaceEntry struct {
	pattern string // cleaned: no leading "./", no trailing "/", no "//" or "/./"
	all     bool   // "." or "**": the whole project
	dir     bool   // the entry ended in "/": it names directories, and covers what is below them
	glob    bool   // the pattern has doublestar syntax; else it is a path, compared byte for byte
}

// parseSurface reads a scope.surfaces entry; ok is false for an entry that covers nothing ("",
// "./"). Paths compare case-sensitively, as git's do.
func parseSurface(s string) (surfaceEntry, bool) {
	for strings.HasPrefix(s, "./") {
		s = s[2:]
	}
	if s == "" {
		return surfaceEntry{}, false
	}
	e := surfaceEntry{dir: strings.HasSuffix(s, "/")}
	e.pattern = path.Clean(s)
	e.all = e.pattern == "." || e.pattern == "**"
	e.glob = strings.ContainsAny(e.pattern, `*?[]{}\`)
	return e, true
}

// names reports whether the entry's pattern names p itself (not what is below p).
func (e surfaceEntry) names(p string) bool {
	if !e.glob {
		return p == e.pattern
	}
	ok, _ := doublestar.Match(e.pattern, p)
	return ok
}

// surfaces decides which changed files scope.surfaces covers (SPEC §5.3 Part B). An entry covers
// the paths it names (a path, or what a doublestar glob matches), and what is below a path it
// names only when the entry ends in "/", or the path is a directory of the base tree, or — for an
// entry that spells the path out, not a glob — the base has nothing there and the head has a
// directory (a new package the contract names). So the work cannot widen a surface by making a
// directory of a name it chose: "README.md" does not cover README.md/install.sh when README.md
// was a file, and "docs/*.md" never covers docs/guide.md/run.sh unless docs/guide.md was already a
// directory at the base.
type surfaces struct {
	entries []surfaceEntry
	isDir   func(p string) (dirKind, error)
	dirs    map[string]dirKind // isDir's answers, by path
}

// dirKind says whether a path is a directory for the surfaces.
type dirKind int

const (
	notDir     dirKind = iota
	baseDir            // a directory of the base tree (or, without a base, of the working tree)
	newHeadDir         // nothing at the base, a directory at the head: the work made it
)

func newSurfaces(list []string, isDir func(p string) (dirKind, error)) *surfaces {
	s := &surfaces{isDir: isDir, dirs: map[string]dirKind{}}
	for _, raw := range list {
		if e, ok := parseSurface(raw); ok {
			s.entries = append(s.entries, e)
		}
	}
	return s
}

// covers reports whether a changed file (slash-separated, as git lists it) is covered.
func (s *surfaces) covers(file string) (bool, error) {
	for _, e := range s.entries {
		if e.all || e.names(file) {
			return true, nil
		}
	}
	// What is below a path an entry names: each proper ancestor of the file, nearest last.
	for i := strings.IndexByte(file, '/'); i >= 0; i = nextSlash(file, i) {
		a := file[:i]
		for _, e := range s.entries {
			if !e.names(a) {
				continue
			}
			if e.dir {
				return true, nil
			}
			k, err := s.dir(a)
			if err != nil {
				return false, err
			}
			if k == baseDir || (k == newHeadDir && !e.glob) {
				return true, nil
			}
		}
	}
	return false, nil
}

// nextSlash returns the index of the next "/" in file after index i, or -1.
func nextSlash(file string, i int) int {
	j := strings.IndexByte(file[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (s *surfaces) dir(p string) (dirKind, error) {
	if k, ok := s.dirs[p]; ok {
		return k, nil
	}
	k, err := s.isDir(p)
	if err != nil {
		return notDir, err
	}
	s.dirs[p] = k
	return k, nil
}

// treeDir is the isDir of a run with a base: a directory of the base tree is a baseDir; a path
// the base does not have and the head holds as a directory is a newHeadDir; a path the base holds
// as a file (or a link, or a submodule) is notDir, whatever the work made of it. p is relative to
// the project root, which is prefix (with a trailing "/", "" at the top) in the repository.
func treeDir(repo *git.Repo, base, head, prefix string) func(p string) (dirKind, error) {
	return func(p string) (dirKind, error) {
		p = prefix + p
		k, err := repo.KindAt(base, p)
		switch {
		case err != nil:
			return notDir, err
		case k == git.PathDir:
			return baseDir, nil
		case k != git.PathAbsent:
			return notDir, nil
		}
		if k, err = repo.KindAt(head, p); err != nil {
			return notDir, err
		}
		if k == git.PathDir {
			return newHeadDir, nil
		}
		return notDir, nil
	}
}
