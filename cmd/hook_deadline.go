package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/tiers"
)

// defaultHookTimeout bounds a hook's gate run. The plugin's hooks.json gives the Stop, SubagentStop
// and TaskCompleted hooks Claude Code's timeout of 600 s; a hook that Claude Code kills at its
// timeout is a non-blocking error, after which the agent stops or the task is marked completed
// with no verdict. An agent controls how long its tests take, so the hook ends the run itself a
// minute earlier and answers as when the gate cannot run (the stop is held, the completion
// refused).
const defaultHookTimeout = 9 * time.Minute

// addHookTimeoutFlag adds --timeout to a hook command.
func addHookTimeoutFlag(c *cobra.Command, d *time.Duration) {
	c.Flags().DurationVar(d, "timeout", defaultHookTimeout,
		"end the gate run after this long and answer as when the gate cannot run; keep it below the hook's timeout in Claude Code's settings (0: no limit)")
}

// runHookGate is gate.Run under the hook's --timeout. A run cut off by it says so: the eval
// commands were killed and nothing was written.
func runHookGate(ctx context.Context, t *taskRef, timeout time.Duration) (*tiers.Result, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := gate.Run(ctx, t.ref(), gate.Options{})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("the gate run did not finish within the hook's --timeout of %s (kept below Claude Code's hook timeout, "+
			"so that the hook answers instead of being killed): the eval commands were killed and nothing was recorded; "+
			"make them finish sooner, or raise both timeouts", timeout)
	}
	return res, err
}
