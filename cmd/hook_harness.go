package cmd

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

// stopHarness is one agent harness's stop hook: how its input is read and its answer written.
// The decisions are the Claude Stop hook's (gate.DecideStop, gate.StopCannotRun), with the loop
// cap of gate.HarnessStop.
type stopHarness struct {
	use, name string
	env       projectEnv // the variable the harness names the project in for its hooks, if any
	read      func(map[string]any) (harnessStopInput, error)
	write     func(stdout, stderr io.Writer, d gate.StopDecision) error
}

var (
	codexHarness = stopHarness{use: "codex-stop", name: "Codex CLI", read: readCodexStop, write: writeCodexStop}
	// GitHub Copilot names no project directory for hooks (the cloud agent's is /workspace, its cwd).
	copilotHarness = stopHarness{use: "copilot-stop", name: "GitHub Copilot", read: readCopilotStop, write: writeCopilotStop}
	cursorHarness  = stopHarness{use: "cursor-stop", name: "Cursor",
		env:  projectEnv{envCursorProjectDir, "Cursor sets it for every hook", func() string { return os.Getenv(envCursorProjectDir) }},
		read: readCursorStop, write: writeCursorStop}
)

// writeCodexStop answers Codex CLI (stop.command.output.schema.json, exit 0): a held stop is
// {"decision":"block","reason":...}, whose reason Codex gives the agent as its next prompt; an
// allowed stop with a message is {"systemMessage":...}, shown to the user; a silent one is {}
// (Codex reads empty stdout as no decision too, but {} is valid under every reading).
func writeCodexStop(stdout, _ io.Writer, d gate.StopDecision) error {
	switch {
	case d.Block:
		return writeJSON(stdout, map[string]string{"decision": "block", "reason": d.Message})
	case d.Message != "":
		return writeJSON(stdout, map[string]string{"systemMessage": d.Message})
	}
	return writeJSON(stdout, map[string]string{})
}

// writeCopilotStop answers GitHub Copilot ("agentStop / subagentStop decision control", exit 0:
// exit 2 alone only warns and the agent stops): a held stop is {"decision":"block","reason":...},
// whose reason is the prompt of the agent's next turn; an allowed stop is {"decision":"allow"}.
// The stop output has no field for the user, so an allowed stop's message goes to stderr, which
// the CLI logs.
func writeCopilotStop(stdout, stderr io.Writer, d gate.StopDecision) error {
	if d.Block {
		return writeJSON(stdout, map[string]string{"decision": "block", "reason": d.Message})
	}
	if d.Message != "" {
		fmt.Fprintln(stderr, d.Message)
	}
	return writeJSON(stdout, map[string]string{"decision": "allow"})
}

// writeCursorStop answers Cursor (stop output, exit 0): a held stop is {"followup_message":...},
// which Cursor submits as the next user message (up to the hook's loop_limit); an allowed stop is
// {}. The stop output has no field for the user, so an allowed stop's message goes to stderr,
// which Cursor shows in its hooks output.
func writeCursorStop(stdout, stderr io.Writer, d gate.StopDecision) error {
	if d.Block {
		return writeJSON(stdout, map[string]string{"followup_message": d.Message})
	}
	if d.Message != "" {
		fmt.Fprintln(stderr, d.Message)
	}
	return writeJSON(stdout, map[string]string{})
}

func newHookHarnessStopCmd(g *globalOptions, h stopHarness, long string) *cobra.Command {
	var o hookOptions
	c := &cobra.Command{
		Use:   h.use + " [--task T] [--mission M]",
		Short: h.name + " stop hook: the agent may stop only when the gate passes",
		Long:  long + "\n\n" + harnessStopCommon,
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runHookHarnessStop(c.Context(), g, o, h)
		},
	}
	c.Flags().StringVar(&o.task, "task", "", "task id (default: $GEAS_TASK, else current_task_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: $GEAS_MISSION, else mission_id of .geas/state/run.json)")
	addHookTimeoutFlag(c, &o.timeout)
	return c
}

