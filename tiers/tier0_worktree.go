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
func (r *run) oneCommit(add func(Check)) {
	c := r.in.Contract
	const emptyText = "the change is not empty: the base differs from the integration head"
	const wtText = "the working tree is the integration head"
	if c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		why := fmt.Sprintf("profile %s without a base_snapshot names no commit: the git checks are skipped", c.GateProfile)
		add(skippedCheck(0, "worktree", wtText, why))
		return
	}
	if !r.haveBase {
		return // baseline did not pass, and says why; there is no commit to compare with
	}
	headName := r.headName()
	if c.GateProfile == vocab.ImplementationChange {
		if ch := r.emptyChange(emptyText, headName); ch != nil {
			add(*ch)
		}
	}
	// A re-check of a pass (geas gate verify, re-gating a finished task, the hook) always judges
	// the commit the pass named in a checkout of its own: the working tree has moved on with the
	// mission's later work, and the pass is about that commit, not about what HEAD is now.
	if r.in.Policy.EvalCheckout == EvalCheckoutIsolated || r.opts.Verify {
		why := "eval_checkout is isolated"
		if r.opts.Verify {
			why = "a re-check of a pass"
		}
		if err := r.makeCheckout(); err != nil {
			add(gitFailCheck(0, "worktree", wtText, fmt.Sprintf("%s: cannot check out %s: %v", why, short(r.head), err), err, StatusError, vocab.CauseCheckoutFailed))
			return
		}
		add(skippedCheck(0, "worktree", wtText, fmt.Sprintf("%s: tier 1 and the detectors run in a checkout of %s (%s) made for this run, so the working tree is not compared", why, short(r.head), headName)))
		return
	}
	if ch := r.worktreeCheck(0, "worktree", wtText, headName, ""); ch != nil {
		add(*ch)
	}
}

// headName says where the integration head came from.
func (r *run) headName() string {
	if r.in.Record != nil {
		if integ, ok := r.in.Record.Integration(); ok && integ.Commit != "" {
			return "integration.commit " + integ.Commit
		}
	}
	return "HEAD"
}

