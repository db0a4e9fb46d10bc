package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// maxHookInputBytes bounds the hook input read from stdin; Claude Code sends a few hundred bytes.
const maxHookInputBytes = 1 << 20

func newHookCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("hook", "Run the gate from an agent's lifecycle hooks")
	c.AddCommand(newHookClaudeStopCmd(g))
	return c
}

type hookOptions struct {
	mission, task string
}

func newHookClaudeStopCmd(g *globalOptions) *cobra.Command {
	var o hookOptions
	c := &cobra.Command{
		Use:   "claude-stop --task T [--mission M]",
		Short: "Claude Code Stop hook: the agent may stop only when the gate passes",
		Long: `A Claude Code Stop hook. It reads the hook's JSON from stdin, runs the gate on the task
(a recorded run, as geas gate does), and answers Claude Code on stdout, always with exit 0:

  pass                                   nothing: the agent may stop
  fail, error                            {"decision":"block","reason":...}: verdict, causes with
                                         their evidence, next action and retry budget left
  block, stop_hook_active false          {"decision":"block","reason":...}
  block, stop_hook_active true           {"systemMessage":...}: the stop is allowed, saying the gate
                                         still blocks, so a block the agent cannot lift does not loop
  task escalated or blocked              {"systemMessage":...}: allowed, not gated, saying why
  (before the run, or moved there by it)
  task verified or passed                nothing: already done, not gated again
  task cancelled                         {"systemMessage":...}: allowed, not gated

An error verdict the gate cannot count (record.json or contract.json unreadable, so three errors
in a row can never move the task to blocked) blocks only when stop_hook_active is false.
A usage mistake (unknown task, bad id, malformed hook input) exits 64 and a gate that cannot
run at all exits 3, with the error on stderr: Claude Code shows it and lets the agent stop.

In .claude/settings.json:
  {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook claude-stop --task t1"}]}]}}`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runHookClaudeStop(c.Context(), g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	return c
}

// claudeStopInput is the part of Claude Code's Stop hook input the adapter reads; other fields are
// ignored.
type claudeStopInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	StopHookActive bool   `json:"stop_hook_active"`
	HookEventName  string `json:"hook_event_name"`
}

// claudeStopOutput is the hook's answer. Claude Code continues the agent with Reason as its next
// instruction when Decision is "block"; otherwise the agent stops and SystemMessage is shown to the
// user. (A reason without a decision would be shown to nobody, so an allowed stop explains itself
// in SystemMessage.)
type claudeStopOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

func runHookClaudeStop(ctx context.Context, g *globalOptions, o hookOptions) error {
	in, err := readClaudeStopInput(g.stdin)
	if err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	// The state decides whether to gate at all. An unreadable contract is gated anyway: the run
	// reports it as an error verdict with its cause.
	c, contractErr := contract.Load(t.p.Geas, t.dir+"/contract.json")
	if contractErr == nil {
		switch record.State(c.Status) {
		case record.Verified, record.Passed:
			return nil
		case record.Escalated, record.Blocked, record.Cancelled:
			return writeJSON(g.stdout, claudeStopOutput{SystemMessage: notGatedMessage(t, record.State(c.Status))})
		}
	}
	res, err := gateTask(ctx, t, false, nil)
	if err != nil {
		return &exitError{code: 3, err: err}
	}
	out := claudeStopDecision(res, in.StopHookActive, contractErr != nil)
	if out == nil {
		return nil
	}
	return writeJSON(g.stdout, out)
}

// readClaudeStopInput decodes the hook input. Empty input (or a terminal) reads as a first stop.
func readClaudeStopInput(r io.Reader) (claudeStopInput, error) {
	var in claudeStopInput
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return in, nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, maxHookInputBytes+1))
	if err != nil {
		return in, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxHookInputBytes {
		return in, usagef("hook input exceeds %d bytes", maxHookInputBytes)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return in, nil
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, usagef("hook input is not a Claude Code hook's JSON object: %v", err)
	}
	return in, nil
}

