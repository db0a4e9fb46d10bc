package tiers

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// bookkeepingPaths are the orchestration's own files (SPEC §5.3 B), relative to the project root
// (bookkeeping): the working-tree check does not compare them, and no scope question counts
// them. An entry ending in "/" is a directory.
var bookkeepingPaths = []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"}

// maxNamedFiles is how many differing files a worktree_mismatch names.
const maxNamedFiles = 20

// The tier-0 checks of invariant 7 (SPEC §5.1), after baseline: empty_change, then
// worktree_mismatch, or, with eval_checkout isolated, the checkout of the head that tier 1 and
// the detectors then run in.
const (
	emptyText = "the change is not empty: the base differs from the integration head"
	wtText    = "the working tree is the integration head"
)

// emptyChange is the empty_change check of an implementation_change whose baseline resolved (g):
// a head that is its base, or whose diff holds nothing but bookkeeping files, changed nothing that
// could be judged.
func emptyChange(pass *Pass, g gitFacts) []Check {
	c := pass.in.Contract
	if !g.haveBase || c.GateProfile != vocab.ImplementationChange {
		return nil // baseline did not pass, and says why; there is no commit to compare with
	}
	headName := pass.headName()
	base := fmt.Sprintf("base %s (base_snapshot %s)", short(g.base), c.BaseSnapshot)
	if g.base == g.head {
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s is the integration head %s (%s): the diff is empty, there is no change to judge", base, short(g.head), headName), StatusBlock, vocab.CauseEmptyChange)}
	}
	files, err := g.repo.ChangedFiles(g.base, g.head)
	if err != nil {
		return []Check{gitFailCheck(0, "empty_change", emptyText, fmt.Sprintf("diff %s..%s: %v", short(g.base), short(g.head), err), err, StatusError, vocab.CauseBaselineMismatch)}
	}
	// The project's own bookkeeping is not the work; a file outside the project root is (and the
	// scope check fails it): a bookkeeping path of another directory is not this project's.
	var work []string
	pp := projectPathsIn(pass.in, g.repo)
	for i, f := range files {
		rel, in := pp.rel(f)
		files[i] = rel
		if !in || !bookkeeping(rel) {
			work = append(work, rel)
		}
	}
	switch {
	case len(files) == 0:
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s and the integration head %s (%s) have the same tree: the diff is empty", base, short(g.head), headName), StatusBlock, vocab.CauseEmptyChange)}
	case len(work) == 0:
		return []Check{failCheck(0, "empty_change", emptyText, fmt.Sprintf("%s..%s changes only bookkeeping files (%s): nothing of the work is in the diff", short(g.base), short(g.head), txt.JoinLimited(files, 10)), StatusBlock, vocab.CauseEmptyChange)}
	}
	return []Check{passCheck(0, "empty_change", emptyText, fmt.Sprintf("%s..%s changes %s", short(g.base), short(g.head), txt.Counted(len(work), "file", "files")))}
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
	headName := pass.headName()
	if needsCheckout(pass) {
		why := "eval_checkout is isolated"
		if pass.opts.Verify {
			why = "a re-check of a pass"
		}
		if coErr != nil {
			return []Check{gitFailCheck(0, "worktree", wtText, fmt.Sprintf("%s: cannot check out %s: %v", why, short(pass.head), coErr), coErr, StatusError, vocab.CauseCheckoutFailed)}
		}
		return []Check{skippedCheck(0, "worktree", wtText, fmt.Sprintf("%s: tier 1 and the detectors run in a checkout of %s (%s) made for this run, so the working tree is not compared", why, short(pass.head), headName))}
	}
	if ch := worktreeCheck(pass, 0, "worktree", wtText, headName, ""); ch != nil {
		return []Check{*ch}
	}
	return nil
}

// headName says where the integration head came from.
func (pass *Pass) headName() string {
	if c := pass.in.integrationCommit(); c != "" {
		return "integration.commit " + c
	}
	return "HEAD"
}

