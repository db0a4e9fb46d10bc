package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type taskIntegrateOptions struct {
	mission, task, commit, branch, status string
}

func newTaskIntegrateCmd(g *globalOptions) *cobra.Command {
	var o taskIntegrateOptions
	c := &cobra.Command{
		Use:   "integrate --task T --commit REV [--branch B] [--status merged|conflict|failed|pending]",
		Short: "Write the task's integration.json: where its work was merged (validated, the commit pinned)",
		Long: `Write the task's integration.json ({status, branch, commit}, SPEC §3, §4.2): the commit the
work was merged at, which the gate takes as the integration head. REV is resolved in the
project's repository and recorded as the full SHA it names, so a branch that moves later does
not change what was integrated. The status is merged unless --status says otherwise. The write is
atomic under the task's lock; record.json is left to geas v1's sections.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskIntegrate(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.commit, "commit", "", "the integration commit (any revision git names; recorded as its full SHA)")
	c.Flags().StringVar(&o.branch, "branch", "", "the branch the work was merged into")
	c.Flags().StringVar(&o.status, "status", "merged", "merged, conflict, failed or pending")
	return c
}

func runTaskIntegrate(c *cobra.Command, g *globalOptions, o taskIntegrateOptions) error {
	if o.commit == "" {
		return usagef("--commit is required")
	}
	if !slices.Contains(gate.IntegrationStatuses, o.status) {
		return usagef("--status %q: want one of %s", o.status, strings.Join(gate.IntegrationStatuses, ", "))
	}
	if o.branch != strings.TrimSpace(o.branch) || strings.ContainsAny(o.branch, "\x00\n\r") {
		return usagef("--branch %q: a branch name has no surrounding white space or control characters", o.branch)
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.Integrate(c.Context(), t.ref(), gate.Integration{Commit: o.commit, Branch: o.branch, Status: o.status})
	g.printNotes(t.task, done.Notes)
	if done.Replaced != nil {
		fmt.Fprintf(g.stderr, "geas: task %s: replacing an integration.json that cannot be read: %v\n", t.task, done.Replaced)
	}
	if err != nil {
		return err
	}
	sha, file := done.Commit, ".geas/"+done.File
	out := map[string]string{"mission_id": t.mission, "task_id": t.task, "status": o.status, "branch": o.branch, "commit": sha, "file": file}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: integration %s at %s", t.task, o.status, sha)
		if o.branch != "" {
			fmt.Fprintf(w, " on %s", o.branch)
		}
		fmt.Fprintf(w, " (%s)\n", file)
	})
}
