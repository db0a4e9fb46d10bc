package gate

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// Skeleton is a new task's contract as geas task new fills it in (contract.Skeleton).
type Skeleton = contract.Skeleton

// Dimension is one rubric dimension of a contract (contract.Dimension).
type Dimension = contract.Dimension

// The defaults of a new task's contract.
const (
	DefaultWorker   = contract.DefaultSkeletonWorker
	DefaultReviewer = contract.DefaultSkeletonReviewer
	DefaultBudget   = contract.DefaultSkeletonBudget
)

// CreatedTask is what CreateTask wrote.
type CreatedTask struct {
	Contract string   // the contract, as .geas/missions/M/tasks/T/contract.json
	Base     string   // the base_snapshot pinned; "" when the task has none
	Notes    []string // why the task has no base, when it has none
}

// CreateTask writes a new task's contract.json in state drafted (geas task new), its
// base_snapshot pinned to the full SHA that baseRev names in the project's repository. Without a
// repository or a commit an implementation_change task is refused; another profile is written
// without a base, and a note says so. An existing task is never overwritten. The result is never
// nil: its Contract names the task also with an error.
func CreateTask(p *project.Project, mission string, s Skeleton, baseRev string) (*CreatedTask, error) {
	dir := project.TaskDir(mission, s.TaskID)
	out := &CreatedTask{Contract: ".geas/" + dir + "/" + record.ContractFile, Notes: []string{}}
	exists := fmt.Errorf("task %s exists in mission %s (%s); nothing was overwritten", s.TaskID, mission, out.Contract)
	if _, err := p.Geas.Lstat(dir + "/" + record.ContractFile); err == nil {
		return out, exists
	}
	base, note, err := resolveBase(p.Dir, baseRev, s.Profile)
	if err != nil {
		return out, err
	}
	s.Base, out.Base = base, base
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	data, err := s.Build(out.Contract)
	if err != nil {
		return out, &InputError{Err: err}
	}
	if err := createTaskDir(p, dir); err != nil {
		return out, err
	}
	if err := fsutil.CreateFileAtomic(p.Geas, dir+"/"+record.ContractFile, data, 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return out, exists
		}
		return out, err
	}
	return out, nil
}

// resolveBase resolves rev in the project's repository to a full SHA. Without a repository or a
// commit, an implementation_change task is refused; another profile gets no base and a note.
func resolveBase(dir, rev string, profile vocab.Profile) (sha, note string, err error) {
	repo, err := git.Open(dir)
	if err == nil {
		sha, err = repo.Resolve(rev)
		repo.Close()
		if err == nil {
			return sha, "", nil
		}
	}
	why := fmt.Sprintf("--base %s does not name a commit (%v)", rev, err)
	if errors.Is(err, git.ErrNoRepository) {
		why = fmt.Sprintf("%s is not in a git repository", dir)
	}
	if profile == vocab.ImplementationChange {
		return "", "", fmt.Errorf("%s: an implementation_change task's base_snapshot is the commit its change starts from (git init and commit first, or --profile artifact_only)", why)
	}
	if rev != "HEAD" {
		return "", "", fmt.Errorf("%s", why)
	}
	return "", why + ": written without base_snapshot; the gate will judge the implementer's files_changed", nil
}

// createTaskDir makes the task's directory under .geas, refusing one that is a symbolic link.
func createTaskDir(p *project.Project, dir string) error {
	if err := p.Geas.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create .geas/%s: %w", dir, err)
	}
	fi, err := p.Geas.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return &project.SymlinkTaskError{Dir: dir}
	}
	return nil
}
