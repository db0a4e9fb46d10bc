package tiers

import (
	"path/filepath"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
)

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

// realDir is fsutil.RealPath(p), or p when it cannot be found.
func realDir(p string) string {
	if q, err := fsutil.RealPath(p); err == nil {
		return q
	}
	return p
}
