package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/project"
)

// DefaultInitMission is the mission Init names when neither the caller nor an existing mission
// says otherwise: the shape of geas v1's own mission ids (mission-NNN).
const DefaultInitMission = "mission-001"

// Initialized is what Init found and wrote (geas init prints it with --format json).
type Initialized struct {
	Project   string   `json:"project"`
	MissionID string   `json:"mission_id"`
	Created   []string `json:"created"`
	Existing  []string `json:"existing"`
	Notes     []string `json:"notes"`
	// Hooks is what --harness installed, one file per harness (absent without --harness).
	Hooks []HookFile `json:"hooks,omitempty"`
}

// Init starts .geas/ in the project directory dir (geas init): run.json naming the mission, the
// mission's tasks directory and the example policy, each created only when missing, never
// replaced. The mission is mission (which must agree with run.json's), else run.json's, else the
// only mission, else DefaultInitMission.
func Init(dir, mission string) (*Initialized, error) {
	p, err := openInitProject(dir)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	res := &Initialized{Project: dir, Created: []string{}, Existing: []string{}, Notes: []string{}}
	runMission, runExists, err := p.RunMission()
	if err != nil {
		return nil, err
	}
	if res.MissionID, err = initMission(p, mission, runMission); err != nil {
		return nil, err
	}
	if err := res.write(p, runExists, runMission); err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, gitNotes(dir)...)
	return res, nil
}

// openInitProject makes .geas/ in dir when it is missing (refusing a symbolic link or a file) and
// opens the project.
func openInitProject(dir string) (*project.Project, error) {
	fi, err := os.Lstat(filepath.Join(dir, project.GeasDir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(filepath.Join(dir, project.GeasDir), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory of its own (%s): geas init does not write through it", filepath.Join(dir, project.GeasDir), fi.Mode().Type())
	}
	return project.Open(dir)
}

// initMission picks the mission: flag (which must agree with run.json's), else run.json's, else
// the only mission, else DefaultInitMission.
func initMission(p *project.Project, flag, runMission string) (string, error) {
	switch {
	case flag != "" && runMission != "" && flag != runMission:
		return "", fmt.Errorf("--mission %s, but .geas/state/run.json names mission %s: nothing changed (geas init never overwrites; edit run.json to switch missions)", flag, runMission)
	case flag != "":
		return flag, nil
	case runMission != "":
		return runMission, nil
	}
	ids, err := p.Missions()
	if err != nil {
		return "", err
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	if len(ids) > 1 {
		return "", &InputError{Err: fmt.Errorf("--mission is required: .geas/missions/ holds %d missions (%v) and run.json names none", len(ids), ids)}
	}
	return DefaultInitMission, nil
}

// write creates what is missing, never replacing a file, and lists what was created and what
// already existed.
func (r *Initialized) write(p *project.Project, runExists bool, runMission string) error {
	run := fmt.Sprintf("{\n  \"version\": \"1.0\",\n  \"status\": \"initialized\",\n  \"mission_id\": %q,\n  \"created_at\": %q\n}\n",
		r.MissionID, time.Now().UTC().Format("2006-01-02T15:04:05Z"))
	runName := ".geas/" + project.RunFile
	switch {
	case runExists && runMission == "":
		r.Existing = append(r.Existing, runName+" (names no mission: --mission defaults to the only mission)")
	case runExists:
		r.Existing = append(r.Existing, runName+" (mission_id "+runMission+")")
	default:
		if err := r.create(p, project.RunFile, []byte(run), "mission_id "+r.MissionID); err != nil {
			return err
		}
	}
	tasks := project.MissionDir(r.MissionID) + "/tasks"
	if _, err := p.Geas.Lstat(tasks); err == nil {
		r.Existing = append(r.Existing, ".geas/"+tasks+"/")
	} else {
		if err := p.Geas.MkdirAll(tasks, 0o755); err != nil {
			return fmt.Errorf("create .geas/%s: %w", tasks, err)
		}
		r.Created = append(r.Created, ".geas/"+tasks+"/")
	}
	return r.create(p, policy.ExampleFile, policy.Example(), "the defaults, commented; the gate reads .geas/"+policy.File+" only")
}

// create writes name under .geas/ unless it exists (then it is listed as existing).
func (r *Initialized) create(p *project.Project, name string, data []byte, what string) error {
	shown := ".geas/" + name
	if _, err := p.Geas.Lstat(name); err == nil {
		r.Existing = append(r.Existing, shown)
		return nil
	}
	err := fsutil.CreateFileAtomic(p.Geas, name, data, 0o644)
	switch {
	case errors.Is(err, fs.ErrExist):
		r.Existing = append(r.Existing, shown)
	case err != nil:
		return err
	default:
		r.Created = append(r.Created, shown+" ("+what+")")
	}
	return nil
}

// gitNotes say what the gate will need from git that the project does not have yet.
func gitNotes(dir string) []string {
	repo, err := git.Open(dir)
	if errors.Is(err, git.ErrNoRepository) {
		return []string{"not a git repository: geas gate needs one for implementation_change tasks (their base and their change are commits): git init, then commit"}
	}
	if err != nil {
		return []string{fmt.Sprintf("the git repository could not be read: %v", err)}
	}
	defer repo.Close()
	notes := []string{"commit .geas/ before a task's base (git add .geas && git commit): an untracked or uncommitted " +
		policy.ExampleFile + " would be a change of the working tree, and of the task's scope, to the gate"}
	if _, err := repo.Resolve("HEAD"); err != nil {
		notes = append(notes, "the repository has no commit yet: geas task new pins a task's base_snapshot to HEAD, so commit first")
	}
	return notes
}
