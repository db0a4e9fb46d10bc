package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/vocab"
)

type taskTransitionOptions struct {
	mission, task, agent, reason string
	to                           []string
}

func newTaskTransitionCmd(g *globalOptions) *cobra.Command {
	var o taskTransitionOptions
	c := &cobra.Command{
		Use:   "transition --id T --to STATE[,STATE...] [--mission M]",
		Short: "Move a task along the state machine (only geas gate moves a task to verified)",
		Long: `Move a task along the geas state machine:

  drafted      -> ready
  ready        -> implementing
  implementing -> reviewed
  reviewed     -> integrated | verified* | implementing
  integrated   -> verified* | implementing
  verified     -> passed | implementing | reviewed | integrated
  blocked      -> ready | implementing | reviewed | integrated
  escalated    -> ready | implementing | blocked
  any non-terminal state -> blocked | escalated | cancelled
  passed, cancelled: terminal

* only geas gate moves a task to verified, and only on a pass; verified -> passed only
  when the latest gate_history entry is that gate pass, gate_result matches it, and the
  history verifies.

Several states (--to ready,implementing,reviewed, or --to repeated) walk the
machine one edge at a time, in order: every edge is checked before anything is
written, then each is written and logged as its own task_transition event, as
that many single transitions would be.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskTransition(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "id", "", "task id")
	c.Flags().StringVar(&o.task, "task", "", "task id (same as --id)")
	c.Flags().StringSliceVar(&o.to, "to", nil, "target state; several (comma-separated or repeated) are walked in order")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.agent, "agent", "", "who asks for the transition (recorded in the event)")
	c.Flags().StringVar(&o.reason, "reason", "", "why (recorded in the event)")
	return c
}

func runTaskTransition(c *cobra.Command, g *globalOptions, o taskTransitionOptions) error {
	if o.task == "" {
		return usagef("--id is required")
	}
	if len(o.to) == 0 {
		return usagef("--to is required")
	}
	path := make([]vocab.State, len(o.to))
	for i, name := range o.to {
		to, err := vocab.ParseState(name)
		if err != nil {
			return &usageError{err: err}
		}
		path[i] = to
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.Transition(c.Context(), t.ref(), gate.TransitionOptions{To: path, Agent: o.agent, Reason: o.reason})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	steps := done.Steps
	return g.output(transitionOutput(t, steps), func(w io.Writer) {
		for _, st := range steps {
			fmt.Fprintf(w, "task %s: %s -> %s\n", t.task, st.From, st.To)
		}
	})
}

// transitionOutput is the JSON document of a transition: from and to of the whole walk, and its
// steps when there are several.
func transitionOutput(t *taskRef, steps []gate.TransitionStep) map[string]any {
	out := map[string]any{"mission_id": t.mission, "task_id": t.task,
		"from": string(steps[0].From), "to": string(steps[len(steps)-1].To)}
	if len(steps) > 1 {
		out["steps"] = steps
	}
	return out
}