// claudeStopDecision maps a recorded run to the hook's answer; nil lets the agent stop silently.
// fail and error block: a fail spends a retry, so the loop ends in escalation, and three errors with
// one cause move the task to blocked. A block spends nothing and may wait on something the agent
// cannot supply (a human review), so it blocks only the first stop.
func claudeStopDecision(res *tiers.Result, stopHookActive, contractUnreadable bool) *claudeStopOutput {
	if res.Verdict.IsPass() {
		return nil
	}
	if tr := res.Transition; tr != nil && (tr.To == string(record.Escalated) || tr.To == string(record.Blocked)) {
		return &claudeStopOutput{SystemMessage: fmt.Sprintf(
			"geas gate moved task %s to %s, so the agent may stop: %s", res.TaskID, tr.To, hookReport(res))}
	}
	if stopHookActive {
		switch {
		case res.Verdict == tiers.VerdictBlock:
			return &claudeStopOutput{SystemMessage: fmt.Sprintf(
				"geas gate still blocks task %s; the stop is allowed because it already followed a block (stop_hook_active), "+
					"so a block the agent cannot lift does not loop: %s", res.TaskID, hookReport(res))}
		case res.Verdict == tiers.VerdictError && (contractUnreadable || res.Hash == ""):
			return &claudeStopOutput{SystemMessage: fmt.Sprintf(
				"geas gate still errors on task %s; the stop is allowed because this error could not be recorded, "+
					"so repeated errors could never move the task to blocked: %s", res.TaskID, hookReport(res))}
		}
	}
	return &claudeStopOutput{Decision: "block", Reason: fmt.Sprintf(
		"geas gate: task %s is not done, so do not stop yet. %s\nDo the next action, then finish your turn: the gate runs again when you stop.",
		res.TaskID, hookReport(res))}
}

// hookReport is the verdict, each cause with its evidence, the next action and the budget left.
func hookReport(res *tiers.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict: %s (run %s, task %s, mission %s).\n", res.Verdict, res.RunID, res.TaskID, res.MissionID)
	if len(res.Causes) > 0 {
		b.WriteString("Causes:\n")
		for _, c := range res.Causes {
			fmt.Fprintf(&b, "- %s (check %s): %s\n", c.Code, c.Check, c.Detail)
		}
	}
	if len(res.BlockingDimensions) > 0 {
		fmt.Fprintf(&b, "Blocking rubric dimensions: %s.\n", strings.Join(res.BlockingDimensions, ", "))
	}
	fmt.Fprintf(&b, "Next action: %s.\n", hookNextAction(res))
	fmt.Fprintf(&b, "Retry budget left: %s (this run: %s -> %s; a fail spends one, at 0 the task escalates).",
		tiers.BudgetText(res.RetryBudgetAfter), tiers.BudgetText(res.RetryBudgetBefore), tiers.BudgetText(res.RetryBudgetAfter))
	if res.Escalation != "" {
		fmt.Fprintf(&b, "\nEscalation: %s.", res.Escalation)
	}
	return b.String()
}

func hookNextAction(res *tiers.Result) string {
	switch res.NextAction {
	case tiers.NextFix:
		return "fix: address the causes above"
	case tiers.NextEscalate:
		return "escalate: the retry budget is spent; an authority decides (see the pending decision)"
	case tiers.NextResolveBlock:
		return "resolve_block: supply what is missing (no retry spent)"
	case tiers.NextInvestigateErr:
		return "investigate_error: the gate could not decide; fix the cause (no retry spent; 3 errors in a row with one cause block the task)"
	}
	return res.NextAction
}

// notGatedMessage says why a stop is allowed without a gate run.
func notGatedMessage(t *taskRef, state record.State) string {
	why := map[record.State]string{
		record.Escalated: "its retry budget is spent and an authority decides what happens next (see the pending decision under .geas/missions/" + t.mission + "/decisions/pending)",
		record.Blocked:   "the gate could not decide it repeatedly; someone must resolve the cause and move it out of blocked",
		record.Cancelled: "it was cancelled",
	}[state]
	msg := fmt.Sprintf("geas gate: task %s is %s, so the hook did not gate it and the agent may stop: %s.", t.task, state, why)
	if st, err := loadTaskStatus(t); err == nil {
		msg += fmt.Sprintf(" Last verdict: %s; retry budget left: %s", orDefault(st.LastVerdict, "none"), tiers.BudgetText(st.BudgetLeft))
		if st.ConsecutiveErrors > 0 {
			msg += fmt.Sprintf("; %d errors in a row (%s)", st.ConsecutiveErrors, st.ConsecutiveErrorCause)
		}
		msg += "."
	}
	return msg
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
