package tiers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/vocab"
)

// The held-out checks (SPEC §5.2a.6): policy holdout names files the agents cannot read or
// write, in a directory outside the project and its repository, and commands. The gate checks
// the head out into a directory of its own, lays those files over it (replacing whatever the work
// put at their paths), and runs the commands there; they count as a blocking tier-1 check
// (holdout_failed). What the agents can read — the check's evidence, the result, the record, the
// terminal — says counts and test names only: never the files' content nor the commands' output,
// whose logs go outside the project (GEAS_HOLDOUT_LOGS, else the user cache directory).

// HoldoutLogsEnv names the directory the held-out commands' logs are kept under.
const HoldoutLogsEnv = "GEAS_HOLDOUT_LOGS"

const (
	holdoutText = "the held-out checks pass on the head with the held-out files laid over it (policy holdout)"
	// maxHoldoutFiles and maxHoldoutBytes bound what a holdout directory may hold.
	maxHoldoutFiles = 10_000
	maxHoldoutBytes = 256 << 20
)

// holdoutFile is one held-out file, to be laid over the checkout.
type holdoutFile struct {
	path string // slash-separated, relative to the project root
	exec bool
	data []byte
}

// holdoutFacts is what the held-out checks found: their checks, and the held-out commands when
// they changed the working tree (changedBy; "" when they did not).
type holdoutFacts struct {
	checks    []Check
	changedBy string
}

// holdout runs the held-out checks, when the policy names some, after the rest of tier 1 passed
// (tier1Passed). logs opens the directory the run keeps their logs in (openHoldoutLogs).
func holdout(ctx context.Context, pass *Pass, profile vocab.Profile, tier1Passed bool, logs holdoutLogs) holdoutFacts {
	var f holdoutFacts
	h := pass.in.Policy.Holdout
	if len(h.Commands) == 0 || profile != vocab.ImplementationChange {
		return f
	}
	if !tier1Passed {
		f.checks = []Check{skippedCheck(1, "holdout", holdoutText, "not run: tier 1 failed")}
		return f
	}
	ch := runHoldout(ctx, pass, logs)
	if ctx.Err() != nil {
		return f
	}
	f.checks = []Check{ch}
	// The held-out commands run the work's code, which could copy the held-out files into the
	// project while they are laid out: the project must be as the head left it.
	if pass.haveBase && pass.changedBy == "" && pass.repo != nil {
		const after = "the held-out commands"
		if c := afterCode(pass, 1, "worktree_after_holdout", "the held-out commands leave the working tree at the integration head", after); c != nil {
			f.checks = append(f.checks, *c)
			f.changedBy = after
		}
	}
	return f
}

// holdoutError is the error check of held-out checks that cannot be read or run.
func holdoutError(ev string) Check {
	return failCheck(1, "holdout", holdoutText, ev, StatusError, vocab.CauseHoldoutFailed)
}