// emptyChange is the empty_change check: an implementation_change whose head is its base, or whose
// diff holds nothing but bookkeeping files, changed nothing that could be judged.
func (r *run) emptyChange(text, headName string) *Check {
	base := fmt.Sprintf("base %s (base_snapshot %s)", short(r.base), r.in.Contract.BaseSnapshot)
	if r.base == r.head {
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s is the integration head %s (%s): the diff is empty, there is no change to judge", base, short(r.head), headName), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	}
	files, err := r.repo.ChangedFiles(r.base, r.head)
	if err != nil {
		ch := gitFailCheck(0, "empty_change", text, fmt.Sprintf("diff %s..%s: %v", short(r.base), short(r.head), err), err, StatusError, vocab.CauseBaselineMismatch)
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
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s and the integration head %s (%s) have the same tree: the diff is empty", base, short(r.head), headName), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	case len(work) == 0:
		ch := failCheck(0, "empty_change", text, fmt.Sprintf("%s..%s changes only bookkeeping files (%s): nothing of the work is in the diff", short(r.base), short(r.head), joinLimited(files, 10)), StatusBlock, vocab.CauseEmptyChange)
		return &ch
	}
	ch := passCheck(0, "empty_change", text, fmt.Sprintf("%s..%s changes %d files", short(r.base), short(r.head), len(work)))
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
func (r *run) worktreeCheck(tier int, name, text, headName, after string) *Check {
	prefix := r.projectPrefix()
	exempt := make([]string, len(bookkeepingPaths))
	for i, b := range bookkeepingPaths {
		exempt[i] = prefix + b
	}
	rep, err := r.repo.CheckWorktree(r.head, exempt)
	if err != nil {
		ch := gitFailCheck(tier, name, text, "cannot compare the working tree: "+err.Error(), err, StatusError, vocab.CauseWorktreeMismatch)
		return &ch
	}
	if rep.Clean(r.head) {
		if after != "" {
			return nil
		}
		ch := passCheck(tier, name, text, fmt.Sprintf("HEAD is %s (%s); the %d tracked files outside the bookkeeping paths match it (%d hashed) and no untracked file is outside the ignore rules", short(r.head), headName, rep.Entries, rep.Hashed))
		return &ch
	}
	var parts []string
	switch {
	case rep.HEADErr != "":
		parts = append(parts, fmt.Sprintf("HEAD does not resolve (%s), the integration head is %s (%s)", rep.HEADErr, short(r.head), headName))
	case rep.HEAD != r.head:
		parts = append(parts, fmt.Sprintf("HEAD is %s, the integration head is %s (%s)", short(rep.HEAD), short(r.head), headName))
	default:
		parts = append(parts, fmt.Sprintf("HEAD is the integration head %s (%s)", short(r.head), headName))
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
func (r *run) projectPrefix() string {
	top, dir := evalDir(r.repo.Top()), evalDir(r.in.ProjectDir)
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
func (r *run) afterEval(n int, command string) *Check {
	if !r.haveBase || r.wtDirty || r.repo == nil {
		return nil
	}
	const name, text = "worktree_after_eval", "the eval commands leave the working tree at the integration head"
	return r.afterCode(1, name, text, fmt.Sprintf("eval command %d `%s`", n, command))
}

// afterDetector is called by part A after a script detector ran: a script detector runs code
// too, so it may not rewrite what a later detector reads (SPEC §5.1). A detector that changed a
// tracked file, or left an untracked one, makes the run worktree_mismatch, naming it; the
// detectors after it that read files or run code are not run (readsTree). It returns the check
// once, for the first detector that changed the tree.
func (r *run) afterDetector(label, command string) *Check {
	if !r.haveBase || r.wtDirty || r.repo == nil {
		return nil
	}
	const name, text = "worktree_after_detector", "the script detectors leave the working tree at the integration head"
	return r.afterCode(2, name, text, fmt.Sprintf("the script detector of %s `%s`", label, command))
}

// afterCode compares the working tree (or the isolated checkout) with the head after code ran;
// after names what ran. It sets wtDirty when the tree changed.
func (r *run) afterCode(tier int, name, text, after string) *Check {
	var ch *Check
	if r.co != nil {
		ch = r.checkoutCheck(tier, name, text, after)
	} else {
		ch = r.worktreeCheck(tier, name, text, r.headName(), after)
	}
	if ch != nil {
		r.wtDirty, r.wtChangedBy = true, after
	}
	return ch
}

// checkoutCheck compares the isolated checkout with what the gate wrote.
func (r *run) checkoutCheck(tier int, name, text, after string) *Check {
	paths, err := r.co.Changed()
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
	ch := failCheck(tier, name, text, fmt.Sprintf("%s changed the isolated checkout of %s: %d files differ from it: %s", after, short(r.head), len(paths), list), StatusBlock, vocab.CauseWorktreeMismatch)
	return &ch
}

// workDir is where tier 1 and the detectors run: the isolated checkout, or the project root.
func (r *run) workDir() string {
	if r.checkout != "" {
		return r.checkout
	}
	return r.in.ProjectDir
}

// workRoot is workDir opened as a root.
func (r *run) workRoot() *os.Root {
	if r.checkoutRoot != nil {
		return r.checkoutRoot
	}
	return r.in.Root
}

// makeCheckout checks the head out into a temporary directory for tier 1 and the detectors; the
// project root is at the same place inside it as in the repository.
func (r *run) makeCheckout() error {
	co, err := r.repo.Checkout(r.head)
	if err != nil {
		return err
	}
	r.co, r.checkoutTop = co, co.Dir
	dir := filepath.Join(co.Dir, filepath.FromSlash(r.projectPrefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if u := r.exec.runAs; u != nil {
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
	r.checkout, r.checkoutRoot = dir, root
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
func (r *run) removeCheckout() {
	if r.checkoutRoot != nil {
		_ = r.checkoutRoot.Close()
		r.checkoutRoot = nil
	}
	if r.checkoutTop != "" {
		_ = git.RemoveCheckout(r.checkoutTop)
		r.checkoutTop, r.checkout, r.co = "", "", nil
	}
}
