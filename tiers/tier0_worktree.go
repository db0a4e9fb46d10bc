package tiers

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/vocab"
)

// bookkeepingPaths are the orchestration's own files (SPEC §5.3 B), relative to the project root:
// the working-tree check does not compare them. An entry ending in "/" is a directory.
var bookkeepingPaths = []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}

// maxNamedFiles is how many differing files a worktree_mismatch names.
const maxNamedFiles = 20

// oneCommit runs the tier-0 checks of invariant 7 (SPEC §5.1) after baseline: empty_change and
// worktree_mismatch, or, with eval_checkout isolated, the checkout of the head that tier 1 and
// the detectors then run in.
func (pass *Pass) oneCommit(add func(Check)) {
	c := pass.in.Contract
	const emptyText = "the change is not empty: the base differs from the integration head"
	const wtText = "the working tree is the integration head"
	if c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		why := fmt.Sprintf("profile %s without a base_snapshot names no commit: the git checks are skipped", c.GateProfile)
		add(skippedCheck(0, "worktree", wtText, why))
		return
	}
	if !pass.haveBase {
		return // baseline did not pass, and says why; there is no commit to compare with
	}
	headName := pass.headName()
	if c.GateProfile == vocab.ImplementationChange {
		if ch := pass.emptyChange(emptyText, headName); ch != nil {
			add(*ch)
		}
	}
	// A re-check of a pass (geas gate verify, re-gating a finished task, the hook) always judges
	// the commit the pass named in a checkout of its own: the working tree has moved on with the
	// mission's later work, and the pass is about that commit, not about what HEAD is now.
	if pass.in.Policy.EvalCheckout == EvalCheckoutIsolated || pass.opts.Verify {
		why := "eval_checkout is isolated"
		if pass.opts.Verify {
			why = "a re-check of a pass"
		}
		if err := pass.makeCheckout(); err != nil {
			add(gitFailCheck(0, "worktree", wtText, fmt.Sprintf("%s: cannot check out %s: %v", why, short(pass.head), err), err, StatusError, vocab.CauseCheckoutFailed))
			return
		}
		add(skippedCheck(0, "worktree", wtText, fmt.Sprintf("%s: tier 1 and the detectors run in a checkout of %s (%s) made for this run, so the working tree is not compared", why, short(pass.head), headName)))
		return
	}
	if ch := pass.worktreeCheck(0, "worktree", wtText, headName, ""); ch != nil {
		add(*ch)
	}
}

// headName says where the integration head came from.
func (pass *Pass) headName() string {
	if pass.in.Record != nil {
		if integ, ok := pass.in.Record.Integration(); ok && integ.Commit != "" {
			return "integration.commit " + integ.Commit
		}
	}
	return "HEAD"
}

