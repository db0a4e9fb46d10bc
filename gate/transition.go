package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// TransitionOptions are a walk along the state machine (geas task transition).
type TransitionOptions struct {
	// To are the states walked, one edge at a time, in order.
	To []vocab.State
	// Agent and Reason are who asks for the transition and why (recorded in each event).
	Agent, Reason string
}

// TransitionStep is one edge of the state machine a transition walks.
type TransitionStep struct {
	From vocab.State `json:"from"`
	To   vocab.State `json:"to"`
}

// Transitioned is what Transition wrote.
type Transitioned struct {
	Steps []TransitionStep
	// Notes are what taking the task's lock completed or could not write (SPEC §7.3).
	Notes []string
}

// Transition moves the task along o.To under its lock: every edge is checked before anything is
// written, then each is written (the contract's status, atomically, then its task_transition
// event) as that many single transitions would be. The result is never nil: its notes stand also
// with an error.
func Transition(ctx context.Context, t Task, o TransitionOptions) (*Transitioned, error) {
	out := &Transitioned{}
	lock, notes, err := Lock(ctx, t)
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	name := t.Dir + "/" + record.ContractFile
	k, err := contract.Load(t.Project.Geas, name)
	if err != nil {
		return out, err
	}
	steps, err := checkTransitionPath(t, vocab.State(k.Status), o.To)
	if err != nil {
		return out, err
	}
	raw := k.Raw
	for _, st := range steps {
		if raw, err = writeTransition(t, raw, st, o); err != nil {
			return out, err
		}
	}
	out.Steps = steps
	return out, nil
}

// checkTransitionPath checks every edge of from -> path[0] -> path[1] ... before anything is
// written; verified -> passed only over the gate's own pass (SPEC §8): a verified set by hand, a
// revoked pass or a forged gate_result is refused.
func checkTransitionPath(t Task, from vocab.State, path []vocab.State) ([]TransitionStep, error) {
	steps := make([]TransitionStep, 0, len(path))
	for _, to := range path {
		if err := vocab.CheckTransition(from, to, false); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		if to == vocab.Passed {
			p := t.Project
			in := &tiers.Snapshot{ProjectDir: p.Dir, Root: p.Root, Geas: p.Geas, Mission: t.Mission, Task: t.ID, TaskDir: t.Dir}
			_, in.Record, in.RecordErr = LoadRecord(t, time.Now())
			if problems := tiers.PassProblems(in, record.SigningKey()); len(problems) > 0 {
				return nil, fmt.Errorf("task %s: %s -> passed refused: %s", t.ID, from, strings.Join(problems, "; "))
			}
		}
		steps = append(steps, TransitionStep{from, to})
		from = to
	}
	return steps, nil
}

// writeTransition writes one step: the contract's status (atomically), then its event. It
// returns the contract as written, for the next step.
func writeTransition(t Task, raw []byte, st TransitionStep, o TransitionOptions) ([]byte, error) {
	updated, err := record.WriteContractStatus(t.Project.Geas, t.Dir, raw, st.To, time.Now())
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(struct {
		From   vocab.State `json:"from"`
		To     vocab.State `json:"to"`
		By     string      `json:"by,omitempty"`
		Reason string      `json:"reason,omitempty"`
	}{st.From, st.To, o.Agent, o.Reason})
	if err := record.AppendEvent(t.Project.Geas, record.Event{
		EventType: record.EventTaskTransition, MissionID: t.Mission, TaskID: t.ID,
		Agent: o.Agent, Data: data,
	}); err != nil {
		return nil, fmt.Errorf("task moved to %s but the event was not logged: %w", st.To, err)
	}
	return updated, nil
}
