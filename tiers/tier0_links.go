package tiers

import (
	"fmt"
	"strings"

	"github.com/geas-dev/geas/vocab"
)

// linksCheck is the symlink_escape check (SPEC §5.1, "The repository is agent-writable…"): every
// symbolic link of the head tree, changed by the work or not, must lead into the commit. A link
// that leads outside the repository (absolute, or climbing above its top), into .git or into the
// bookkeeping paths would make a command run code that is not the commit's while the diff, the
// stub scan and the reviews see only the link; it blocks the run in both checkout modes. The
// boundary is the repository's top, not the project root: the commands run in the repository's
// checkout, and a file of the repository outside the project is the commit's too.
func (r *run) linksCheck(add func(Check)) {
	c := r.in.Contract
	if !r.haveBase || c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		return // no commit to judge: the worktree check says why
	}
	const name = "symlinks"
	const text = "every symbolic link of the head tree leads into the commit: not outside the repository, into .git or into the bookkeeping paths"
	prefix := r.projectPrefix()
	fenced := make([]string, len(bookkeepingPaths))
	for i, b := range bookkeepingPaths {
		fenced[i] = prefix + b
	}
	rep, err := r.repo.CheckLinks(r.head, fenced)
	if err != nil {
		add(failCheck(0, name, text, fmt.Sprintf("cannot read the symbolic links of %s: %v", short(r.head), err), StatusError, vocab.CauseBaselineMismatch))
		return
	}
	if len(rep.Escapes) == 0 {
		ev := fmt.Sprintf("the head tree of %s has no symbolic link outside the bookkeeping paths", short(r.head))
		if rep.Links > 0 {
			ev = fmt.Sprintf("the %d symbolic links of the head tree of %s lead into the commit", rep.Links, short(r.head))
		}
		add(passCheck(0, name, text, ev))
		return
	}
	var named []string
	for _, e := range rep.Escapes {
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
		len(rep.Escapes), rep.Links, short(r.head), list), StatusBlock, vocab.CauseSymlinkEscape)
	for _, e := range rep.Escapes[:min(len(rep.Escapes), maxNamedFiles)] {
		ch.Locations = append(ch.Locations, Location{Path: strings.TrimPrefix(e.Path, prefix)})
	}
	add(ch)
}