// emptyChange is the empty_change check: an implementation_change whose head is its base, or whose
// diff holds nothing but bookkeeping files, changed nothing that could be judged.
func (pass *Pass) emptyChange(text, headName string) *Check {
	base := fmt.Sprintf("base %s (base_snapshot %s)", short(pass.base), pass.in.Contract.BaseSnapshot)
	if pass.base == pass.head {
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s is the integration head %s (%s): the diff is empty, there is no change to judge", base, short(pass.head), headName), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	}
	files, err := pass.repo.ChangedFiles(pass.base, pass.head)
	if err != nil {
		ch := gitFailCheck(0, "empty_change", text, fmt.Sprintf("diff %s..%s: %v", short(pass.base), short(pass.head), err), err, StatusError, vocab.CauseBaselineMismatch)
		return &ch
	}
	var work []string
	for _, f := range files {
		if !isBookkeeping(f) {
			work = append(work, f)
		}
	}
	switch {
	case len(files) == 0:
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s and the integration head %s (%s) have the same tree: the diff is empty", base, short(pass.head), headName), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	case len(work) == 0:
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s..%s changes only bookkeeping files (%s): nothing of the work is in the diff", short(pass.base), short(pass.head), joinLimited(files, 10)), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	}
	ch := passCheck(0, "empty_change", text, fmt.Sprintf("%s..%s changes %d files", short(pass.base), short(pass.head), len(work)))
	return &ch
}

// isBookkeeping reports whether a project-relative path is one of bookkeepingPaths.
func isBookkeeping(p string) bool {
	for _, b := range bookkeepingPaths {
		if strings.HasSuffix(b, "/") && strings.HasPrefix(p, b) || p == b {
			return true
		}
	}
	return false
}

// worktreeCheck compares the working tree with the head. after names the eval command that ran
// just before ("" before tier 1). It returns nil when nothing is to be said (after tier 1, a
// clean tree).
func (pass *Pass) worktreeCheck(tier int, name, text, headName, after string) *Check {
	prefix := pass.projectPrefix()
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
		ch := passCheck(tier, name, text, fmt.Sprintf("HEAD is %s (%s); the %d tracked files outside the bookkeeping paths match it (%d hashed) and no untracked file is outside the ignore rules", short(pass.head), headName, rep.Entries, rep.Hashed))
		return &ch
	}
	var parts []string
	switch {
	case rep.HEADErr != "":
		parts = append(parts, fmt.Sprintf("HEAD does not resolve (%s), the integration head is %s (%s)", rep.HEADErr, short(pass.head), headName))
	case rep.HEAD != pass.head:
		parts = append(parts, fmt.Sprintf("HEAD is %s, the integration head is %s (%s)", short(rep.HEAD), short(pass.head), headName))
	default:
		parts = append(parts, fmt.Sprintf("HEAD is the integration head %s (%s)", short(pass.head), headName))
	}
	if n := len(rep.Paths); n > 0 {
		named := rep.Paths
		if n > maxNamedFiles {
			named = named[:maxNamedFiles]
		}
		list := strings.Join(named, ", ")
		if n > maxNamedFiles {
			list += fmt.Sprintf(" and %d more", n-maxNamedFiles)
		}
		parts = append(parts, fmt.Sprintf("%d files differ from it: %s", n, list))
	}
	ev := strings.Join(parts, "; ")
	if after != "" {
		ev = after + " changed the working tree: " + ev
	} else {
		ev += "; commit the work (or set eval_checkout isolated) and gate again"
	}
	ch := failCheck(tier, name, text, ev, StatusBlock, vocab.CauseWorktreeMismatch)
	if len(rep.Paths) > 0 {
		for _, p := range rep.Paths[:min(len(rep.Paths), maxNamedFiles)] {
			ch.Locations = append(ch.Locations, Location{Path: strings.TrimPrefix(p, prefix)})
		}
	}
	return &ch
}

// projectPrefix is the project root relative to the repository's top directory, with a trailing
// slash ("" when they are the same directory).
func (pass *Pass) projectPrefix() string {
	top, dir := evalDir(pass.repo.Top()), evalDir(pass.in.ProjectDir)
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}

func evalDir(p string) string {
	if q, err := filepath.EvalSymlinks(p); err == nil {
		return q
	}
	return p
}

// afterEval is called by tier 1 after eval command n ran: an eval command that changed a tracked
// file or left an untracked one makes the run worktree_mismatch, naming it (SPEC §5.1). It returns
// the check once, for the first command that changed the tree.
//
// In an isolated checkout the same holds for the checkout: it is compared with the stat data the
// gate recorded when it wrote it, so an eval command cannot rewrite what the detectors read there
// either.
func (pass *Pass) afterEval(n int, command string) *Check {
	if !pass.haveBase || pass.wtDirty || pass.repo == nil {
		return nil
	}
	const name, text = "worktree_after_eval", "the eval commands leave the working tree at the integration head"
	return pass.afterCode(1, name, text, fmt.Sprintf("eval command %d `%s`", n, command))
}

// afterDetector is called by part A after a script detector ran: a script detector runs code
// too, so it may not rewrite what a later detector reads (SPEC §5.1). A detector that changed a
// tracked file, or left an untracked one, makes the run worktree_mismatch, naming it; the
// detectors after it that read files or run code are not run (readsTree). It returns the check
// once, for the first detector that changed the tree.
func (pass *Pass) afterDetector(label, command string) *Check {
	if !pass.haveBase || pass.wtDirty || pass.repo == nil {
		return nil
	}
	const name, text = "worktree_after_detector", "the script detectors leave the working tree at the integration head"
	return pass.afterCode(2, name, text, fmt.Sprintf("the script detector of %s `%s`", label, command))
}

// afterCode compares the working tree (or the isolated checkout) with the head after code ran;
// after names what ran. It sets wtDirty when the tree changed.
func (pass *Pass) afterCode(tier int, name, text, after string) *Check {
	var ch *Check
	if pass.co != nil {
		ch = pass.checkoutCheck(tier, name, text, after)
	} else {
		ch = pass.worktreeCheck(tier, name, text, pass.headName(), after)
	}
	if ch != nil {
		pass.wtDirty, pass.wtChangedBy = true, after
	}
	return ch
}

// checkoutCheck compares the isolated checkout with what the gate wrote.
func (pass *Pass) checkoutCheck(tier int, name, text, after string) *Check {
	paths, err := pass.co.Changed()
	if err != nil {
		ch := failCheck(tier, name, text, "cannot compare the isolated checkout: "+err.Error(), StatusError, vocab.CauseWorktreeMismatch)
		return &ch
	}
	if len(paths) == 0 {
		return nil
	}
	named := paths[:min(len(paths), maxNamedFiles)]
	list := strings.Join(named, ", ")
	if len(paths) > maxNamedFiles {
		list += fmt.Sprintf(" and %d more", len(paths)-maxNamedFiles)
	}
	ch := failCheck(tier, name, text, fmt.Sprintf("%s changed the isolated checkout of %s: %d files differ from it: %s", after, short(pass.head), len(paths), list), StatusBlock, vocab.CauseWorktreeMismatch)
	return &ch
}

// workDir is where tier 1 and the detectors run: the isolated checkout, or the project root.
func (pass *Pass) workDir() string {
	if pass.checkout != "" {
		return pass.checkout
	}
	return pass.in.ProjectDir
}

// workRoot is workDir opened as a root.
func (pass *Pass) workRoot() *os.Root {
	if pass.checkoutRoot != nil {
		return pass.checkoutRoot
	}
	return pass.in.Root
}

// makeCheckout checks the head out into a temporary directory for tier 1 and the detectors; the
// project root is at the same place inside it as in the repository.
func (pass *Pass) makeCheckout() error {
	co, err := pass.repo.Checkout(pass.head)
	if err != nil {
		return err
	}
	pass.co, pass.checkoutTop = co, co.Dir
	dir := filepath.Join(co.Dir, filepath.FromSlash(pass.projectPrefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if u := pass.exec.runAs; u != nil {
		// The checkout is the gate's own copy, made for this run: the eval user gets it, as the
		// agents have the working tree (the gate changes no permission in the project itself).
		if err := chownTree(co.Dir, u.UID, u.GID); err != nil {
			return fmt.Errorf("give the checkout to eval_user %s: %w", u, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	pass.checkout, pass.checkoutRoot = dir, root
	return nil
}

// chownTree gives every file under dir, dir included, to uid and gid, without following links.
func chownTree(dir string, uid, gid uint32) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(uid), int(gid))
	})
}

// removeCheckout removes the isolated checkout, if the run made one.
func (pass *Pass) removeCheckout() {
	if pass.checkoutRoot != nil {
		_ = pass.checkoutRoot.Close()
		pass.checkoutRoot = nil
	}
	if pass.checkoutTop != "" {
		_ = git.RemoveCheckout(pass.checkoutTop)
		pass.checkoutTop, pass.checkout, pass.co = "", "", nil
	}
}