func runHoldout(ctx context.Context, pass *Pass, logs holdoutLogs) Check {
	h := pass.in.Policy.Holdout
	if pass.repo == nil || pass.head == "" {
		return holdoutError("no head commit to check out: the held-out checks cannot run")
	}
	var files []holdoutFile
	var err error
	switch {
	case h.Dir != "":
		files, err = readHoldoutDir(pass, h.Dir)
	default:
		if pass.insideProject(h.Repo) {
			err = fmt.Errorf("the holdout repository %s is inside the project or its repository (or holds it), where the agents can read and write it", h.Repo)
		} else {
			err = git.ReadTreeFiles(h.Repo, h.Ref, maxHoldoutFiles, maxHoldoutBytes, func(p string, exec bool, data []byte) {
				files = append(files, holdoutFile{path: p, exec: exec, data: data})
			})
		}
	}
	if err != nil {
		return holdoutError("cannot read the held-out files: " + err.Error())
	}
	co, replaced, err := pass.scratch(pass.head, files)
	if err != nil {
		var se *scratchError
		errors.As(err, &se)
		switch se.step {
		case scratchCheckout:
			return gitFailCheck(1, "holdout", holdoutText, fmt.Sprintf("cannot check out the head %s for the held-out checks: %v", short(pass.head), se.err), se.err, StatusError, vocab.CauseHoldoutFailed)
		case scratchDir:
			return holdoutError("cannot make the checkout of the head: " + se.err.Error())
		case scratchOpen:
			return holdoutError("cannot open the checkout of the head: " + se.err.Error())
		case scratchOverlay:
			return holdoutError(fmt.Sprintf("cannot lay the held-out files over the checkout: %v", se.err))
		default:
			return holdoutError(fmt.Sprintf("cannot give the checkout to eval_user %s: %v", pass.exec.runAs, se.err))
		}
	}
	defer co.remove()
	dir, root := co.dir, co.root
	logRoot, logDir, logNote := logs()
	if logRoot != nil {
		defer logRoot.Close()
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = pass.defaultTimeout()
	}
	// No progress: the terminal is read by the agents too.
	checks, runs, _ := tier1(ctx, tier1Input{
		Commands: h.Commands, DefaultTimeout: timeout, ProjectDir: dir, Root: root,
		LogRoot: logRoot, LogDirName: logDir, TailBytes: pass.in.Policy.OutputTailBytes, RunAs: pass.exec.runAs, Start: pass.env.Start,
	})
	if ctx.Err() != nil {
		return holdoutError("interrupted")
	}
	what := fmt.Sprintf("%d held-out files laid over a checkout of %s (%d of them replacing the work's)", len(files), short(pass.head), replaced)
	for i, c := range checks {
		if c.Status == StatusPass || i >= len(runs) {
			continue
		}
		run := runs[i]
		ev := fmt.Sprintf("held-out command %d of %d ", i+1, len(h.Commands))
		status := StatusFail
		switch {
		case c.Status == StatusError && c.Code == vocab.CauseEvalUnstartable:
			ev += "could not start"
			status = StatusError
		case run.TimedOut:
			ev += fmt.Sprintf("timed out after %s", tier1Duration(run.DurationMS))
		case run.ExitCode != nil && *run.ExitCode != h.Commands[i].ExpectExit:
			ev += fmt.Sprintf("exited %d (want %d) in %s", *run.ExitCode, h.Commands[i].ExpectExit, tier1Duration(run.DurationMS))
		case run.ExitCode != nil:
			ev += fmt.Sprintf("exited %d in %s but its results did not pass", *run.ExitCode, tier1Duration(run.DurationMS))
		default:
			ev += "did not pass"
		}
		ev += holdoutTests(run) + "; " + what + "; " + logNote
		return failCheck(1, "holdout", holdoutText, ev, status, vocab.CauseHoldoutFailed)
	}
	var tests []string
	for _, run := range runs {
		if t := holdoutTests(run); t != "" {
			tests = append(tests, strings.TrimPrefix(t, "; "))
		}
	}
	ev := fmt.Sprintf("%d held-out commands passed", len(runs))
	if len(tests) > 0 {
		ev += " (" + strings.Join(tests, "; ") + ")"
	}
	return passCheck(1, "holdout", holdoutText, ev+"; "+what+"; "+logNote)
}

// holdoutTests is a held-out run's declared results in counts and failing names only.
func holdoutTests(run EvalRun) string {
	t := run.Tests
	switch {
	case t == nil:
		return ""
	case t.Error != "":
		return "; its results cannot be read"
	}
	s := fmt.Sprintf("; tests: %d passed, %d failed, %d skipped", t.Passed, t.Failed, t.Skipped)
	if t.Passed+t.Failed == 0 {
		s += " (no test ran)"
	}
	if len(t.Failing) > 0 {
		q := make([]string, len(t.Failing))
		for i, n := range t.Failing {
			q[i] = strconv.Quote(n)
		}
		s += "; failing: " + strings.Join(q, ", ")
		if more := t.Failed - len(t.Failing); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
	}
	return s
}

// insideProject reports whether p is inside the project or its repository, or holds either.
func (pass *Pass) insideProject(p string) bool {
	return insideAny(p, pass.projectDirs())
}

// projectDirs are the directories the agents write: the project and its repository's top.
func (pass *Pass) projectDirs() []string {
	dirs := []string{pass.in.ProjectDir}
	if pass.repo != nil {
		dirs = append(dirs, pass.repo.Top())
	}
	return dirs
}

