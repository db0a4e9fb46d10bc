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
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

type taskTransitionOptions struct {
	mission, task, to, agent, reason string
}

func newTaskTransitionCmd(g *globalOptions) *cobra.Command {
	var o taskTransitionOptions
	c := &cobra.Command{
		Use:   "transition --id T --to STATE [--mission M]",
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
  history verifies.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskTransition(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "id", "", "task id")
	c.Flags().StringVar(&o.task, "task", "", "task id (same as --id)")
	c.Flags().StringVar(&o.to, "to", "", "target state")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.agent, "agent", "", "who asks for the transition (recorded in the event)")
	c.Flags().StringVar(&o.reason, "reason", "", "why (recorded in the event)")
	return c
}

func runTaskTransition(c *cobra.Command, g *globalOptions, o taskTransitionOptions) error {
	if o.task == "" {
		return usagef("--id is required")
	}
	to, err := vocab.ParseState(o.to)
	if err != nil {
		return &usageError{err: err}
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
	from := vocab.State(k.Status)
	if err := vocab.CheckTransition(from, to, false); err != nil {
		return fmt.Errorf("task %s: %w", t.task, err)
	}
	if to == vocab.Passed {
		// verified -> passed only over the gate's own pass (SPEC §8): a verified set by hand, a
		// revoked pass or a forged gate_result is refused.
		in := &tiers.Input{ProjectDir: t.p.Dir, Root: t.p.Root, Geas: t.p.Geas, Mission: t.mission, Task: t.task, TaskDir: t.dir}
		_, in.Record, in.RecordErr = gate.LoadRecord(t.ref(), time.Now())
		if problems := tiers.PassProblems(in, record.SigningKey()); len(problems) > 0 {
			return fmt.Errorf("task %s: %s -> passed refused: %s", t.task, from, strings.Join(problems, "; "))
		}
	}
	now := time.Now()
	updated, err := record.SetContractStatus(k.Raw, to, now)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(t.p.Geas, name, updated, 0o644); err != nil {
		return err
	}
	data, _ := json.Marshal(struct {
		From   vocab.State `json:"from"`
		To     vocab.State `json:"to"`
		By     string      `json:"by,omitempty"`
		Reason string      `json:"reason,omitempty"`
	}{from, to, o.agent, o.reason})
	if err := record.AppendEvent(t.p.Geas, record.Event{
		EventType: "task_transition", MissionID: t.mission, TaskID: t.task,
		Agent: o.agent, Data: data,
	}); err != nil {
		return fmt.Errorf("task moved to %s but the event was not logged: %w", to, err)
	}
	out := map[string]string{"mission_id": t.mission, "task_id": t.task, "from": string(from), "to": string(to)}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: %s -> %s\n", t.task, from, to)
	})
}
