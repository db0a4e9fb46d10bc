package tiers

import (
	"fmt"
	"path/filepath"
	"strings"

	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// maxNamedFiles is how many differing files a worktree_mismatch names.
const maxNamedFiles = 20

// The tier-0 checks of invariant 7 (SPEC §5.1), after baseline: empty_change, then
// worktree_mismatch, or, with eval_checkout isolated, the checkout of the head that tier 1 and
// the detectors then run in.
const (
	emptyText = "the change is not empty: the base differs from the integration head"
	wtText    = "the working tree is the integration head"
)

// emptyChange is the empty_change check of an implementation_change whose baseline resolved: a
// head that is its base, or whose diff holds nothing but bookkeeping files, changed nothing that
// could be judged.
func emptyChange(pass *Pass) []Check {
	c := pass.in.Contract
	if !pass.haveBase || c.GateProfile != vocab.ImplementationChange {
		return nil // baseline did not pass, and says why; there is no commit to compare with
	}
	base := fmt.Sprintf("base %s (base_snapshot %s)", short(pass.base), c.BaseSnapshot)
	if pass.base == pass.head {
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s is the integration head %s (%s): the diff is empty, there is no change to judge", base, short(pass.head), pass.headName), StatusBlock, vocab.CauseEmptyChange)}
	}
	files, err := pass.repo.ChangedFiles(pass.base, pass.head)
	if err != nil {
		return []Check{gitFailCheck(0, "empty_change", emptyText, fmt.Sprintf("diff %s..%s: %v", short(pass.base), short(pass.head), err), err, StatusError, vocab.CauseBaselineMismatch)}
	}
	// The project's own bookkeeping is not the work; a file outside the project root is (and the
	// scope check fails it): a bookkeeping path of another directory is not this project's.
	var work []string
	for i, f := range files {
		at := pass.placed.paths[f]
		files[i] = at.rel
		if !at.in || !at.bookkeeping {
			work = append(work, at.rel)
		}
	}
	switch {
	case len(files) == 0:
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s and the integration head %s (%s) have the same tree: the diff is empty", base, short(pass.head), pass.headName), StatusBlock, vocab.CauseEmptyChange)}
	case len(work) == 0:
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s..%s changes only bookkeeping files (%s): nothing of the work is in the diff", short(pass.base), short(pass.head), txt.JoinLimited(files, 10)), StatusBlock, vocab.CauseEmptyChange)}
	}
	return []Check{passCheck(0, "empty_change", emptyText, fmt.Sprintf("%s..%s changes %s", short(pass.base), short(pass.head), txt.Counted(len(work), "file", "files")))}
}

// needsCheckout reports whether the run checks the head out for tier 1 and the detectors: with
// eval_checkout isolated, and for every re-check of a pass (geas gate verify, re-gating a finished
// task, the hook), which judges the commit the pass named, not what HEAD is now.
func needsCheckout(pass *Pass) bool {
	return pass.in.Contract != nil && pass.haveBase && (pass.in.Policy.EvalCheckout == policy.EvalCheckoutIsolated || pass.opts.Verify)
}

// worktree is the worktree check: the working tree is the integration head, or, when the run
// made a checkout of its own (needsCheckout; coErr says why it could not), that the tree is not
// compared.
func worktree(pass *Pass, coErr error) []Check {
	c := pass.in.Contract
	if c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		why := fmt.Sprintf("profile %s without a base_snapshot names no commit: the git checks are skipped", c.GateProfile)
		return []Check{skippedCheck(0, "worktree", wtText, why)}
	}
	if !pass.haveBase {
		return nil // baseline did not pass, and says why; there is no commit to compare with
	}
	if needsCheckout(pass) {
		why := "eval_checkout is isolated"
		if pass.opts.Verify {
			why = "a re-check of a pass"
		}
		if coErr != nil {
			return []Check{gitFailCheck(0, "worktree", wtText, fmt.Sprintf("%s: cannot check out %s: %v", why, short(pass.head), coErr), coErr, StatusError, vocab.CauseCheckoutFailed)}
		}
		return []Check{skippedCheck(0, "worktree", wtText, fmt.Sprintf("%s: tier 1 and the detectors run in a checkout of %s (%s) made for this run, so the working tree is not compared", why, short(pass.head), pass.headName))}
	}
	if ch := worktreeCheck(pass, 0, "worktree", wtText, ""); ch != nil {
		return []Check{*ch}
	}
	return nil
}

