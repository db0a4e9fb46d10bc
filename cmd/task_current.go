package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// annotNoEnvTask marks a command that GEAS_TASK does not stand in for: geas task current without
// --task shows the current task, and the variable must not turn that into a write.
const annotNoEnvTask = "geas/no-env-task"

type taskCurrentOptions struct {
	mission, task string
}

func newTaskCurrentCmd(g *globalOptions) *cobra.Command {
	var o taskCurrentOptions
	c := &cobra.Command{
		Use:   "current [--task T [--mission M]]",
		Short: "Set or show current_task_id of .geas/state/run.json (the task the hooks gate)",
		Long: `With --task, set current_task_id of .geas/state/run.json to T, the task the hooks gate when
neither the harness nor GEAS_TASK names one. T must be a task of the mission (an unknown id lists
the mission's tasks). Every other key of run.json is kept; a run.json without mission_id gets the
task's mission, and one naming another mission is refused. The write is atomic, under
.geas/state/run.lock. GEAS_TASK does not stand for --task here.

Without --task, print current_task_id (or say that run.json names none).`,
		Args:        noArgs,
		Annotations: map[string]string{annotNoEnvTask: "true"},
		RunE:        func(c *cobra.Command, _ []string) error { return runTaskCurrent(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "the task to make current (default: show the current task)")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	return c
}

func runTaskCurrent(c *cobra.Command, g *globalOptions, o taskCurrentOptions) error {
	if o.task == "" {
		p, err := g.openProject()
		if err != nil {
			return err
		}
		defer p.Close()
		cur, err := p.CurrentTask()
		if err != nil {
			return err
		}
		return g.output(map[string]any{"current_task_id": nullIfEmpty(cur)}, func(w io.Writer) {
			if cur == "" {
				fmt.Fprintln(w, "no current task: .geas/state/run.json names no current_task_id")
				return
			}
			fmt.Fprintln(w, cur)
		})
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.p.SetCurrentTask(c.Context(), t.mission, t.task); err != nil {
		return err
	}
	return g.output(map[string]string{"mission_id": t.mission, "current_task_id": t.task}, func(w io.Writer) {
		fmt.Fprintf(w, "current task: %s (mission %s), in .geas/state/run.json\n", t.task, t.mission)
	})
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
