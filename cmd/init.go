package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/tiers"
)

// DefaultInitMission is the mission geas init names when neither --mission nor an existing mission
// says otherwise: the shape of geas v1's own mission ids (mission-NNN).
const DefaultInitMission = "mission-001"

type initOptions struct {
	mission string
}

func newInitCmd(g *globalOptions) *cobra.Command {
	var o initOptions
	c := &cobra.Command{
		Use:   "init [--mission M]",
		Short: "Start .geas/ in a project: run.json naming the mission, the mission folder, an example policy",
		Long: `Start .geas/ in the project root (the working directory, or -C DIR):

  .geas/state/run.json             {"version": "1.0", "status": "initialized", "mission_id": M, ...}
                                   (geas v1's run state; its mission_id is the default --mission)
  .geas/missions/M/tasks/          where geas task new writes contracts
  .geas/gate-policy.example.json   the gate's defaults as a commented policy; the gate reads
                                   .geas/gate-policy.json only, so this file changes nothing

Without --mission, M is run.json's mission, else the only mission under .geas/missions/, else
` + DefaultInitMission + `. geas init is idempotent and never overwrites: run again, it says what already
exists (exit 0); with a --mission other than the one run.json names, it refuses (exit 1) and
changes nothing. Outside a git repository it still works, and says that the gate needs one for
implementation_change tasks.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runInit(g, o) },
	}
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: run.json's, the only mission, or "+DefaultInitMission+")")
	return c
}

// initResult is what geas init prints with --format json.
type initResult struct {
	Project   string   `json:"project"`
	MissionID string   `json:"mission_id"`
	Created   []string `json:"created"`
	Existing  []string `json:"existing"`
	Notes     []string `json:"notes"`
}

func runInit(g *globalOptions, o initOptions) error {
	if o.mission != "" {
		if err := project.ValidateID("mission", o.mission); err != nil {
			return err
		}
	}
	dir, err := initDir(g.dir)
	if err != nil {
		return err
	}
	p, err := openInitProject(dir)
	if err != nil {
		return err
	}
	defer p.Close()
	res := initResult{Project: dir, Created: []string{}, Existing: []string{}, Notes: []string{}}
	runMission, runExists, err := p.RunMission()
	if err != nil {
		return err
	}
	if res.MissionID, err = initMission(p, o.mission, runMission); err != nil {
		return err
	}
	if err := res.write(p, runExists, runMission); err != nil {
		return err
	}
	res.Notes = append(res.Notes, gitNotes(dir)...)
	return g.output(res, func(w io.Writer) { res.text(w) })
}

// initDir is the directory geas init starts .geas/ in: -C DIR or the working directory, which must
// not be inside another project (a .geas/ in a parent, or the main checkout's of a git worktree).
func initDir(flagDir string) (string, error) {
	dir := flagDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", usagef("project directory %s: not a directory", dir)
	}
	if p, err := project.Find(dir); err == nil {
		other := p.Dir
		p.Close()
		if !samePath(other, dir) {
			return "", fmt.Errorf("%s is inside the geas project at %s: geas init starts .geas/ at a project's root (run it there, or use that project)", dir, other)
		}
	}
	return dir, nil
}

func samePath(a, b string) bool {
	ea, errA := filepath.EvalSymlinks(a)
	eb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ea == eb
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

// initMission picks the mission: --mission (which must agree with run.json's), else run.json's,
// else the only mission, else DefaultInitMission.
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
		return "", usagef("--mission is required: .geas/missions/ holds %d missions (%v) and run.json names none", len(ids), ids)
	}
	return DefaultInitMission, nil
}

// write creates what is missing, never replacing a file, and lists what was created and what
// already existed.
func (r *initResult) write(p *project.Project, runExists bool, runMission string) error {
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
	return r.create(p, tiers.ExamplePolicyFile, tiers.ExamplePolicy(), "the defaults, commented; the gate reads .geas/"+tiers.PolicyFile+" only")
}

// create writes name under .geas/ unless it exists (then it is listed as existing).
func (r *initResult) create(p *project.Project, name string, data []byte, what string) error {
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
		tiers.ExamplePolicyFile + " would be a change of the working tree, and of the task's scope, to the gate"}
	if _, err := repo.Resolve("HEAD"); err != nil {
		notes = append(notes, "the repository has no commit yet: geas task new pins a task's base_snapshot to HEAD, so commit first")
	}
	return notes
}

func (r *initResult) text(w io.Writer) {
	fmt.Fprintf(w, "geas init: project %s, mission %s\n", r.Project, r.MissionID)
	for _, c := range r.Created {
		fmt.Fprintf(w, "  created  %s\n", c)
	}
	for _, e := range r.Existing {
		fmt.Fprintf(w, "  exists   %s\n", e)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintf(w, "  next: geas task new --task T --criterion TEXT --eval CMD --surface GLOB\n")
}
