package tiers

import (
	"path"
	"strings"

	"github.com/geas-dev/geas/internal/git"
)

// projectPaths turns the repository paths a diff lists into paths relative to the project root,
// which may be a subdirectory of the repository (a monorepo service, SPEC §5.3 Part B): surfaces,
// the bookkeeping exemption and the changed files shown compare with the contract in the project's
// terms. A path outside the project root is outside every surface.
type projectPaths struct {
	prefix string // the project root relative to the repository's top, with a trailing "/"; "" at the top
	within bool   // false when the project root is not inside the repository's top: nothing is inside
}

// rootPlace is the project root's place (paths) in the repository whose top directory is top.
type rootPlace struct {
	top   string
	paths projectPaths
}

// projectPathsIn is the projectPaths of in's project root in repo: the place the snapshot found
// when it read the policy at the base in the same repository, so that the policy and the checks
// judge the same place and the symbolic links are resolved once a run; else found here.
func projectPathsIn(in *Snapshot, repo *git.Repo) projectPaths {
	if repo != nil && in.rootIn != nil && in.rootIn.top == repo.Top() {
		return in.rootIn.paths
	}
	return projectPathsOf(repo, in.ProjectDir)
}

// projectPathsOf is the projectPaths of the project root dir in repo (nil: the top, for a run
// without a repository, whose paths are the implementer's, already relative to the project).
func projectPathsOf(repo *git.Repo, dir string) projectPaths {
	if repo == nil {
		return projectPaths{within: true}
	}
	prefix, ok := projectPrefixOf(repo.Top(), dir)
	return projectPaths{prefix: prefix, within: ok}
}

// rel returns a repository path (slash-separated, as git lists it) relative to the project root,
// and whether it is inside the project root. The comparison is byte for byte on whole path
// segments: the project "svc" does not hold "svc2/a.txt", nor "SVC/a.txt". A path outside the
// project root is returned as the path that leads to it from the project root ("../other/b.txt"),
// so it is never mistaken for a file of the project; a path that names the project root itself
// ("svc", a file or submodule where the project's directory is) is outside it.
func (pp projectPaths) rel(p string) (string, bool) {
	if pp.within && strings.HasPrefix(p, pp.prefix) && len(p) > len(pp.prefix) {
		return p[len(pp.prefix):], true
	}
	if !pp.within {
		return p, false // no path leads there from inside the repository: its repository path
	}
	dir := strings.Split(strings.TrimSuffix(pp.prefix, "/"), "/")
	segs := strings.Split(p, "/")
	common := 0
	for common < len(dir) && common < len(segs)-1 && dir[common] == segs[common] {
		common++
	}
	return strings.Repeat("../", len(dir)-common) + strings.Join(segs[common:], "/"), false
}

// path is the project root relative to the repository's top, without the trailing "/": "" at the
// top, or when the project root is not inside it.
func (pp projectPaths) path() string {
	if !pp.within {
		return ""
	}
	return strings.TrimSuffix(pp.prefix, "/")
}

// placement is where each path of the change base..head lies, placed once by tier 0 where it has
// the diff (placeChange): the checks that show, exempt or judge a changed path (the empty change,
// attribution, test integrity, the stub scan, scope, the submodules' warning) look the path up
// here instead of placing it again, so that they all place it the same way. path is the project
// root relative to the repository's top, what the result reports (projectPaths.path).
type placement struct {
	path   string
	within bool // projectPaths.within: false when the project root is not inside the repository's top
	// paths maps each path the diff lists (relative to the repository's top, byte for byte as
	// the trees hold it) to its place.
	paths map[string]placed
}

// placed is where one repository path lies: rel and in are projectPaths.rel's answer (rel is
// the path from the project root, in whether it is inside it); bookkeeping is bookkeeping(rel),
// which is the project's own bookkeeping only when in is true.
type placed struct {
	rel         string
	in          bool
	bookkeeping bool
}

// place is where the repository path p lies in pp's terms.
func (pp projectPaths) place(p string) placed {
	rel, in := pp.rel(p)
	return placed{rel: rel, in: in, bookkeeping: bookkeeping(rel)}
}

// placeChange places each path of a change (the paths base..head lists; nil when the run has no
// change to diff) once, for the whole run.
func placeChange(pp projectPaths, changes []git.FileChange) placement {
	pl := placement{path: pp.path(), within: pp.within, paths: make(map[string]placed, len(changes))}
	for _, c := range changes {
		pl.paths[c.Path] = pp.place(c.Path)
	}
	return pl
}

// outsideProject reports whether a project-relative path (one the implementer declared) leads out
// of the project root: absolute, "..", or below "../" once cleaned.
func outsideProject(p string) bool {
	p = path.Clean(p)
	return path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../")
}

// bookkeepingPaths are the orchestration's own files (SPEC §5.3 B), relative to the project root
// (bookkeeping): the working-tree check does not compare them, and no scope question counts
// them. An entry ending in "/" is a directory.
var bookkeepingPaths = []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}

// bookkeeping reports whether a file (slash-separated, relative to the project root) is the
// orchestration's own bookkeeping, one of bookkeepingPaths or below one of its directories (SPEC
// §5.3 Part B). Everything else under .geas — code, .geas/gate-policy.json — is a scope question
// like any other file. Paths compare exactly, byte for byte: a path that differs in case or form
// is not the bookkeeping, so it stays a scope question (fail closed).
func bookkeeping(f string) bool {
	for _, b := range bookkeepingPaths {
		if strings.HasSuffix(b, "/") && strings.HasPrefix(f, b) && len(f) > len(b) || f == b {
			return true
		}
	}
	return false
}
