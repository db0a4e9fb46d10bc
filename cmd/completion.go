package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// completeFunc is cobra's completion function type.
type completeFunc = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// registerCompletions gives flags and arguments their values in shell completion (geas completion
// bash|zsh|fish|powershell, cobra's hidden __complete): task ids of the mission, mission ids,
// the formats each command accepts, states, roles, profiles, risks, agent types and schema names.
// Ids come from the project's .geas only, and only ids that a command would accept. Run calls it
// for the completion requests alone, on the whole command tree (so every --format flag that
// addFormatFlags made is completed).
func registerCompletions(root *cobra.Command, g *globalOptions) {
	completeFormats := func(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(acceptedFormats(c), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	_ = root.RegisterFlagCompletionFunc("format", completeFormats) // the persistent flag
	byFlag := map[string]completeFunc{
		"format":   completeFormats, // the commands of commandFormats have a --format of their own
		"task":     g.completeTasks,
		"id":       g.completeTasks,
		"mission":  g.completeMissions,
		"to":       g.completeStates,
		"role":     fixed(roleNames()...),
		"profile":  fixed(string(vocab.ImplementationChange), string(vocab.ArtifactOnly), string(vocab.ClosureReady)),
		"risk":     fixed(string(vocab.RiskLow), string(vocab.RiskNormal), string(vocab.RiskHigh), string(vocab.RiskCritical)),
		"reviewer": fixed(gate.AgentTypes...),
		"worker":   fixed(gate.AgentTypes...),
		"kind":     fixed(kindNames(schemas.Kinds())...),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		local := c.LocalNonPersistentFlags() // a new flag set a call: made once a command
		for name, fn := range byFlag {
			if local.Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if c, _, err := root.Find([]string{"schema"}); err == nil && c.Name() == "schema" {
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return withPrefix(kindNames(schemas.Printable()), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// completeTasks offers the task ids of the mission (--mission, else the default mission) that
// the commands would accept: valid ids of directories with a contract.json, no symbolic links.
func (g *globalOptions) completeTasks(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	mission, _ := c.Flags().GetString("mission")
	p, mission, err := g.openMission(mission)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer p.Close()
	ids, err := p.Tasks(mission)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, id := range ids {
		if _, err := p.Task(mission, id); err == nil {
			out = append(out, id)
		}
	}
	return withPrefix(out, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeMissions offers the mission ids under .geas/missions/.
func (g *globalOptions) completeMissions(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	p, err := g.openProject()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer p.Close()
	ids, err := p.Missions()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(ids, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeStates offers the states the task given by --id (or --task) may move to by hand, or
// every state a transition may name when the task is not known. verified is never offered: only
// the gate moves a task there.
func (g *globalOptions) completeStates(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	states := vocab.States()
	task, _ := c.Flags().GetString("id")
	if task == "" {
		task, _ = c.Flags().GetString("task")
	}
	mission, _ := c.Flags().GetString("mission")
	if t, err := g.openTask(mission, task); err == nil {
		if state, err := gate.TaskState(t.ref()); err == nil {
			states = vocab.Allowed(state)
		}
		t.Close()
	}
	var out []string
	for _, s := range states {
		if s != vocab.Verified {
			out = append(out, string(s))
		}
	}
	return withPrefix(out, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func fixed(values ...string) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

func roleNames() []string {
	return []string{string(vocab.Implementer), string(vocab.Reviewer), string(vocab.Tester), string(vocab.Authority)}
}

func kindNames(kinds []schemas.Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}
