// Package project finds a geas project and hands out its directories as *os.Root handles, so that
// no path derived from input (an id, a glob, a symlink) can reach outside the project or .geas/.
// It also validates ids (ValidateID, the grammar vocab holds) and reads the default mission of
// .geas/state/run.json.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// GeasDir is the name of the directory that holds a project's geas files.
const GeasDir = ".geas"

// IDPattern is the shape of mission, task and artifact ids (SPEC §3), vocab's grammar: ids become
// path elements, so nothing else is allowed.
const IDPattern = vocab.IDPattern

// IsID reports whether s has the shape of an id (IDPattern).
func IsID(s string) bool { return vocab.IsID(s) }

// InvalidIDError reports a mission or task id outside ^[A-Za-z0-9_-]+$.
type InvalidIDError = vocab.InvalidIDError

// ValidateID checks that id is a valid mission or task id; what names it in the error. It is the
// entry point the commands and the project use; the grammar is vocab's (vocab.ValidateID), so
// that the contract validates the task id it names without the project's layout.
func ValidateID(what, id string) error { return vocab.ValidateID(what, id) }

// ErrNotFound means no .geas directory was found from the starting directory upwards.
var ErrNotFound = errors.New("no .geas directory found")

// NotFoundError says where the search for .geas started.
type NotFoundError struct{ Start string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s directory in %s or any parent (use -C DIR to name the project root)", GeasDir, e.Start)
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Project is an open geas project.
type Project struct {
	Dir  string   // absolute project root (the directory that holds .geas)
	Root *os.Root // the project root
	Geas *os.Root // the .geas directory
}

// Open opens the project whose root is exactly dir (dir must hold .geas). Its Dir is dir's real
// path (fsutil.RealPath): symbolic links resolved and names spelled as stored, so that the same
// project reached by any spelling the system accepts, or through a link from outside its
// repository, is the same directory of the same repository.
func Open(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := fsutil.RealPath(abs); err == nil {
		abs = real
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open project root: %w", err)
	}
	geas, err := root.OpenRoot(GeasDir)
	if err != nil {
		root.Close()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NotFoundError{Start: abs}
		}
		return nil, fmt.Errorf("open %s: %w", filepath.Join(abs, GeasDir), err)
	}
	return &Project{Dir: abs, Root: root, Geas: geas}, nil
}

// Find locates the project for a command started in start (the -C directory, or the working
// directory): the nearest ancestor that holds .geas, walking up from start's real path (symbolic
// links resolved, as git walks up from the physical working directory). Inside a git worktree
// whose own checkout has no .geas, the main checkout's .geas is used (the git common dir's
// parent), as geas does.
func Find(start string) (*Project, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	}
	from := abs
	if real, err := fsutil.RealPath(abs); err == nil {
		from = real
	}
	for dir := from; ; {
		if isDir(filepath.Join(dir, GeasDir)) {
			return Open(dir)
		}
		if main, ok := mainCheckout(dir); ok && isDir(filepath.Join(main, GeasDir)) {
			return Open(main)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, &NotFoundError{Start: abs}
		}
		dir = parent
	}
}

