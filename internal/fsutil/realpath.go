package fsutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// RealPath returns the absolute path the directory or file p names, spelled as the file system
// stores it: symbolic links resolved (filepath.EvalSymlinks), and, in a directory that finds a
// name in any letter case (APFS and NTFS by default), each name in the case its directory lists
// it, which is the case git records. The same file reached by any spelling the system accepts
// then has one path, and a path relative to a repository's top is the repository's path.
// Unicode normalization (NFC against NFD) is not folded.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return storedSpelling(osNames{}, real), nil
}

// names is what storedSpelling asks of the file system, injected in tests: whether two paths
// name the same existing file, and the names a directory lists.
type names interface {
	same(a, b string) bool
	list(dir string) ([]string, error)
}

type osNames struct{}

func (osNames) same(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	return err == nil && os.SameFile(fa, fb)
}

func (osNames) list(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// storedSpelling is the absolute path p, free of symbolic links, with each name spelled as its
// directory lists it (storedName).
func storedSpelling(fsys names, p string) string {
	vol := filepath.VolumeName(p)
	out := vol + string(filepath.Separator)
	for _, seg := range strings.Split(p[len(vol):], string(filepath.Separator)) {
		if seg != "" {
			out = filepath.Join(out, storedName(fsys, out, seg))
		}
	}
	return out
}

// storedName is the name dir lists for the file name finds in it: name itself, unless dir finds
// it under another letter case too (the other case of every letter names the same file), and
// then the one entry of dir that names that file in some case. Anything it cannot tell leaves
// name as it is.
func storedName(fsys names, dir, name string) string {
	other := swapCase(name)
	if other == name {
		return name // no letters: one spelling
	}
	typed, swapped := filepath.Join(dir, name), filepath.Join(dir, other)
	if !fsys.same(typed, swapped) {
		return name // the directory tells cases apart: the name was found as it is stored
	}
	entries, err := fsys.list(dir)
	if err != nil || slices.Contains(entries, name) {
		return name
	}
	for _, e := range entries {
		if strings.EqualFold(e, name) && fsys.same(filepath.Join(dir, e), typed) {
			return e
		}
	}
	return name
}

// swapCase is s with every upper-case letter in lower case and every other letter in upper case.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}
