package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

// DefaultInitMission is the mission geas init names when neither --mission nor an existing mission
// says otherwise: the shape of geas v1's own mission ids (mission-NNN).
const DefaultInitMission = gate.DefaultInitMission

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
type initResult = gate.Initialized

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
	res, err := gate.Init(dir, o.mission)
	if err != nil {
		return err
	}
	return g.output(res, func(w io.Writer) { initText(w, res) })
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

// initText prints what geas init created and found.
func initText(w io.Writer, r *initResult) {
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
