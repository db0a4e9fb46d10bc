package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
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
	t, err := g.openLockedTask(c.Context(), o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	name := t.dir + "/contract.json"
	k, err := contract.Load(t.p.Geas, name)
	if err != nil {
		return err
	}
	steps, err := checkTransitionPath(t, vocab.State(k.Status), path)
	if err != nil {
		return err
	}
	raw := k.Raw
	for _, st := range steps {
		if raw, err = writeTransition(t, name, raw, st, o); err != nil {
			return err
		}
	}
	return g.output(transitionOutput(t, steps), func(w io.Writer) {
		for _, st := range steps {
			fmt.Fprintf(w, "task %s: %s -> %s\n", t.task, st.From, st.To)
		}
	})
}

// transitionStep is one edge of the state machine a transition walks.
type transitionStep struct {
	From vocab.State `json:"from"`
	To   vocab.State `json:"to"`
}

// checkTransitionPath checks every edge of from -> path[0] -> path[1] ... before anything is
// written; verified -> passed only over the gate's own pass (SPEC §8): a verified set by hand, a
// revoked pass or a forged gate_result is refused.
func checkTransitionPath(t *taskRef, from vocab.State, path []vocab.State) ([]transitionStep, error) {
	steps := make([]transitionStep, 0, len(path))
	for _, to := range path {
		if err := vocab.CheckTransition(from, to, false); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.task, err)
		}
		if to == vocab.Passed {
			in := &tiers.Input{ProjectDir: t.p.Dir, Root: t.p.Root, Geas: t.p.Geas, Mission: t.mission, Task: t.task, TaskDir: t.dir}
			_, in.Record, in.RecordErr = gate.LoadRecord(t.ref(), time.Now())
			if problems := tiers.PassProblems(in, record.SigningKey()); len(problems) > 0 {
				return nil, fmt.Errorf("task %s: %s -> passed refused: %s", t.task, from, strings.Join(problems, "; "))
			}
		}
		steps = append(steps, transitionStep{from, to})
		from = to
	}
	return steps, nil
}

// writeTransition writes one step: the contract's status (atomically), then its event. It
// returns the contract as written, for the next step.
func writeTransition(t *taskRef, name string, raw []byte, st transitionStep, o taskTransitionOptions) ([]byte, error) {
	updated, err := record.WriteContractStatus(t.p.Geas, t.dir, raw, st.To, time.Now())
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(struct {
		From   vocab.State `json:"from"`
		To     vocab.State `json:"to"`
		By     string      `json:"by,omitempty"`
		Reason string      `json:"reason,omitempty"`
	}{st.From, st.To, o.agent, o.reason})
	if err := record.AppendEvent(t.p.Geas, record.Event{
		EventType: "task_transition", MissionID: t.mission, TaskID: t.task,
		Agent: o.agent, Data: data,
	}); err != nil {
		return nil, fmt.Errorf("task moved to %s but the event was not logged: %w", st.To, err)
	}
	return updated, nil
}

// transitionOutput is the JSON document of a transition: from and to of the whole walk, and its
// steps when there are several.
func transitionOutput(t *taskRef, steps []transitionStep) map[string]any {
	out := map[string]any{"mission_id": t.mission, "task_id": t.task,
		"from": string(steps[0].From), "to": string(steps[len(steps)-1].To)}
	if len(steps) > 1 {
		out["steps"] = steps
	}
	return out
}
