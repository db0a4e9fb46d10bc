package tiers

import (
	"path/filepath"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
)

// isBookkeeping reports whether a project-relative path is one of bookkeepingPaths.
func isBookkeeping(p string) bool {
	for _, b := range bookkeepingPaths {
		if strings.HasSuffix(b, "/") && strings.HasPrefix(p, b) || p == b {
			return true
		}
	}
	return false
}

// projectPrefix is the project root relative to the repository's top directory, with a trailing
// slash ("" when they are the same directory).
// A project root that is not inside the top (a symbolic link to another repository's directory)
// is "" here; projectPaths says that nothing is inside it.
func (pass *Pass) projectPrefix() string {
	return pass.projectPaths().prefix
}

// projectPrefixOf is the project root dir relative to the repository's top directory top, with a
// trailing slash ("" when they are the same directory), both as their real paths (symbolic links
// resolved, names in the case the file system stores, which is the case git records); ok is
// false when dir is not inside top.
func projectPrefixOf(top, dir string) (prefix string, ok bool) {
	rel, err := filepath.Rel(realDir(top), realDir(dir))
	switch {
	case err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel):
		return "", false
	case rel == ".":
		return "", true
	}
	return filepath.ToSlash(rel) + "/", true
}

// afterCode compares the working tree (or the isolated checkout) with the head after code ran;
// after names what ran. A check means the code changed the tree: the caller records after as
// what changed it.
func afterCode(pass *Pass, tier int, name, text, after string) *Check {
	if pass.work != nil {
		return checkoutCheck(pass, tier, name, text, after)
	}
	return worktreeCheck(pass, tier, name, text, pass.headName(), after)
}

// realDir is fsutil.RealPath(p), or p when it cannot be found.
func realDir(p string) string {
	if q, err := fsutil.RealPath(p); err == nil {
		return q
	}
	return p
}