// afterCode compares the working tree (or the isolated checkout) with the head after code ran;
// after names what ran. A check means the code changed the tree: the caller records after as
// what changed it.
func afterCode(pass *Pass, tier int, name, text, after string) *Check {
	if pass.work != nil {
		return checkoutCheck(pass, tier, name, text, after)
	}
	return worktreeCheck(pass, tier, name, text, after)
}

// worktreeCheck compares the working tree with the head. after names the eval command that ran
// just before ("" before tier 1). It returns nil when nothing is to be said (after tier 1, a
// clean tree).
func worktreeCheck(pass *Pass, tier int, name, text, after string) *Check {
	prefix := pass.paths.prefix
	exempt := make([]string, len(bookkeepingPaths))
	for i, b := range bookkeepingPaths {
		exempt[i] = prefix + b
	}
	rep, err := pass.repo.CheckWorktree(pass.head, exempt)
	if err != nil {
		ch := gitFailCheck(tier, name, text, "cannot compare the working tree: "+err.Error(), err, StatusError, vocab.CauseWorktreeMismatch)
		return &ch
	}
	if rep.Clean(pass.head) {
		if after != "" {
			return nil
		}
		ch := passCheck(tier, name, text, fmt.Sprintf("HEAD is %s (%s); the %d tracked files outside the bookkeeping paths match it (%d hashed) and no untracked file is outside the ignore rules", short(pass.head), pass.headName, rep.Entries, rep.Hashed))
		return &ch
	}
	var parts []string
	switch {
	case rep.HEADErr != "":
		parts = append(parts, fmt.Sprintf("HEAD does not resolve (%s), the integration head is %s (%s)", rep.HEADErr, short(pass.head), pass.headName))
	case rep.HEAD != pass.head:
		parts = append(parts, fmt.Sprintf("HEAD is %s, the integration head is %s (%s)", short(rep.HEAD), short(pass.head), pass.headName))
	default:
		parts = append(parts, fmt.Sprintf("HEAD is the integration head %s (%s)", short(pass.head), pass.headName))
	}
	// The files are shown relative to the project root, a file outside it as the path from it.
	pp := pass.paths
	shown := make([]string, len(rep.Paths))
	for i, p := range rep.Paths {
		shown[i], _ = pp.rel(p)
	}
	if n := len(shown); n > 0 {
		parts = append(parts, fmt.Sprintf("%s from it: %s", txt.Counted(n, "file differs", "files differ"), txt.JoinLimited(shown, maxNamedFiles)))
	}
	ev := strings.Join(parts, "; ")
	if after != "" {
		ev = after + " changed the working tree: " + ev
	} else if rep.HEADErr == "" && rep.HEAD != pass.head && pass.headName != "HEAD" {
		// HEAD moved past the commit integration.json names: the work may be committed after
		// it, and then it is the integration that is out of date, not the working tree.
		ev += fmt.Sprintf("; if HEAD holds the work, record it: geas task integrate --task %s --commit HEAD; else commit the work (or set eval_checkout isolated) and gate again", pass.in.Task)
	} else {
		ev += "; commit the work (or set eval_checkout isolated) and gate again"
	}
	ch := failCheck(tier, name, text, ev, StatusBlock, vocab.CauseWorktreeMismatch)
	if len(rep.Paths) > 0 {
		for _, p := range shown[:min(len(shown), maxNamedFiles)] {
			ch.Locations = append(ch.Locations, Location{Path: p})
		}
	}
	return &ch
}

func evalDir(p string) string {
	if q, err := filepath.EvalSymlinks(p); err == nil {
		return q
	}
	return p
}

// checkoutCheck compares the isolated checkout with what the gate wrote.
func checkoutCheck(pass *Pass, tier int, name, text, after string) *Check {
	paths, err := pass.work.co.Changed()
	if err != nil {
		ch := failCheck(tier, name, text, "cannot compare the isolated checkout: "+err.Error(), StatusError, vocab.CauseWorktreeMismatch)
		return &ch
	}
	if len(paths) == 0 {
		return nil
	}
	ch := failCheck(tier, name, text, fmt.Sprintf("%s changed the isolated checkout of %s: %s from it: %s", after, short(pass.head), txt.Counted(len(paths), "file differs", "files differ"), txt.JoinLimited(paths, maxNamedFiles)), StatusBlock, vocab.CauseWorktreeMismatch)
	return &ch
}
