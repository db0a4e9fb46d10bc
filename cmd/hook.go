package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/vocab"
)

func newHookCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("hook", "Run the gate from an agent's lifecycle hooks")
	c.AddCommand(newHookClaudeStopCmd(g), newHookClaudeTaskCompletedCmd(g), newHookClaudePreToolUseCmd(g))
	return c
}

type hookOptions struct {
	mission, task string
	timeout       time.Duration // --timeout: the bound of the hook's gate run (runHookGate)
}

func newHookClaudeStopCmd(g *globalOptions) *cobra.Command {
	var o hookOptions
	c := &cobra.Command{
		Use:   "claude-stop [--task T] [--mission M]",
		Short: "Claude Code Stop and SubagentStop hook: the agent may stop only when the gate passes",
		Long: `A Claude Code Stop hook, and a SubagentStop hook with the same decisions. It reads the
hook's JSON from stdin, picks the task, runs the gate on it (a recorded run, as geas gate does), and
answers Claude Code on stdout, always with exit 0.

The project is -C's, else $GEAS_PROJECT_DIR's, else the one $CLAUDE_PROJECT_DIR names (Claude Code
sets it for every hook); only without them is it found by walking up from the hook input's cwd, and
then a .geas below the root of the git repository is refused (it may be a copy an agent planted).
The task is --task if given, else $GEAS_TASK, else current_task_id of .geas/state/run.json; the
mission is --mission, else $GEAS_MISSION, else the project's default. With no task at all the stop
is allowed with a systemMessage saying that the gate did not run. Agents write run.json, so an agent
can point it at a task that passes: a pass of a task chosen from run.json is answered with a
systemMessage naming the task; set $GEAS_TASK where Claude Code starts to pin a session's task.

It never trusts a state it did not verify:

  pass                                   nothing: the agent may stop
  fail, error                            {"decision":"block","reason":...}: verdict, causes with
                                         their evidence, next action and retry budget left
  block, stop_hook_active false          {"decision":"block","reason":...}
  block, stop_hook_active true           {"systemMessage":...}: the stop is allowed, saying the gate
                                         still blocks, so a block the agent cannot lift does not loop
  run moved the task to escalated or     {"systemMessage":...}: allowed, with the verdict
  blocked
  task verified or passed                re-checked as geas gate verify does (nothing written):
                                         the pass holds: nothing, the agent may stop; it does not
                                         hold: {"decision":"block"} with the causes, on every stop
                                         for a verified task (geas gate verify --apply or geas task
                                         transition is the way out), on the first stop only for a
                                         passed one (terminal) or a fresh block
  task escalated, blocked or cancelled   allowed with a systemMessage only when the state is
                                         backed: escalated by a gate fail that spent the last
                                         retry, blocked by as many error runs with one cause as
                                         the consecutive-error limit, cancelled by a task_transition
                                         event of geas task transition; a state set by hand holds
                                         the first stop and allows the next
  the gate cannot run at all             {"decision":"block"} with the error on the first stop;
  (the task cannot be opened, a lock or  {"systemMessage":...} on the next (stop_hook_active):
  log directory cannot be created)       fail closed, but never a loop

An error verdict the gate cannot count (record.json or contract.json unreadable, so three errors
in a row can never move the task to blocked) blocks only when stop_hook_active is false.
stop_hook_active is read leniently (true, "true", 1, "yes"; a value it cannot read counts as true,
which only ever relaxes a block, never a fail). A mistake in the hook's own configuration (an
invalid id in --task, --mission, $GEAS_TASK or $GEAS_MISSION, hook input that is not a JSON object)
exits 64 with the error on stderr: Claude Code shows it and lets the agent stop.

In .claude/settings.json (or install the plugin of this repository, which registers it):
  {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook claude-stop", "timeout": 600}]}],
   "SubagentStop": [{"matcher": "software-engineer", "hooks": [{"type": "command",
     "command": "geas hook claude-stop", "timeout": 600}]}]}}
Give the hook a timeout above --timeout (9m by default): Claude Code lets the agent go on when it
kills a hook at its timeout.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runHookClaudeStop(c.Context(), g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id (default: $GEAS_TASK, else current_task_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: $GEAS_MISSION, else mission_id of .geas/state/run.json)")
	addHookTimeoutFlag(c, &o.timeout)
	return c
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
	in, err := readHookInput(g.stdin)
	if err != nil {
		return err
	}
	out, err := withHookWatchdog(o.timeout, func() (*claudeStopOutput, error) { return decideClaudeStop(ctx, g, o, in) },
		func(err error) *claudeStopOutput { return claudeStopCannotRun(hookWhat(o), err, in.StopHookActive) })
	if err != nil || out == nil {
		return err
	}
	return writeJSON(g.stdout, out)
}

// hookWhat names the task a hook gates before it has read the project: --task, else GEAS_TASK.
func hookWhat(o hookOptions) string {
	if o.task != "" {
		return "task " + o.task
	}
	if env := os.Getenv(envHookTask); env != "" {
		return "task " + env
	}
	return "the hook's task"
}

// decideClaudeStop is the Stop hook's answer (nil: the agent may stop), or a usage error.
func decideClaudeStop(ctx context.Context, g *globalOptions, o hookOptions, in hookInput) (*claudeStopOutput, error) {
	if err := g.pinHookProject(in); err != nil {
		return claudeStopCannotRun(hookWhat(o), err, in.StopHookActive), nil
	}
	// A hook configured with an id that can never be valid (--task, GEAS_TASK, --mission,
	// GEAS_MISSION) is a setup mistake that no agent can cause by writing files: a usage error.
	// Everything after this point reads the project, which agents write, so a failure there holds
	// the first stop (claudeStopCannotRun).
	target, err := g.selectHookTask(o, in, false)
	if err != nil {
		return nil, err
	}
	var out *claudeStopOutput
	switch {
	case target.err != nil:
		out = claudeStopCannotRun(target.label(), target.err, in.StopHookActive)
	case target.task == "":
		out = &claudeStopOutput{SystemMessage: noTaskMessage(target, "the stop is allowed")}
	default:
		out = claudeStop(ctx, g, hookOptions{mission: target.mission, task: target.task, timeout: o.timeout}, in.StopHookActive)
		if out == nil && target.source == sourceRunJSON {
			// The agent may stop; say which task let it, since agents write run.json.
			out = &claudeStopOutput{SystemMessage: fmt.Sprintf("geas gate: task %s passes, so the stop is allowed. %s", target.task, runJSONPinText)}
		}
	}
	return out, nil
}

// runJSONPinText follows a pass of a task that a hook chose from run.json: agents write run.json,
// so an agent can point current_task_id at a task that passes; the user sees which task it was.
const runJSONPinText = "The task was chosen from .geas/state/run.json current_task_id, which agents write: " +
	"if this is not the task the session was to finish, set " + envHookTask + " (or pass --task to the hook) to pin it."

// noTaskMessage says that the gate did not run because no task was found, and where the hook looked.
func noTaskMessage(t hookTarget, allowed string) string {
	msg := fmt.Sprintf("geas gate did not run, so no task was verified: no task to gate (%s); %s. "+
		"To gate a task, set %s in Claude Code's environment, set current_task_id in .geas/state/run.json, or pass --task to the hook.",
		t.why, allowed, envHookTask)
	for _, n := range t.notes {
		msg += " Note: " + n + "."
	}
	return msg
}

// claudeStop decides the hook's answer. It trusts no state it did not verify (SPEC §9): a
// verified or passed task is re-checked, an escalated, blocked or cancelled task lets the agent
// stop only when that state is backed (gate.StateBacking), every other task is gated, and a gate
// that cannot run holds the first stop.
func claudeStop(ctx context.Context, g *globalOptions, o hookOptions, active bool) *claudeStopOutput {
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return claudeStopCannotRun("task "+o.task, err, active)
	}
	defer t.Close()
	h, err := gate.HookGate(ctx, t.ref(), gate.HookOptions{Timeout: o.timeout})
	switch {
	case err != nil:
		return claudeStopCannotRun("task "+t.task, err, active)
	case h.NotGated && !h.Backed:
		return claudeStopUnbacked(t.task, h.State, h.Why, active)
	case h.NotGated:
		return &claudeStopOutput{SystemMessage: notGatedMessage(t, h.State) + " Backed: " + h.Why + "."}
	case h.Result.Recheck:
		return claudeStopRecheck(h.Result, h.RecheckState(), active)
	}
	return claudeStopDecision(h.Result, active, h.ContractErr != nil)
}

// claudeStopCannotRun answers when the gate cannot run at all (a task that cannot be opened, a
// lock or log directory that cannot be created): fail closed, but never a loop. The first stop is
// blocked with the error as the reason; the next one, which Claude Code marks stop_hook_active,
// is allowed with a systemMessage saying the task was not gated.
func claudeStopCannotRun(what string, err error, active bool) *claudeStopOutput {
	if active {
		return &claudeStopOutput{SystemMessage: fmt.Sprintf(
			"geas gate could not run on %s, so the task is NOT verified: %v. The stop is allowed because the previous stop "+
				"was already held for this (stop_hook_active), so the hook never loops; fix the cause and run geas gate.", what, err)}
	}
	return &claudeStopOutput{Decision: "block", Reason: fmt.Sprintf(
		"geas gate could not run on %s, so the task is not verified and you may not stop yet: %v.\n"+
			"Fix the cause if it is in your reach (for example a file or directory in the way under .geas), then finish your turn: "+
			"the gate runs again when you stop. If you cannot fix it, say so; the next stop is allowed.", what, err)}
}

// claudeStopUnbacked answers for an escalated, blocked or cancelled task whose state the records
// do not back (set by hand): the state is not taken on trust, so the first stop is held with what
// was checked; the next is allowed with a systemMessage (an authority may have set it for a
// reason of its own, and the hook must not loop).
func claudeStopUnbacked(task string, state vocab.State, why string, active bool) *claudeStopOutput {
	if active {
		return &claudeStopOutput{SystemMessage: fmt.Sprintf(
			"geas gate: task %s is %s, but nothing the gate or geas recorded backs that state: %s. The stop is allowed because "+
				"the previous stop was already held for this (stop_hook_active); the task is not done.", task, state, why)}
	}
	return &claudeStopOutput{Decision: "block", Reason: fmt.Sprintf(
		"geas gate: task %s is %s, but nothing the gate or geas recorded backs that state: %s.\n"+
			"A state set by hand does not end the work: move the task back to where it was (geas task transition) and let the gate "+
			"judge it, or, if an authority set it, say so and finish your turn.", task, state, why)}
}

// claudeStopRecheck answers for a verified or passed task, re-checked as geas gate verify does.
// A pass that holds lets the agent stop silently. One that does not holds the stop. For a verified
// task whose records do not back the state (state_unverified: verified set by hand) or whose fresh
// verdict is a fail or an error, every stop is held: the way out is in the agent's reach (geas
// gate verify --apply, or geas task transition back to the gate state) and leads to gate runs
// whose budget ends the loop. A passed task (terminal: no geas command moves it back) and a fresh
// block are held on the first stop only, as a block is, so that what the agent cannot lift does
// not loop; the systemMessage of the allowed stop says the pass is not valid.
func claudeStopRecheck(res *gate.Result, state string, active bool) *claudeStopOutput {
	if res.Verdict.IsPass() {
		return nil
	}
	unbacked := false
	for _, c := range res.Causes {
		if c.Code == vocab.CauseStateUnverified {
			unbacked = true
		}
	}
	report := fmt.Sprintf("geas gate re-checked task %s, which is %s, and the pass does not hold. %s", res.TaskID, state, hookReport(res))
	for _, n := range res.Notes {
		report += "\nNote: " + n
	}
	// A re-check refused before anything ran (the signing key would be exposed) is the setup's,
	// not the agent's to lift: held once, as a block is.
	soft := state == string(vocab.Passed) || (!unbacked && res.Verdict == vocab.VerdictBlock) || res.Refused()
	if active && soft {
		return &claudeStopOutput{SystemMessage: report + "\nThe stop is allowed because the previous stop was already held for this " +
			"(stop_hook_active), so what the agent cannot lift does not loop; the pass is not valid."}
	}
	return &claudeStopOutput{Decision: "block", Reason: report + "\nDo not stop yet: do the next action, then finish your turn."}
}

// claudeStopDecision maps a recorded run to the hook's answer; nil lets the agent stop silently.
// fail and error block: a fail spends a retry, so the loop ends in escalation, and three errors with
// one cause move the task to blocked. A block spends nothing and may wait on something the agent
// cannot supply (a human review), so it blocks only the first stop.
func claudeStopDecision(res *gate.Result, stopHookActive, contractUnreadable bool) *claudeStopOutput {
	if res.Verdict.IsPass() {
		return nil
	}
	if tr := res.Transition; tr != nil && (tr.To == vocab.Escalated || tr.To == vocab.Blocked) {
		return &claudeStopOutput{SystemMessage: fmt.Sprintf(
			"geas gate moved task %s to %s, so the agent may stop: %s", res.TaskID, tr.To, hookReport(res))}
	}
	if stopHookActive {
		switch {
		case res.Verdict == vocab.VerdictBlock:
			return &claudeStopOutput{SystemMessage: fmt.Sprintf(
				"geas gate still blocks task %s; the stop is allowed because it already followed a block (stop_hook_active), "+
					"so a block the agent cannot lift does not loop: %s", res.TaskID, hookReport(res))}
		case res.RepeatOf != "":
			// SPEC §7.1: the same attempt spends nothing, so no budget would ever end this loop;
			// the fail stands (the task is not verified) and the stop it already held is allowed.
			return &claudeStopOutput{SystemMessage: fmt.Sprintf(
				"geas gate still fails task %s and nothing changed since %s; the stop is allowed because it already followed a block (stop_hook_active), "+
					"so an unchanged attempt does not loop; the task is not done: %s", res.TaskID, res.RepeatOf, hookReport(res))}
		case res.Verdict == vocab.VerdictError && (contractUnreadable || res.Hash == ""):
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
func hookReport(res *gate.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Verdict: %s (run %s, task %s, mission %s).\n", res.Verdict, res.RunID, res.TaskID, res.MissionID)
	if res.RepeatOf != "" {
		fmt.Fprintf(&b, "Same attempt as %s: nothing changed since; nothing run, no retry spent. Change the work, the evidence or the rules before the gate runs again.\n", res.RepeatOf)
	}
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
		gate.BudgetText(res.RetryBudgetAfter), gate.BudgetText(res.RetryBudgetBefore), gate.BudgetText(res.RetryBudgetAfter))
	if res.Escalation != "" {
		fmt.Fprintf(&b, "\nEscalation: %s.", res.Escalation)
	}
	return b.String()
}

func hookNextAction(res *gate.Result) string {
	switch res.NextAction {
	case gate.NextFix:
		return "fix: address the causes above"
	case gate.NextEscalate:
		return "escalate: the retry budget is spent; an authority decides (see the pending decision)"
	case gate.NextResolveBlock:
		return "resolve_block: supply what is missing (no retry spent)"
	case gate.NextInvestigateErr:
		if res.NextCommand != "" {
			return "investigate_error: the task is not in a state the gate judges; run " + res.NextCommand + " (no retry spent)"
		}
		return "investigate_error: the gate could not decide; fix the cause (no retry spent; 3 errors in a row with one cause block the task)"
	case gate.NextRevoke:
		return fmt.Sprintf("revoke: the pass no longer holds; geas gate verify --apply --task %s records that (and moves a verified task back), then fix the causes", res.TaskID)
	}
	return res.NextAction
}

// notGatedMessage says why a stop is allowed without a gate run.
func notGatedMessage(t *taskRef, state vocab.State) string {
	why := map[vocab.State]string{
		vocab.Escalated: "its retry budget is spent and an authority decides what happens next (see the pending decision under .geas/missions/" + t.mission + "/decisions/pending)",
		vocab.Blocked:   "the gate could not decide it repeatedly; someone must resolve the cause and move it out of blocked",
		vocab.Cancelled: "it was cancelled",
	}[state]
	msg := fmt.Sprintf("geas gate: task %s is %s, so the hook did not gate it and the agent may stop: %s.", t.task, state, why)
	if st, err := loadTaskStatus(t); err == nil {
		msg += fmt.Sprintf(" Last verdict: %s; retry budget left: %s", orDefault(st.LastVerdict, "none"), gate.BudgetText(st.BudgetLeft))
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