// worktreeCheck compares the working tree with the head. after names the eval command that ran
// just before ("" before tier 1). It returns nil when nothing is to be said (after tier 1, a
// clean tree).
func worktreeCheck(pass *Pass, tier int, name, text, headName, after string) *Check {
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
	// The files are shown relative to the project root, a file outside it as the path from it.
	pp := pass.projectPaths()
	shown := make([]string, len(rep.Paths))
	for i, p := range rep.Paths {
		shown[i], _ = pp.rel(p)
	}
	if n := len(shown); n > 0 {
		named := shown
		if n > maxNamedFiles {
			named = named[:maxNamedFiles]
		}
		list := strings.Join(named, ", ")
		if n > maxNamedFiles {
			list += fmt.Sprintf(" and %d more", n-maxNamedFiles)
		}
		parts = append(parts, fmt.Sprintf("%s from it: %s", txt.Counted(n, "file differs", "files differ"), list))
	}
	ev := strings.Join(parts, "; ")
	if after != "" {
		ev = after + " changed the working tree: " + ev
	} else if rep.HEADErr == "" && rep.HEAD != pass.head && headName != "HEAD" {
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
	named := paths[:min(len(paths), maxNamedFiles)]
	list := strings.Join(named, ", ")
	if len(paths) > maxNamedFiles {
		list += fmt.Sprintf(" and %d more", len(paths)-maxNamedFiles)
	}
	ch := failCheck(tier, name, text, fmt.Sprintf("%s changed the isolated checkout of %s: %s from it: %s", after, short(pass.head), txt.Counted(len(paths), "file differs", "files differ"), list), StatusBlock, vocab.CauseWorktreeMismatch)
	return &ch
}

// workDir is where tier 1 and the detectors run: the isolated checkout, or the project root.
func (pass *Pass) workDir() string {
	if pass.work != nil && pass.work.dir != "" {
		return pass.work.dir
	}
	return pass.in.ProjectDir
}

// workRoot is workDir opened as a root.
func (pass *Pass) workRoot() *os.Root {
	if pass.work != nil && pass.work.root != nil {
		return pass.work.root
	}
	return pass.in.Root
}

// checkout is a checkout of the head the run made for tier 1 and the detectors: the project
// root (dir, opened as root) is at the same place inside it (top) as in the repository.
type checkout struct {
	dir, top string
	root     *os.Root
	co       *git.Checkout
}

// makeCheckout checks the head out into a temporary directory for tier 1 and the detectors, and
// gives it to the eval user when there is one. The run removes it (remove), also when err says
// it could not be made ready after git wrote it: that checkout is then the run's (a later
// comparison reads it) but nothing runs in it.
func makeCheckout(pass *Pass) (*checkout, error) {
	co, err := pass.repo.Checkout(pass.head)
	if err != nil {
		return nil, err
	}
	w := &checkout{top: co.Dir, co: co}
	dir := filepath.Join(co.Dir, filepath.FromSlash(pass.projectPrefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return w, err
	}
	if u := pass.exec.runAs; u != nil {
		// The checkout is the gate's own copy, made for this run: the eval user gets it, as the
		// agents have the working tree (the gate changes no permission in the project itself).
		if err := chownTree(co.Dir, u.UID, u.GID); err != nil {
			return w, fmt.Errorf("give the checkout to eval_user %s: %w", u, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return w, err
	}
	w.dir, w.root = dir, root
	return w, nil
}

// scratchStep names the step at which a scratch checkout could not be made.
type scratchStep int

const (
	scratchCheckout scratchStep = iota // git could not check the commit out
	scratchDir                         // the project's directory could not be made in it
	scratchOpen                        // it could not be opened as a root
	scratchOverlay                     // the files to lay over it could not be written
	scratchChown                       // it could not be given to the eval user
)

// scratchError is why a scratch checkout could not be made, and at which step.
type scratchError struct {
	step scratchStep
	err  error
}

func (e *scratchError) Error() string { return e.err.Error() }
func (e *scratchError) Unwrap() error { return e.err }

// scratchFunc makes, for a check that runs code on a tree of its own (the held-out checks, the
// base run), a checkout of rev: the project root at its place inside it, the files of lay laid
// over it (replaced counts those that replaced something), the whole given to the eval user when
// there is one. The run makes it (makeScratch) and hands the function to the check, which removes
// the checkout when done. An error is a *scratchError.
type scratchFunc func(rev string, lay []holdoutFile) (co *checkout, replaced int, err error)

// makeScratch is the run's scratchFunc. Without files to lay over it, the checkout is given to
// the eval user before it is opened; with them, after they are laid, so that they are its too.
func makeScratch(pass *Pass, rev string, lay []holdoutFile) (*checkout, int, error) {
	fail := func(step scratchStep, err error) error { return &scratchError{step, err} }
	gc, err := pass.repo.Checkout(rev)
	if err != nil {
		return nil, 0, fail(scratchCheckout, err)
	}
	w := &checkout{top: gc.Dir, co: gc}
	give := func() error {
		if u := pass.exec.runAs; u != nil {
			if err := chownTree(gc.Dir, u.UID, u.GID); err != nil {
				return fail(scratchChown, err)
			}
		}
		return nil
	}
	dir := filepath.Join(gc.Dir, filepath.FromSlash(pass.projectPrefix()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.remove()
		return nil, 0, fail(scratchDir, err)
	}
	if lay == nil {
		if err := give(); err != nil {
			w.remove()
			return nil, 0, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		w.remove()
		return nil, 0, fail(scratchOpen, err)
	}
	w.dir, w.root = dir, root
	replaced := 0
	for _, f := range lay {
		had, err := overlay(root, f)
		if err != nil {
			w.remove()
			return nil, 0, fail(scratchOverlay, err)
		}
		if had {
			replaced++
		}
	}
	if lay != nil {
		if err := give(); err != nil {
			w.remove()
			return nil, 0, err
		}
	}
	return w, replaced, nil
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

// remove removes the checkout; nothing when w is nil.
func (w *checkout) remove() {
	if w == nil {
		return
	}
	if w.root != nil {
		_ = w.root.Close()
	}
	if w.top != "" {
		_ = git.RemoveCheckout(w.top)
	}
}
