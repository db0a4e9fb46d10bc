package cmd

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

func newHookCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("hook", "Run the gate from an agent's lifecycle hooks")
	c.AddCommand(newHookClaudeStopCmd(g), newHookClaudeTaskCompletedCmd(g), newHookClaudePreToolUseCmd(g))
	c.AddCommand(newHookCodexStopCmd(g), newHookCopilotStopCmd(g), newHookCursorStopCmd(g))
	return c
}

type hookOptions struct {
	mission, task string
	timeout       time.Duration  // --timeout: the bound of the hook's gate run (runHookGate)
	agent         gate.StopAgent // the agent the hook input names as stopping (hookStopAgent)
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
		out = claudeStop(ctx, g, hookOptions{mission: target.mission, task: target.task, timeout: o.timeout, agent: hookStopAgent(in)}, in.StopHookActive)
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
	return noTaskMessageIn(t, allowed, "Claude Code")
}

// noTaskMessageIn is noTaskMessage for the hook of the named harness.
func noTaskMessageIn(t hookTarget, allowed, harness string) string {
	msg := fmt.Sprintf("geas gate did not run, so no task was verified: no task to gate (%s); %s. "+
		"To gate a task, set %s in %s's environment, run geas task current --task T (it sets current_task_id in .geas/state/run.json), or pass --task to the hook.",
		t.why, allowed, envHookTask, harness)
	for _, n := range t.notes {
		msg += " Note: " + n + "."
	}
	return msg
}

// claudeStop decides the hook's answer (gate.DecideStop). It trusts no state it did not verify
// (SPEC §9): a verified or passed task is re-checked, an escalated, blocked or cancelled task lets
// the agent stop only when that state is backed (gate.StateBacking), every other task is gated,
// and a gate that cannot run holds the first stop.
func claudeStop(ctx context.Context, g *globalOptions, o hookOptions, active bool) *claudeStopOutput {
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return claudeStopCannotRun("task "+o.task, err, active)
	}
	defer t.Close()
	h, err := gate.HookGate(ctx, t.ref(), gate.HookOptions{Timeout: o.timeout, Agent: o.agent})
	if err != nil {
		return claudeStopCannotRun("task "+t.task, err, active)
	}
	return claudeStopAnswer(gate.DecideStop(t.ref(), h, claudeSignal(active)))
}

// claudeSignal is Claude Code's "already continuing" signal: the hook input's stop_hook_active.
func claudeSignal(active bool) gate.StopSignal {
	return gate.StopSignal{Active: active, Name: "stop_hook_active"}
}

// claudeStopCannotRun answers when the gate cannot run at all (gate.StopCannotRun): the first
// stop is blocked with the error as the reason; the next one, which Claude Code marks
// stop_hook_active, is allowed with a systemMessage saying the task was not gated.
func claudeStopCannotRun(what string, err error, active bool) *claudeStopOutput {
	return claudeStopAnswer(gate.StopCannotRun(what, err, claudeSignal(active)))
}

// claudeStopAnswer writes a decision in Claude Code's shape: a held stop is {"decision":"block",
// "reason":...}, an allowed stop with a message is {"systemMessage":...}, a silent one is nothing
// (nil).
func claudeStopAnswer(d gate.StopDecision) *claudeStopOutput {
	switch {
	case d.Block:
		return &claudeStopOutput{Decision: "block", Reason: d.Message}
	case d.Message != "":
		return &claudeStopOutput{SystemMessage: d.Message}
	}
	return nil
}
