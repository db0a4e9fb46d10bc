package cmd

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheHookWatchdogAnswersWhatTheRunCannot: a decision blocked where no context reaches it is
// answered by the watchdog at the timeout (plus its grace), with the reason; the honest control, a
// decision that returns, is answered with its own value, and a panic of the decision reaches the
// caller's goroutine (Main's exitOnPanic), not a crash of the process with Go's exit code 2.
func TestTheHookWatchdogAnswersWhatTheRunCannot(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	start := time.Now()
	got, err := withHookWatchdog(100*time.Millisecond,
		func() (string, error) { <-never; return "decided", nil },
		func(err error) string { return "watchdog: " + err.Error() })
	require.NoError(t, err)
	assert.Contains(t, got, "watchdog: the gate run did not finish within the hook's --timeout of 100ms")
	assert.Less(t, time.Since(start), 5*time.Second)

	got, err = withHookWatchdog(time.Minute,
		func() (string, error) { return "decided", errors.New("usage") },
		func(error) string { return "watchdog" })
	assert.Equal(t, "decided", got)
	assert.EqualError(t, err, "usage")

	got, err = withHookWatchdog(0, func() (string, error) { return "no limit", nil }, func(error) string { return "watchdog" })
	assert.Equal(t, "no limit", got)
	assert.NoError(t, err)

	func() {
		defer func() {
			r := recover()
			require.NotNil(t, r, "the decision's panic is raised again")
			assert.Contains(t, r, "boom")
		}()
		_, _ = withHookWatchdog(time.Minute, func() (string, error) { panic("boom") }, func(error) string { return "watchdog" })
	}()
}
