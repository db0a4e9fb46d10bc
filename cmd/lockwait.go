package cmd

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

// lockTimeoutEnv sets the lock timeout when --lock-timeout is not given (SPEC §10).
const lockTimeoutEnv = "GEAS_LOCK_TIMEOUT"

// setLockWait puts the task-lock wait of SPEC §7.3 into the command's context, so every path that
// takes a task lock (the gate, --all, verify --apply, budget grants, record writes, the MCP server,
// the hooks) waits the same way: it says so on stderr after a second, naming the holder's pid,
// and gives up after --lock-timeout (or $GEAS_LOCK_TIMEOUT, default 10m) with exit 3.
func (g *globalOptions) setLockWait(c *cobra.Command) error {
	timeout := gate.DefaultLockTimeout
	source := "default"
	if v := os.Getenv(lockTimeoutEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return usagef("%s=%q: want a positive duration such as 30s or 10m", lockTimeoutEnv, v)
		}
		timeout, source = d, lockTimeoutEnv
	}
	if f := c.Flags().Lookup("lock-timeout"); f != nil && f.Changed {
		if g.lockTimeout <= 0 {
			return usagef("--lock-timeout %s: want a positive duration such as 30s or 10m", g.lockTimeout)
		}
		timeout, source = g.lockTimeout, "--lock-timeout"
	}
	stderr := g.stderr
	var mu sync.Mutex // gate --all waits in several workers at once
	c.SetContext(gate.WithLockWait(c.Context(), gate.LockWait{
		Timeout: timeout,
		Waiting: func(name string, holder int) {
			who := "another process"
			if holder > 0 {
				who = fmt.Sprintf("process %d", holder)
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "geas: waiting for the task lock %s, held by %s; giving up after %s (%s)\n", name, who, timeout, source)
		},
	}))
	return nil
}
