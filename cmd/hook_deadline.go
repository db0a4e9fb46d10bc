package cmd

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
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
		"end the gate run after this long and answer as when the gate cannot run; keep it below the timeout the harness's hook configuration gives the hook (0: no limit)")
}

// hookStall, when set, is called by a hook's decision before it starts: a hang that nothing in the
// run can cancel. Only the test binary sets it (testhook_test.go), to prove the watchdog.
var hookStall func()

// errHookWatchdog is the reason a hook answers without its run: the run neither finished nor
// stopped when its --timeout cancelled it.
type errHookWatchdog struct{ timeout time.Duration }

func (e errHookWatchdog) Error() string {
	return fmt.Sprintf("the gate run did not finish within the hook's --timeout of %s, and did not stop when cancelled "+
		"(it waits on something the hook cannot interrupt, such as a file that blocks when opened): the hook answers "+
		"without it, so that the harness does not kill the hook and let the agent go on unverified; the run is abandoned "+
		"and what it had not committed is not recorded", e.timeout)
}

// watchdogGrace is how long after --timeout the watchdog waits for a cancelled run to answer for
// itself (its eval commands are killed at --timeout; it then says so, which is the better message):
// a twentieth of the timeout, between 250 ms and 5 s.
func watchdogGrace(timeout time.Duration) time.Duration {
	return min(max(timeout/20, 250*time.Millisecond), 5*time.Second)
}

// withHookWatchdog returns decide's answer, or, when decide has not returned within timeout (plus
// watchdogGrace), onTimeout's: a hook must answer before Claude Code's own timeout kills it,
// whatever the run is doing (SPEC §9), and a run blocked in a system call does not see its
// context. decide runs in a goroutine of its own, which is left behind when the watchdog answers:
// the hook's process ends on return from Main, and the goroutine with it. decide must not write
// the hook's output; the caller writes the answer returned. A timeout of 0 means no limit.
func withHookWatchdog[T any](timeout time.Duration, decide func() (T, error), onTimeout func(error) T) (T, error) {
	type answer struct {
		v        T
		err      error
		panicked any // a panic of decide, with its stack, raised again on the caller's goroutine
	}
	done := make(chan answer, 1) // buffered: a decision that comes too late is dropped, not blocked on
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{panicked: fmt.Sprintf("%v\n%s", r, debug.Stack())}
			}
		}()
		if hookStall != nil {
			hookStall()
		}
		v, err := decide()
		done <- answer{v: v, err: err}
	}()
	var timeoutC <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout + watchdogGrace(timeout))
		defer timer.Stop()
		timeoutC = timer.C
	}
	select {
	case a := <-done:
		if a.panicked != nil {
			panic(a.panicked) // Main's exitOnPanic reports it, as when the hook ran on its goroutine
		}
		return a.v, a.err
	case <-timeoutC:
		return onTimeout(errHookWatchdog{timeout}), nil
	}
}
