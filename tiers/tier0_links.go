package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// linksCheck is the symlink_escape check (SPEC §5.1, "The repository is agent-writable…"): every
// symbolic link of the head tree, changed by the work or not, must lead into the commit. A link
// that leads outside the repository (absolute, or climbing above its top), into .git or into the
// bookkeeping paths would make a command run code that is not the commit's while the diff, the
// stub scan and the reviews see only the link; it blocks the run in both checkout modes. The
// boundary is the repository's top, not the project root: the commands run in the repository's
// checkout, and a file of the repository outside the project is the commit's too.
func linksCheck(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	c := pass.in.Contract
	if !pass.haveBase || c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		return // no commit to judge: the worktree check says why
	}
	const name = "symlinks"
	const text = "every symbolic link of the head tree leads into the commit: not outside the repository, into .git or into the bookkeeping paths"
	prefix := pass.paths.prefix
	fenced := make([]string, len(bookkeepingPaths))
	for i, b := range bookkeepingPaths {
		fenced[i] = prefix + b
	}
	rep, err := pass.repo.CheckLinks(pass.head, fenced)
	if err != nil {
		add(gitFailCheck(0, name, text, fmt.Sprintf("cannot read the symbolic links of %s: %v", short(pass.head), err), err, StatusError, vocab.CauseBaselineMismatch))
		return
	}
	escapes := append(slices.Clip(rep.Escapes), danglingIntoTheWorktree(pass, rep.Dangling)...)
	if len(escapes) == 0 {
		ev := fmt.Sprintf("the head tree of %s has no symbolic link outside the bookkeeping paths", short(pass.head))
		if rep.Links > 0 {
			ev = fmt.Sprintf("the %d symbolic links of the head tree of %s lead into the commit", rep.Links, short(pass.head))
		}
		if n := len(rep.Dangling); n > 0 {
			ev += fmt.Sprintf(" (%d of them to a path it does not have, which no file holds yet: %s)", n, txt.JoinLimited(linkPaths(rep.Dangling), 10))
		}
		add(passCheck(0, name, text, ev))
		return
	}
	var named []string
	for _, e := range escapes {
		s := fmt.Sprintf("%s -> %s", e.Path, e.Target)
		if len(e.Chain) > 0 {
			s += ", then " + strings.Join(e.Chain, ", then ")
		}
		named = append(named, s+" ("+e.Why+")")
	}
	list := strings.Join(named[:min(len(named), maxNamedFiles)], "; ")
	if len(named) > maxNamedFiles {
		list += fmt.Sprintf("; and %d more", len(named)-maxNamedFiles)
	}
	ch := failCheck(0, name, text, fmt.Sprintf("%d of the %d symbolic links of the head tree of %s lead where the content is not the commit's: %s",
		len(escapes), rep.Links, short(pass.head), list), StatusBlock, vocab.CauseSymlinkEscape)
	for _, e := range escapes[:min(len(escapes), maxNamedFiles)] {
		rel, _ := projectPaths{prefix: prefix, within: true}.rel(e.Path)
		ch.Locations = append(ch.Locations, Location{Path: rel})
	}
	add(ch)
	return
}

// danglingIntoTheWorktree returns, in the working-tree mode, the links of dangling (links that
// lead to a path the commit does not have) whose path exists in the working tree: an ignored file
// there (a build directory, a cache) is not the commit's, and the working-tree check does not
// compare it. In a checkout of the commit (eval_checkout isolated, a re-check) such a link leads
// nowhere until a command of the commit makes the path, so it is not judged.
func danglingIntoTheWorktree(pass *Pass, dangling []git.LinkEscape) []git.LinkEscape {
	if pass.work != nil || len(dangling) == 0 {
		return nil
	}
	var out []git.LinkEscape
	for _, d := range dangling {
		_, err := os.Lstat(filepath.Join(pass.repo.Top(), filepath.FromSlash(d.Why)))
		if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			continue
		}
		found := "exists in the working tree"
		if err != nil {
			found = "cannot be looked up in the working tree (" + err.Error() + ")"
		}
		d.Why = fmt.Sprintf("to %s, which the commit does not have but which %s: an ignored file is not the commit's; commit it, remove it, or set eval_checkout isolated", d.Why, found)
		out = append(out, d)
	}
	return out
}

func linkPaths(links []git.LinkEscape) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.Path
	}
	return out
}
