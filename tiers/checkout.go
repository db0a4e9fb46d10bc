package tiers

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/geas-dev/geas/internal/git"
)

// The run's checkouts: the isolated checkout of the head that tier 1 and the detectors run in
// (invariant 7, with eval_checkout isolated or on a re-check), and the scratch checkouts the
// held-out checks and the base run run code in. The run removes each one it makes.

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
	dir := filepath.Join(co.Dir, filepath.FromSlash(pass.paths.prefix))
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
	dir := filepath.Join(gc.Dir, filepath.FromSlash(pass.paths.prefix))
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
