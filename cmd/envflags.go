package cmd

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/project"
)

// GEAS_TASK and GEAS_MISSION stand for --task and --mission in every command (SPEC §9), so that a
// session that works on one task names it once, where it starts.
const (
	envTask    = envHookTask
	envMission = envHookMission
)

// envFlag is a flag an environment variable stands for: the flags that, given, name the same
// thing (--task and --id of geas task transition), and the id kind the value must be.
type envFlag struct {
	env   string
	kind  string
	flags []string
}

var envFlags = []envFlag{
	{env: envMission, kind: "mission", flags: []string{"mission"}},
	{env: envTask, kind: "task", flags: []string{"task", "id"}},
}

// applyEnvFlags sets c's --task (or --id) and --mission from GEAS_TASK and GEAS_MISSION when the
// command line gives neither and the variable is set. A flag given wins; --all (geas gate, geas
// gate verify) names every task, so GEAS_TASK is not used with it; the hooks read both variables
// themselves, after sources of their own (cmd/hook_select.go). A value that is not a valid id is
// a usage error that names the variable, as a bad flag value names the flag.
func applyEnvFlags(c *cobra.Command) error {
	if isHookCmd(c) {
		return nil
	}
	values := map[string]string{envMission: os.Getenv(envMission), envTask: os.Getenv(envTask)}
	for _, ef := range envFlags {
		v := values[ef.env]
		if v == "" {
			continue
		}
		target := ""
		given := false
		for _, name := range ef.flags {
			if f := c.Flags().Lookup(name); f != nil {
				given = given || f.Changed
				if target == "" {
					target = name
				}
			}
		}
		if target == "" || given {
			continue
		}
		if all := c.Flags().Lookup("all"); ef.env == envTask && all != nil && all.Changed {
			continue
		}
		if ef.env == envTask && c.Annotations[annotNoEnvTask] != "" {
			continue
		}
		if err := project.ValidateID(ef.kind, v); err != nil {
			return usagef("%s: %v", ef.env, err)
		}
		if err := c.Flags().Set(target, v); err != nil {
			return usagef("%s: %v", ef.env, err)
		}
	}
	return nil
}

// isHookCmd reports whether c is a command under geas hook.
func isHookCmd(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "hook" && p.Parent() != nil && !p.Parent().HasParent() {
			return true
		}
	}
	return false
}

// describeEnvFlags adds the variable to the help of each flag it stands for, in c and its
// subcommands: "task id (default: $GEAS_TASK)", "mission id (default: $GEAS_MISSION, else ...)".
// The hooks' flags say so already, in their own order.
func describeEnvFlags(c *cobra.Command) {
	for _, ef := range envFlags {
		for _, name := range ef.flags {
			f := c.Flags().Lookup(name)
			if f == nil || strings.Contains(f.Usage, "$"+ef.env) {
				continue
			}
			if before, after, ok := strings.Cut(f.Usage, "(default: "); ok {
				f.Usage = before + "(default: $" + ef.env + ", else " + after
			} else {
				f.Usage += " (default: $" + ef.env + ")"
			}
		}
	}
	for _, sc := range c.Commands() {
		describeEnvFlags(sc)
	}
}