// harnessStopCommon is the part of the help the three stop hooks share.
const harnessStopCommon = `The decisions are those of geas hook claude-stop (see its --help): pass lets the agent stop;
fail and error hold the stop with the verdict, every cause with its evidence, the next action and
the retry budget left; a block, a state set by hand and a gate that cannot run hold the first stop
and let the next one go with a message; a verified or passed task is re-checked. The harness's
"already continuing" signal stands for Claude Code's stop_hook_active. Where the harness caps no
loop of its own, the hook does: the 8th stop in a row held on an unchanged attempt (the same
verdict on the same head, inputs and rules) is allowed, with a message that the task is NOT
verified; the count is kept in .geas/state/hook-stops/ (agents can write it, which can only make
the hook let go sooner, never pass). A changed attempt starts a new count and spends its retry as
any gate run does, so the budget ends a loop that keeps changing things.

The project is -C's, else $GEAS_PROJECT_DIR's, else the harness's project variable (if it has
one), else the one found from the input's directory, refused when it is below the root of its git
repository (a .geas an agent may have planted). The task is --task, else $GEAS_TASK, else
current_task_id of .geas/state/run.json. A mistake in the hook's own configuration (an invalid id,
input that is not a JSON object, an event that is not a stop) exits 64 with the error on stderr.`

func runHookHarnessStop(ctx context.Context, g *globalOptions, o hookOptions, h stopHarness) error {
	obj, oversize, err := readHarnessObject(g.stdin, h.name)
	if err != nil {
		return err
	}
	in, err := h.read(obj)
	if err != nil {
		return err
	}
	in.Oversize = oversize
	sig := gate.StopSignal{Active: in.Active, Name: in.ActiveName}
	d, err := withHookWatchdog(o.timeout, func() (gate.StopDecision, error) { return decideHarnessStop(ctx, g, o, in, h) },
		func(err error) gate.StopDecision { return gate.StopCannotRun(hookWhat(o), err, sig) })
	if err != nil {
		return err
	}
	return h.write(g.stdout, g.stderr, d)
}

// decideHarnessStop is a harness's stop hook's decision, or a usage error.
func decideHarnessStop(ctx context.Context, g *globalOptions, o hookOptions, in harnessStopInput, h stopHarness) (gate.StopDecision, error) {
	sig := gate.StopSignal{Active: in.Active, Name: in.ActiveName}
	if in.Aborted {
		// The user stopped the agent: a follow-up would override them.
		return gate.StopDecision{Message: fmt.Sprintf("geas gate did not run: %s reports the agent was aborted (status aborted), "+
			"so the hook does not continue it; the task is not verified by this stop.", h.name)}, nil
	}
	if err := g.pinProjectFrom(h.env, in.Cwd); err != nil {
		return gate.StopCannotRun(hookWhat(o), err, sig), nil
	}
	// As for Claude Code: an id in the hook's configuration that can never be valid is a usage
	// error; what is read from the project (which agents write) holds the first stop instead.
	target, err := g.selectHookTask(o, hookInput{}, false)
	if err != nil {
		return gate.StopDecision{}, err
	}
	switch {
	case target.err != nil:
		return gate.StopCannotRun(target.label(), target.err, sig), nil
	case target.task == "":
		return gate.StopDecision{Message: noTaskMessageIn(target, "the stop is allowed", h.name)}, nil
	}
	t, err := g.openTask(target.mission, target.task)
	if err != nil {
		return gate.StopCannotRun("task "+target.task, err, sig), nil
	}
	defer t.Close()
	d := gate.HarnessStop(ctx, t.ref(), gate.StopOptions{
		HookOptions: gate.HookOptions{Timeout: o.timeout, Agent: in.Agent},
		Signal:      sig, SignalKnown: in.ActiveKnown, Stops: in.Stops, Session: in.Session,
	})
	if !d.Block && d.Message == "" && target.source == sourceRunJSON {
		// The agent may stop; say which task let it, since agents write run.json.
		d.Message = fmt.Sprintf("geas gate: task %s passes, so the stop is allowed. %s", target.task, runJSONPinText)
	}
	return d, nil
}