// insideAny reports whether p is inside one of dirs, or holds it.
func insideAny(p string, dirs []string) bool {
	p = evalDir(p)
	for _, d := range dirs {
		d = evalDir(d)
		if within(p, d) || within(d, p) {
			return true
		}
	}
	return false
}

// within reports whether p is d or below it.
func within(p, d string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readHoldoutDir reads every file of the holdout directory, bounded: a symbolic link or a special
// file in it is refused (nothing is followed out of it), and so is a directory inside the project.
func readHoldoutDir(pass *Pass, dir string) ([]holdoutFile, error) {
	return readHoldoutDirIn(pass, dir, pass.projectDirs())
}

// readHoldoutDirIn is readHoldoutDir with the directories the agents write.
func readHoldoutDirIn(pass *Pass, dir string, agents []string) ([]holdoutFile, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("the holdout dir %s is not absolute", dir)
	}
	if insideAny(dir, agents) {
		return nil, fmt.Errorf("the holdout dir %s is inside the project or its repository (or holds it), where the agents can read and write it", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var files []holdoutFile
	var total int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: refused", p)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file: refused", p)
		case len(files) >= maxHoldoutFiles:
			return fmt.Errorf("more than %d files", maxHoldoutFiles)
		}
		data, err := fsutil.ReadLimited(root, p, maxHoldoutBytes-total)
		if err != nil {
			return fmt.Errorf("%s: %w (at most %d bytes in all)", p, err, maxHoldoutBytes)
		}
		total += int64(len(data))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, holdoutFile{path: p, exec: fi.Mode()&0o111 != 0, data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the holdout dir %s holds no file", dir)
	}
	return files, nil
}

// overlay writes f into root, replacing whatever is at its path or in the way of it (a file where
// a directory is needed, a symbolic link anywhere on the path). It reports whether something was
// there.
func overlay(root *os.Root, f holdoutFile) (bool, error) {
	parts := strings.Split(f.path, "/")
	for i := 1; i < len(parts); i++ {
		d := path.Join(parts[:i]...)
		fi, err := root.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return false, err
		case fi.IsDir():
			continue
		default:
			if err := root.RemoveAll(d); err != nil {
				return false, err
			}
		}
		if err := root.Mkdir(d, 0o755); err != nil {
			return false, err
		}
	}
	had := false
	if _, err := root.Lstat(f.path); err == nil {
		had = true
		if err := root.RemoveAll(f.path); err != nil {
			return false, err
		}
	}
	mode := os.FileMode(0o644)
	if f.exec {
		mode = 0o755
	}
	w, err := root.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return had, err
	}
	_, err = w.Write(f.data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return had, err
}

// holdoutLogs opens the directory the held-out commands' logs go to, when the held-out commands
// are about to run: the directory (nil: no logs), its name, and a note that says where they are,
// or why there are none. The caller closes the directory.
type holdoutLogs func() (root *os.Root, dir, note string)

// openHoldoutLogs is the run's holdoutLogs: a directory outside the project, under
// GEAS_HOLDOUT_LOGS, else the user cache directory. A run that writes nothing (a dry run, a
// re-check) keeps no logs.
func openHoldoutLogs(pass *Pass) (*os.Root, string, string) {
	if pass.opts.LogRoot == nil || pass.opts.DryRun || pass.opts.Verify {
		return nil, "", "no logs kept (a run that writes nothing)"
	}
	base := os.Getenv(HoldoutLogsEnv)
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return nil, "", "no logs kept: " + err.Error()
		}
		base = filepath.Join(c, "geas", "holdout-logs")
	}
	if !filepath.IsAbs(base) || pass.insideProject(base) {
		return nil, "", fmt.Sprintf("no logs kept: %s is not an absolute directory outside the project", base)
	}
	dir := filepath.Join(base, fmt.Sprintf("%s-%s-%s-%d", pass.in.Mission, pass.in.Task, pass.opts.RunID, time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", "no logs kept: " + err.Error()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", "no logs kept: " + err.Error()
	}
	return root, dir, "logs outside the project in " + dir
}
