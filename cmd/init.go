package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

// DefaultInitMission is the mission geas init names when neither --mission nor an existing mission
// says otherwise: the shape of geas v1's own mission ids (mission-NNN).
const DefaultInitMission = gate.DefaultInitMission

type initOptions struct {
	mission      string
	harnesses    []string
	harnessGiven bool // --harness was given, perhaps empty
}

func newInitCmd(g *globalOptions) *cobra.Command {
	var o initOptions
	c := &cobra.Command{
		Use:   "init [--mission M] [--harness H]...",
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
implementation_change tasks.

--harness H (repeat it, or give a comma-separated list) also writes or merges the hook
configuration of an agent harness, so that it runs geas hook ... when its agent stops:

  claude    .claude/settings.json     Stop, SubagentStop, TaskCompleted, PreToolUse
  codex     .codex/hooks.json         Stop, SubagentStop
  copilot   .github/hooks/geas.json   agentStop, subagentStop
  cursor    .cursor/hooks.json        stop (loop_limit ` + fmt.Sprint(gate.CursorLoopLimit) + `)

An existing file keeps every other key and hook in its order, and an entry that already runs the
same geas hook is not added twice: a second run changes nothing and says so. A file that is not
plain JSON (comments, trailing commas, duplicate keys) or has a member of the wrong type, or a
symbolic link in its place, is refused with its path, and nothing is written.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.harnessGiven = c.Flags().Changed("harness")
			return runInit(g, o)
		},
	}
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: run.json's, the only mission, or "+DefaultInitMission+")")
	c.Flags().StringSliceVar(&o.harnesses, "harness", nil, "install the hooks of an agent harness: "+strings.Join(gate.Harnesses(), ", ")+" (repeatable, or comma-separated)")
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
	harnesses, err := harnessNames(o.harnesses, o.harnessGiven)
	if err != nil {
		return err
	}
	dir, err := initDir(g.dir)
	if err != nil {
		return err
	}
	res, err := gate.InitWithHooks(dir, o.mission, harnesses)
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

// harnessNames checks the --harness values (letter case and spaces ignored, duplicates dropped):
// an unknown or empty one is a usage error naming the harnesses, with the close ones.
func harnessNames(values []string, given bool) ([]string, error) {
	known := gate.Harnesses()
	if given && len(values) == 0 {
		return nil, usagef("--harness needs a harness: %s", strings.Join(known, ", "))
	}
	var out []string
	for _, v := range values {
		h := strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(known, h) {
			return nil, usagef("--harness %q: geas installs hooks for %s%s", v, strings.Join(known, ", "), didYouMean(closeNames(h, known)))
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
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
	hooksText(w, r.Hooks)
	fmt.Fprintf(w, "  next: geas task new --task T --criterion TEXT --eval CMD --surface GLOB\n")
}

// hooksText prints what --harness did to each harness's file, and says so when nothing changed.
func hooksText(w io.Writer, files []gate.HookFile) {
	changed := false
	for _, f := range files {
		fmt.Fprintf(w, "  %-8s %s (%s hooks)\n", f.Status, f.Path, f.Harness)
		for _, a := range f.Added {
			fmt.Fprintf(w, "    added    %s\n", a)
		}
		for _, p := range f.Present {
			fmt.Fprintf(w, "    present  %s\n", p)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
		changed = changed || f.Status != gate.HookFileUnchanged
	}
	if len(files) > 0 && !changed {
		fmt.Fprintf(w, "  hooks: nothing changed, every hook is already installed\n")
	}
}