func newHookCodexStopCmd(g *globalOptions) *cobra.Command {
	return newHookHarnessStopCmd(g, codexHarness, `An OpenAI Codex CLI Stop hook, and a SubagentStop hook with the same decisions (the event
is read from the input's hook_event_name). It reads the hook's JSON from stdin (cwd,
stop_hook_active), picks the task, runs the gate on it (a recorded run, as geas gate does), and
answers Codex on stdout, always with exit 0:

  the agent may stop                    {}
  allowed, with a message               {"systemMessage":...}
  held                                  {"decision":"block","reason":...}: Codex continues the
                                        agent with the reason as its next prompt

Codex has no cap on consecutive blocks, so the hook's own loop cap applies. Codex names no
project directory for hooks: set GEAS_PROJECT_DIR, or the project is found from the input's cwd.

In .codex/hooks.json:
  {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "geas hook codex-stop", "timeout": 600}]}],
   "SubagentStop": [{"hooks": [{"type": "command", "command": "geas hook codex-stop", "timeout": 600}]}]}}`)
}

func newHookCopilotStopCmd(g *globalOptions) *cobra.Command {
	return newHookHarnessStopCmd(g, copilotHarness, `A GitHub Copilot (CLI and cloud agent) agentStop hook, and a subagentStop hook with the same
decisions. It reads the hook's JSON from stdin in either of Copilot's shapes (camelCase for
agentStop/subagentStop, snake_case for the VS Code compatible Stop/SubagentStop), picks the task,
runs the gate on it (a recorded run, as geas gate does), and answers on stdout, always with exit 0
(Copilot takes exit 2 as a warning only, and the agent stops):

  the agent may stop                    {"decision":"allow"} (a message, if any, on stderr)
  held                                  {"decision":"block","reason":...}: the reason is the
                                        prompt of the agent's next turn

Copilot ends a turn after 8 consecutive blocks without saying why; the hook lets go at the 8th
stop itself, with its message. A subagentStop input has no stop_hook_active: the hook's own count
of the stops it held on the attempt stands in.

In .github/hooks/geas.json:
  {"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "geas hook copilot-stop", "timeoutSec": 600}],
   "subagentStop": [{"type": "command", "bash": "geas hook copilot-stop", "timeoutSec": 600}]}}`)
}

func newHookCursorStopCmd(g *globalOptions) *cobra.Command {
	return newHookHarnessStopCmd(g, cursorHarness, `A Cursor stop hook, and a subagentStop hook with the same decisions. It reads the hook's JSON
from stdin (status, loop_count, workspace_roots), picks the task, runs the gate on it (a recorded
run, as geas gate does), and answers on stdout, always with exit 0:

  the agent may stop                    {} (a message, if any, on stderr)
  held                                  {"followup_message":...}: Cursor submits it as the next
                                        user message

loop_count above 0 is the "already continuing" signal, and loop_count + 1 is the stop's number
for the loop cap; Cursor itself stops continuing at the hook's loop_limit (5 unless configured;
set it to 8 or more, or null, to let the hook's own cap decide). A stop with status "aborted" (the
user stopped the agent) is not gated and not continued. The project is $CURSOR_PROJECT_DIR's when
no -C or $GEAS_PROJECT_DIR names one, else found from the first of workspace_roots.

In .cursor/hooks.json:
  {"version": 1, "hooks": {"stop": [{"command": "geas hook cursor-stop", "timeout": 600, "loop_limit": 8}],
   "subagentStop": [{"command": "geas hook cursor-stop", "timeout": 600, "loop_limit": 8}]}}`)
}