// Close releases the project's directory handles.
func (p *Project) Close() error {
	return errors.Join(p.Geas.Close(), p.Root.Close())
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// mainCheckout reports the main working tree of the linked git worktree rooted at dir: dir/.git is a
// file "gitdir: X", X/commondir names the common git dir, whose parent is the main checkout.
func mainCheckout(dir string) (string, bool) {
	b, err := readSmall(dir, ".git")
	if err != nil {
		return "", false // absent, or a directory: not a linked worktree
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	c, err := readSmall(gitdir, "commondir")
	if err != nil {
		return "", false
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common = filepath.Clean(common)
	if filepath.Base(common) != ".git" {
		return "", false // a bare repository has no main checkout
	}
	return filepath.Dir(common), true
}

// readSmall reads the small file name of directory dir (a .git file, a commondir) without
// blocking: agents write .git, and a named pipe there is refused, never waited on.
func readSmall(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return fsutil.ReadLimited(root, name, 64<<10)
}

// ErrNoMission means no --mission was given, .geas/state/run.json names none, and .geas/missions/
// does not hold exactly one mission to default to.
var ErrNoMission = errors.New("no mission: pass --mission or set mission_id in .geas/state/run.json")

// DefaultMission returns the mission_id of .geas/state/run.json; without one (no run.json, or a
// mission_id that is absent, null or empty), the only mission under .geas/missions/ when there is exactly
// one (SPEC §9). A run.json that cannot be read or names an invalid id is an error, never a
// fallback: the file says something, and the gate does not guess past it.
func (p *Project) DefaultMission() (string, error) {
	mission, _, err := p.RunMission()
	if err != nil || mission != "" {
		return mission, err
	}
	return p.onlyMission()
}

// RunFile is the run state under .geas/ whose mission_id names the default mission.
const RunFile = "state/run.json"

// maxRunFileBytes bounds the read of RunFile, which agents write (geas v1's run state is a few
// hundred bytes; the bound is that of a contract).
const maxRunFileBytes = 4 << 20

// RunMission reads .geas/state/run.json: the mission_id it names ("" when absent, null or empty)
// and whether the file exists. A file that cannot be read, or names an invalid id, is an error.
func (p *Project) RunMission() (mission string, exists bool, err error) {
	var run struct {
		MissionID *string `json:"mission_id"`
	}
	if exists, err := p.readRun(&run); !exists || err != nil {
		return "", exists, err
	}
	if run.MissionID == nil || *run.MissionID == "" {
		return "", true, nil
	}
	if err := ValidateID("mission", *run.MissionID); err != nil {
		return "", true, fmt.Errorf(".geas/state/run.json: %w", err)
	}
	return *run.MissionID, true, nil
}

// readRun decodes .geas/state/run.json into run, exactly (SPEC §2 invariant 8: "Mission_ID" next
// to mission_id is refused, not read); exists is false, with a nil error, when there is no
// run.json. It is an error when run.json cannot be read or is not one JSON object.
func (p *Project) readRun(run any) (exists bool, err error) {
	b, err := fsutil.ReadLimited(p.Geas, RunFile, maxRunFileBytes) // a named pipe is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		err = schemas.DecodeExact("", ".geas/state/run.json", b, run)
	}
	if err != nil {
		return true, fmt.Errorf("read .geas/state/run.json: %w", err)
	}
	return true, nil
}

// Mission resolves the mission to use: the flag value if set, else the default mission.
func (p *Project) Mission(flag string) (string, error) {
	if flag != "" {
		return flag, ValidateID("mission", flag)
	}
	return p.DefaultMission()
}

// MissionDir is the mission's directory relative to .geas.
func MissionDir(mission string) string { return "missions/" + mission }

// TaskDir is the task's directory relative to .geas.
func TaskDir(mission, task string) string { return MissionDir(mission) + "/tasks/" + task }

// ErrNoTask means the task has no directory or no contract.json.
var ErrNoTask = errors.New("no such task")

// NoTaskError names the missing task.
type NoTaskError struct {
	Mission, Task string
	// Tasks and Near, set by ListTasks, are the mission's tasks and those close to Task.
	Tasks, Near []string
	listed      bool
}

func (e *NoTaskError) Error() string {
	return fmt.Sprintf("no task %q in mission %q (no .geas/%s/contract.json)", e.Task, e.Mission, TaskDir(e.Mission, e.Task)) + e.listing()
}

func (e *NoTaskError) Unwrap() error { return ErrNoTask }

// Task checks both ids, that the task's contract.json exists inside .geas, and returns the task
// directory relative to .geas.
func (p *Project) Task(mission, task string) (string, error) {
	return p.TaskFrom(fsutil.RootReader(p.Geas), mission, task)
}

// TaskFrom is Task with the checks made through r, a reader of .geas (such as the mission's
// tasks directory opened once, fsutil.Dir), whose answers are those of .geas itself.
func (p *Project) TaskFrom(r fsutil.Reader, mission, task string) (string, error) {
	if err := ValidateID("mission", mission); err != nil {
		return "", err
	}
	if err := ValidateID("task", task); err != nil {
		return "", err
	}
	dir := TaskDir(mission, task)
	if _, err := r.Stat(dir + "/contract.json"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &NoTaskError{Mission: mission, Task: task}
		}
		return "", fmt.Errorf("task %s: %w", task, err)
	}
	// A task directory is a directory: a symlink (even one that stays inside .geas) would let one
	// task's files stand in for another's, or hide a task from geas gate --all.
	fi, err := r.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", task, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "", &SymlinkTaskError{Dir: dir}
	}
	return dir, nil
}

