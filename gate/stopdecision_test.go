package gate

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// stopResult is a gate result with the verdict, causes and transition a stop decision reads.
func stopResult(v vocab.Verdict, mut func(r *Result)) *HookCheck {
	r := &Result{TaskID: "t1", MissionID: "m1", RunID: "gate-2", Verdict: v, NextAction: NextFix, Hash: "h"}
	if v != vocab.Verdict("pass") {
		r.Causes = []Cause{{Code: vocab.CauseEvalFailed, Check: "eval_command_1", Detail: "exited 1"}}
	}
	if mut != nil {
		mut(r)
	}
	return &HookCheck{State: vocab.Integrated, Result: r}
}

// TestEveryHarnessStopsOnTheSameRules: the decision the stop hooks of every harness share (SPEC §9),
// answered from the gate's result and the harness's "already continuing" signal. A pass lets the
// agent stop silently; a fail or an error of a new attempt holds every stop with every cause; what
// the agent cannot lift (a block, an unchanged attempt, an error that cannot be recorded) is held
// once and then let go with a message; nothing but a pass is ever a silent stop.
func TestEveryHarnessStopsOnTheSameRules(t *testing.T) {
	t.Parallel()
	task := Task{Mission: "m1", ID: "t1"}
	first, again := StopSignal{Name: "loop_count"}, StopSignal{Active: true, Name: "loop_count"}
	cases := []struct {
		name   string
		h      *HookCheck
		s      StopSignal
		block  bool
		silent bool
		text   string
	}{
		{"pass", stopResult(vocab.Verdict("pass"), nil), again, false, true, ""},
		{"fail", stopResult(vocab.VerdictFail, nil), first, true, false, "eval_failed (check eval_command_1): exited 1"},
		{"fail of a new attempt after a held stop", stopResult(vocab.VerdictFail, nil), again, true, false, "Retry budget left"},
		{"unchanged attempt, first stop", stopResult(vocab.VerdictFail, func(r *Result) { r.RepeatOf = "gate-1" }), first, true, false, "Same attempt as gate-1"},
		{"unchanged attempt after a held stop", stopResult(vocab.VerdictFail, func(r *Result) { r.RepeatOf = "gate-1" }), again, false, false, "nothing changed since gate-1; the stop is allowed because it already followed a block (loop_count)"},
		{"block", stopResult(vocab.VerdictBlock, nil), first, true, false, "not done"},
		{"block after a held stop", stopResult(vocab.VerdictBlock, nil), again, false, false, "still blocks task t1"},
		{"recorded error after a held stop", stopResult(vocab.VerdictError, nil), again, true, false, "not done"},
		{"unrecorded error after a held stop", stopResult(vocab.VerdictError, func(r *Result) { r.Hash = "" }), again, false, false, "could not be recorded"},
		{"escalated by the run", stopResult(vocab.VerdictFail, func(r *Result) {
			r.Transition = &tiers.Transition{From: vocab.Integrated, To: vocab.Escalated}
		}), first, false, false, "moved task t1 to escalated"},
		{"verified by hand, after a held stop", stopResult(vocab.VerdictError, func(r *Result) {
			r.Recheck = true
			r.Causes = []Cause{{Code: vocab.CauseStateUnverified, Check: "recorded_pass", Detail: "no gate run"}}
		}), again, true, false, "re-checked task t1, which is integrated"},
		{"state set by hand", &HookCheck{State: vocab.Cancelled, NotGated: true, Why: "no event"}, first, true, false, "nothing the gate or geas recorded backs that state"},
		{"state set by hand, after a held stop", &HookCheck{State: vocab.Cancelled, NotGated: true, Why: "no event"}, again, false, false, "(loop_count); the task is not done"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := DecideStop(task, c.h, c.s)
			assert.Equal(t, c.block, d.Block, d.Message)
			assert.Equal(t, c.silent, !d.Block && d.Message == "", "only a pass lets the agent stop without a word: %q", d.Message)
			assert.Contains(t, d.Message, c.text)
		})
	}
}

// TestAGateThatCannotRunHoldsTheFirstStopOnly: fail closed on the first stop, never a loop.
func TestAGateThatCannotRunHoldsTheFirstStopOnly(t *testing.T) {
	t.Parallel()
	err := errors.New("create .geas/x: not a directory")
	d := StopCannotRun("task t1", err, StopSignal{Name: "stop_hook_active"})
	assert.True(t, d.Block)
	assert.Contains(t, d.Message, "could not run on task t1, so the task is not verified and you may not stop yet: create .geas/x")
	d = StopCannotRun("task t1", err, StopSignal{Active: true, Name: "stop_hook_active"})
	assert.False(t, d.Block)
	assert.Contains(t, d.Message, "NOT verified")
	assert.Contains(t, d.Message, "(stop_hook_active)")
}
