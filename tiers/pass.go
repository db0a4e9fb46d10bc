package tiers

import (
	"path/filepath"
	"strings"
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
// trailing slash ("" when they are the same directory), both with their symbolic links resolved;
// ok is false when dir is not inside top.
func projectPrefixOf(top, dir string) (prefix string, ok bool) {
	rel, err := filepath.Rel(evalDir(top), evalDir(dir))
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
