package gate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/geas-dev/geas/record"
)

// ResolveExisting resolves the symbolic links of the longest existing prefix of path and joins
// the rest: where a write to path would land. A dangling link on the way is followed too (a
// write through it creates its target), up to maxLinkHops links.
func ResolveExisting(path string) string {
	return resolveExisting(path, 0)
}

// maxLinkHops bounds the dangling links ResolveExisting follows (Linux's own limit is 40).
const maxLinkHops = 40

func resolveExisting(path string, hops int) string {
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return path
		}
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 && hops < maxLinkHops {
			if target, err := os.Readlink(dir); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(dir), target)
				}
				return resolveExisting(filepath.Join(target, rest), hops+1)
			}
		}
		if filepath.Dir(dir) == dir {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// OwnedFile names what a path inside .geas is when only geas writes it, or returns "": in a task
// directory the gate history, the gate logs, the pinned rules, the task lock, and the record and
// history files geas task history reset kept aside. Each name is compared with its letter case
// folded and as Windows resolves it (windowsName), so that no spelling reaches the same file.
func OwnedFile(geasDir, path string) string {
	parts, ok := taskPathParts(geasDir, path)
	if !ok {
		return ""
	}
	task, name := parts[3], parts[4]
	switch {
	case name == "gate-logs":
		return "a gate log of task " + task
	case len(parts) > 5:
		return ""
	case name == record.HistoryFile:
		return "the gate history of task " + task
	case name == PinnedFile:
		return "the pinned rules of task " + task
	case name == "record.lock":
		return "the lock of task " + task
	case strings.HasPrefix(name, record.HistoryFile+asideSuffix) || strings.HasPrefix(name, record.RecordFile+asideSuffix):
		return "a file geas task history reset kept aside for task " + task
	}
	return ""
}

// taskPathParts are the elements of path below geasDir when it is inside a task directory
// (missions/M/tasks/T/NAME...; at least five): symbolic links resolved (ResolveExisting), letter
// case folded, and each element as Windows opens it (windowsName), so that no spelling of a path
// reaches a file under another name.
func taskPathParts(geasDir, path string) ([]string, bool) {
	rel, err := filepath.Rel(strings.ToLower(geasDir), strings.ToLower(ResolveExisting(path)))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		parts[i] = windowsName(parts[i])
	}
	if len(parts) < 5 || parts[0] != "missions" || parts[2] != "tasks" {
		return nil, false
	}
	return parts, true
}

// windowsName is a path element as Windows opens it: up to an NTFS stream name (name:stream or
// name::$DATA write the file itself), without trailing dots and spaces. Elsewhere these are other
// names, which the guard then denies too: harmless, since no geas file is named so.
func windowsName(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if t := strings.TrimRight(s, ". "); t != "" {
		return t
	}
	return s
}