// ErrTaskSymlink is wrapped by the error for a task directory that is a symbolic link.
var ErrTaskSymlink = errors.New("task directory is a symbolic link")

// SymlinkTaskError names a task directory that is a symbolic link.
type SymlinkTaskError struct{ Dir string }

func (e *SymlinkTaskError) Error() string {
	return fmt.Sprintf(".geas/%s: %v: a task directory must be a directory of its own", e.Dir, ErrTaskSymlink)
}

func (e *SymlinkTaskError) Unwrap() error { return ErrTaskSymlink }

// TaskEntry is one entry of a mission's tasks directory, as TaskEntries lists it.
type TaskEntry struct {
	Name string
	// Problem says why the entry is not a task directory: not a valid task id, a symbolic link, not
	// a directory, unreadable. "" for a directory with a valid id (which may still lack a contract).
	Problem string
	// Ignored marks a hidden regular file (a name starting with "."), such as a desktop's .DS_Store:
	// a file cannot be a task, and a dot name cannot be a task id, so it hides nothing.
	Ignored bool
}

// TaskEntries lists every entry of a mission's tasks directory, sorted by name, saying for each
// whether it is a task directory, so that geas gate --all can account for every one (SPEC §7.2):
// a task that disappears behind a symlink, a file or a bad name is an error, not an absence.
// A mission without a tasks directory is an error wrapping fs.ErrNotExist.
func (p *Project) TaskEntries(mission string) ([]TaskEntry, error) {
	if err := ValidateID("mission", mission); err != nil {
		return nil, err
	}
	dir := MissionDir(mission) + "/tasks"
	f, err := fsutil.OpenDir(p.Geas, dir) // a named pipe is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("list tasks of mission %s: %w", mission, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list tasks of mission %s: %w", mission, err)
	}
	out := make([]TaskEntry, 0, len(entries))
	for _, e := range entries {
		te := TaskEntry{Name: e.Name()}
		typ := e.Type()
		switch {
		case typ.IsRegular() && strings.HasPrefix(e.Name(), "."):
			te.Ignored = true
		case ValidateID("task", e.Name()) != nil:
			te.Problem = fmt.Sprintf("entry %q of .geas/%s is not a valid task id (ids match ^[A-Za-z0-9_-]+$)", e.Name(), dir)
		case typ&fs.ModeSymlink != 0:
			target, _ := p.Geas.Readlink(dir + "/" + e.Name())
			te.Problem = fmt.Sprintf(".geas/%s/%s is a symbolic link (to %q), not a task directory", dir, e.Name(), target)
		case !typ.IsDir():
			te.Problem = fmt.Sprintf(".geas/%s/%s is not a directory (%s)", dir, e.Name(), "a "+fsutil.ModeName(typ))
		}
		out = append(out, te)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Tasks lists the task ids of a mission (directories under tasks/ with a valid id), sorted.
// Entries that are not such directories are left out: TaskEntries lists them too.
func (p *Project) Tasks(mission string) ([]string, error) {
	entries, err := p.TaskEntries(mission)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.Problem == "" && !e.Ignored {
			ids = append(ids, e.Name)
		}
	}
	return ids, nil
}
