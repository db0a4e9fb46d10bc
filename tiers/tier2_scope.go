package tiers

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// changedFiles returns the files the task changed and how they were found: the git diff
// base..head when the baseline resolved, else the implementer's files_changed or geas v1.4.0 artifact_refs (SPEC §5.3 Part B).
// Only the project's own bookkeeping (bookkeeping) is left out of scope questions. The files are
// relative to the project root; outside names those that are not inside it (shown as the path
// from the project root, "../other/b.txt"), which no surface covers.
func changedFiles(pass *Pass) ([]string, map[string]bool, string, error) {
	var files []string
	var how string
	if pass.haveBase {
		var err error
		files, err = pass.repo.ChangedFiles(pass.base, pass.head)
		if err != nil {
			return nil, nil, "", err
		}
		how = fmt.Sprintf("git diff --name-only %s..%s", short(pass.base), short(pass.head))
	} else {
		for _, e := range pass.in.Evidence {
			if pass.builder[e] {
				for _, f := range e.Declared() {
					files = append(files, path.Clean(f)) // "./README.md" is README.md, as git would list it
				}
			}
		}
		slices.Sort(files)
		files = slices.Compact(files)
		how = "the implementer's files_changed (no base_snapshot to diff against)"
		if len(files) == 0 {
			return nil, nil, "", errNoChangeSource
		}
	}
	out := files[:0]
	outside := map[string]bool{}
	attributed := pass.attribution()
	for _, f := range files {
		var in, book bool
		if pass.haveBase {
			if attributed.attributed(f) {
				continue // another task's verified work (SPEC §5.3 B), not this one's
			}
			at := pass.placed.paths[f] // placed by tier 0
			f, in, book = at.rel, at.in, at.bookkeeping
		} else {
			in, book = !outsideProject(f), bookkeeping(f)
		}
		switch {
		case !in:
			outside[f] = true
		case book:
			continue
		}
		out = append(out, f)
	}
	return out, outside, how, nil
}

// errNoChangeSource: neither a base nor the implementer's files_changed says what changed.
var errNoChangeSource = errors.New("no change source")

