package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/geas-dev/geas/project"
)

// Where a hook's project comes from (SPEC §9). Claude Code runs hooks in the session's current
// directory, which the agent moves (cd src), and the agent writes every directory of the project:
// a copy of .geas planted in src/ with `true` as its eval command would pass wherever the hook
// walks up from src/. So a hook gates the project the harness or the user names, and walks up
// only as a fallback that refuses a project it cannot tell from a planted copy.
const (
	envProjectDir       = "GEAS_PROJECT_DIR"   // the user's own choice, as -C
	envClaudeProjectDir = "CLAUDE_PROJECT_DIR" // set by Claude Code for every hook: where it was started
	envCursorProjectDir = "CURSOR_PROJECT_DIR" // set by Cursor for every hook: the workspace's root
)

// pinHookProject sets g.dir to the project the hook gates:
//
//   - -C DIR, else $GEAS_PROJECT_DIR: the configured project, found from there as every command
//     finds it (the user wrote it; no agent can change it);
//   - else $CLAUDE_PROJECT_DIR when it holds .geas: the project the harness names;
//   - else the project found by walking up from $CLAUDE_PROJECT_DIR, or, when it is unset, from
//     the hook input's cwd when it is a directory (else the hook's working directory), accepted only when it is at the top
//     of its git working tree (or no git repository holds it): a .geas below the repository root
//     may be a copy an agent planted, and is refused with how to name the project.
//
// The fallback cannot tell a repository an agent made inside the project (src/.git beside a
// planted src/.geas) from a real one; Claude Code always sets CLAUDE_PROJECT_DIR, and other
// harnesses should set GEAS_PROJECT_DIR (docs/agents.md).
//
// A refusal is an error the hook answers as a gate that cannot run: the first stop is held, the
// completion refused. When no project is found at all, g.dir is left where the walk started, so
// the hook says there is none as before.
func (g *globalOptions) pinHookProject(in hookInput) error {
	return g.pinProjectFrom(claudeProjectEnv, in.Cwd)
}

// projectEnv is the environment variable in which a harness names the project for its hooks
// (name "" for a harness that sets none), what the messages say of it, and its reader (each
// reads its variable by its constant name, which docs_env_test checks is documented).
type projectEnv struct {
	name, sets string
	get        func() string
}

var claudeProjectEnv = projectEnv{envClaudeProjectDir, "Claude Code sets it for every hook",
	func() string { return os.Getenv(envClaudeProjectDir) }}

// pinProjectFrom is pinHookProject for a harness whose project variable is env (none when
// env.name is "") and whose hook input names cwd as the session's directory.
func (g *globalOptions) pinProjectFrom(env projectEnv, cwd string) error {
	if g.dir != "" {
		return nil
	}
	if d := os.Getenv(envProjectDir); d != "" {
		g.dir = d
		return nil
	}
	start, named := "", false
	if env.name != "" {
		start = env.get()
		named = start != ""
	}
	if start == "" {
		if isDirPath(cwd) { // a cwd that is no directory here says nothing: the hook's own
			start = cwd
		}
	}
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		start = wd
	}
	abs, err := filepath.Abs(start)
	if err != nil {
		return err
	}
	g.dir = abs
	p, err := project.Find(abs)
	if errors.Is(err, project.ErrNotFound) {
		return nil // no project: the hook says so as before
	}
	if err != nil {
		// A .geas that is there but cannot be opened (a link out of the project, say) is not "no
		// project": the hook cannot run, and holds the stop.
		return fmt.Errorf("open the project from %s: %w", abs, err)
	}
	defer p.Close()
	g.dir = p.Dir
	if named && sameDir(p.Dir, abs) {
		return nil
	}
	return walkedProjectProblem(p.Dir, abs, named, env)
}

// walkedProjectProblem says why the project at dir, found by walking up from start, is not gated
// by a hook (nil when it is).
func walkedProjectProblem(dir, start string, named bool, env projectEnv) error {
	from := "the hook's working directory " + start
	if named {
		from = env.name + " " + start
	}
	how := fmt.Sprintf("name the project: set %s to its root, or pass -C to the hook", envProjectDir)
	if env.name != "" {
		how = fmt.Sprintf("name the project: set %s (%s) or %s to its root, or pass -C to the hook", env.name, env.sets, envProjectDir)
	}
	if exists(filepath.Join(dir, ".git")) {
		return nil
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, ".git")) {
			return fmt.Errorf("the project %s that a walk up from %s finds is below the root %s of its git repository: a hook "+
				"does not gate a .geas it cannot tell from a copy an agent planted; %s", dir, from, d, how)
		}
		if filepath.Dir(d) == d {
			return nil // no git repository: nothing to be below
		}
	}
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func isDirPath(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
