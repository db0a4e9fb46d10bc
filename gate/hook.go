package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// HookOptions are the choices of a hook's gate run.
type HookOptions struct {
	// Timeout bounds the gate run (0: no limit): a run cut off by it kills its eval commands,
	// writes nothing, and is an error that says so.
	Timeout time.Duration
	// Agent is the agent the hook input names as stopping; when it names one, an agent_stop
	// event records it with the gate's answer (logAgentStop).
	Agent StopAgent
}

// HookCheck is what the agent hooks answer from (SPEC §9): the task's state as its contract
// names it and, unless that state ends the work without a gate run, the run's result.
type HookCheck struct {
	// State is the contract's status; "" when the contract cannot be read (ContractErr).
	State       vocab.State
	ContractErr error
	// NotGated: the task is escalated, blocked or cancelled, so the gate did not run; Backed says
	// whether the records back that state (StateBacking) and Why what was checked.
	NotGated bool
	Backed   bool
	Why      string
	// Result is the gate run (a re-check for a verified or passed task) when the gate ran.
	Result *Result
}

// RecheckState is the state a re-checked task is in: the contract's, or verified when the
// contract could not be read.
func (h *HookCheck) RecheckState() string {
	if h.ContractErr != nil || h.State == "" {
		return string(vocab.Verified)
	}
	return string(h.State)
}

// HookGate applies the state rules both hooks share, and trusts no state it did not verify: an
// escalated, blocked or cancelled task is not gated, and the answer says whether its state is
// backed (StateBacking); a verified or passed task is re-checked (Run, nothing written); every
// other task is gated, a recorded run, as geas gate does. An unreadable contract is gated anyway:
// the run reports it as an error verdict with its cause. An error means the gate could not run.
func HookGate(ctx context.Context, t Task, o HookOptions) (*HookCheck, error) {
	h := &HookCheck{}
	c, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	if err != nil {
		h.ContractErr = err
	} else {
		h.State = c.Status
		switch h.State {
		case vocab.Escalated, vocab.Blocked, vocab.Cancelled:
			h.NotGated = true
			h.Backed, h.Why = StateBacking(tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir), h.State)
			logAgentStop(t, o.Agent, h)
			return h, nil
		}
	}
	if h.Result, err = runHookGate(ctx, t, o.Timeout); err != nil {
		return nil, err
	}
	logAgentStop(t, o.Agent, h)
	return h, nil
}

// runHookGate is Run under the hook's timeout. A run cut off by it says so: the eval commands were
// killed and nothing was written.
func runHookGate(ctx context.Context, t Task, timeout time.Duration) (*Result, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := Run(ctx, t, Options{})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("the gate run did not finish within the hook's --timeout of %s (kept below Claude Code's hook timeout, "+
			"so that the hook answers instead of being killed): the eval commands were killed and nothing was recorded; "+
			"make them finish sooner, or raise both timeouts", timeout)
	}
	return res, err
}