// partB checks scope (SPEC §5.3 Part B).
func partB(pass *Pass) (out []Check) {
	c := pass.in.Contract
	files, beyond, how, err := changedFiles(pass)
	text := fmt.Sprintf("changed files are inside scope.surfaces (%s)", strings.Join(c.Scope.Surfaces, ", "))
	if !pass.haveBase {
		text += "; changed files taken from the implementer's files_changed (no base_snapshot)"
	}
	if errors.Is(err, errNoChangeSource) {
		out = append(out, failCheck(2, "scope", text, "no base_snapshot to diff against and no implementer evidence lists files_changed: nothing says what changed", StatusBlock, vocab.CauseNoChangeSource))
		return
	}
	if err != nil {
		out = append(out, gitFailCheck(2, "scope", text, "cannot list changed files: "+err.Error(), err, StatusError, vocab.CauseScopeViolation))
		return
	}
	attributed := ""
	if pass.haveBase {
		if attributed = pass.attribution().noted; attributed != "" {
			attributed = "; " + attributed
		}
		if w := attributionWarning(pass); w != nil {
			defer func() { out = append(out, *w) }()
		}
	}
	if len(files) == 0 {
		out = append(out, skippedCheck(2, "scope", text, "no changed files in "+how+attributed))
		return
	}
	shared := pass.in.sharedGlobs()
	isDir := workTreeDir(pass.in.Root)
	if pass.haveBase {
		isDir = treeDir(pass.repo, pass.base, pass.head, pass.paths.prefix)
	}
	surf := newSurfaces(c.Scope.Surfaces, isDir)
	var outside, minor []string
	for _, f := range files {
		if beyond[f] { // outside the project root: outside every surface, and never shared
			outside = append(outside, f)
			continue
		}
		in, err := surf.covers(f)
		if err != nil {
			out = append(out, gitFailCheck(2, "scope", text, fmt.Sprintf("cannot tell whether %s is inside the surfaces: %v", f, err), err, StatusError, vocab.CauseScopeViolation))
			return
		}
		switch {
		case in:
		case matchesAny(f, shared):
			minor = append(minor, f)
		default:
			outside = append(outside, f)
		}
	}
	if len(outside) > 0 {
		ch := failCheck(2, "scope", text, fmt.Sprintf("%d of %d changed files are outside the surfaces: %s (from %s)%s", len(outside), len(files), txt.JoinLimited(outside, 20), how, attributed), StatusFail, vocab.CauseScopeViolation)
		for _, f := range outside {
			ch.Locations = append(ch.Locations, Location{Path: f})
		}
		out = append(out, ch)
	} else {
		ev := fmt.Sprintf("all %d changed files are in the surfaces (from %s)", len(files)-len(minor), how)
		if len(minor) > 0 {
			ev = fmt.Sprintf("%d changed files are in the surfaces and %d are shared (from %s)", len(files)-len(minor), len(minor), how)
		}
		out = append(out, passCheck(2, "scope", text, ev+attributed))
	}
	if w := submoduleWarning(pass, "scope", "compared with the surfaces"); w != nil {
		out = append(out, *w)
	}
	if len(minor) > 0 {
		out = append(out, warnCheck(2, "scope:shared", "changes outside the surfaces touch only shared files", fmt.Sprintf("shared files changed: %s", txt.JoinLimited(minor, 20)), vocab.CauseScopeShared))
	}
	if pass.haveBase {
		declared := map[string]bool{}
		any := false
		for _, e := range pass.in.Evidence {
			if pass.builder[e] {
				any = true
				for _, f := range e.Declared() {
					declared[path.Clean(f)] = true
				}
			}
		}
		var undeclared []string
		for _, f := range files {
			if !declared[f] {
				undeclared = append(undeclared, f)
			}
		}
		if len(undeclared) > 0 {
			ev := fmt.Sprintf("changed but not in the implementer's files_changed: %s", txt.JoinLimited(undeclared, 20))
			if !any {
				ev = "no implementer evidence declares files_changed; " + ev
			}
			out = append(out, warnCheck(2, "scope:declared", "every changed file is declared in files_changed", ev, vocab.CauseUndeclaredChange))
		}
	}
	return
}

// sharedGlobs are the globs of the files outside the surfaces that are shared (a warning, not a
// scope_violation): the contract's scope.shared, which replaces the default (or policy) table
// rather than adding to it (SPEC §5.3 Part B), else the effective policy's. in has its contract.
func (in *Snapshot) sharedGlobs() []string {
	if s := in.Contract.Scope.Shared; len(s) > 0 {
		return s
	}
	return in.Policy.SharedGlobs
}

// workTreeDir is the isDir of a run without a base, whose changed files are the implementer's
// files_changed: a directory of the project's working tree (not through a symbolic link) stands
// for a directory of the base, which there is none of. root is the project root (nil: none).
func workTreeDir(root *os.Root) func(p string) (dirKind, error) {
	return func(p string) (dirKind, error) {
		if root == nil {
			return notDir, nil
		}
		fi, err := root.Lstat(filepath.FromSlash(p))
		if err != nil || !fi.IsDir() {
			return notDir, nil // absent or unreadable: not a directory the surfaces can count on
		}
		return baseDir, nil
	}
}

// matchesAny reports whether a file matches one of the shared globs; a glob without "/" matches
// the base name at any depth, as in .gitignore.
func matchesAny(file string, globs []string) bool {
	for _, g := range globs {
		target := file
		if !strings.Contains(g, "/") {
			target = path.Base(file)
		}
		if ok, _ := doublestar.Match(g, target); ok {
			return true
		}
	}
	return false
}
