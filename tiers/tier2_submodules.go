package tiers

import (
	"fmt"

	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// submoduleWarning is the warning a content check adds for the submodules that base..head changed
// (SPEC §5.1): a submodule's files are in another repository's objects, so the scope, stub and
// marker checks, which read this repository's diff, have not seen them. It names each one, never
// a silent zero; nil when no submodule changed (or the run has no base). check names the check
// it belongs to ("scope", "stubs"), what says what was not done with the content.
func submoduleWarning(pass *Pass, check, what string) *Check {
	if !pass.haveBase || pass.repo == nil {
		return nil
	}
	const text = "the content of every changed submodule is "
	subs, err := pass.repo.ChangedSubmodules(pass.base, pass.head)
	if err != nil {
		ch := warnCheck(2, check+":submodules", text+what, fmt.Sprintf("cannot list the submodules changed in %s..%s: %v", short(pass.base), short(pass.head), err), vocab.CauseSubmoduleUnscanned)
		return &ch
	}
	var named []string
	var where []Location
	for _, s := range subs {
		at := pass.placed.paths[s.Path] // placed by tier 0: a changed gitlink is a path of the diff
		rel := at.rel
		if at.in && at.bookkeeping {
			continue
		}
		if len(where) < maxNamedFiles {
			where = append(where, Location{Path: rel})
		}
		switch {
		case s.From == "":
			named = append(named, fmt.Sprintf("%s (added at %s)", rel, short(s.To)))
		case s.To == "":
			named = append(named, fmt.Sprintf("%s (removed, was %s)", rel, short(s.From)))
		default:
			named = append(named, fmt.Sprintf("%s (%s -> %s)", rel, short(s.From), short(s.To)))
		}
	}
	if len(named) == 0 {
		return nil
	}
	ch := warnCheck(2, check+":submodules", text+what,
		fmt.Sprintf("not scanned: %s changed in %s..%s: %s; their files are in the submodules' own repositories, not in this diff: review them there",
			txt.Counted(len(named), "submodule", "submodules"), short(pass.base), short(pass.head), txt.JoinLimited(named, maxNamedFiles)), vocab.CauseSubmoduleUnscanned)
	ch.Locations = where
	return &ch
}
