package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

// exitHookBlock is Claude Code's blocking exit code. The hooks reference, "TaskCompleted decision
// control": "Exit code 2: the task is not marked as completed and the stderr message is fed back
// to the model as feedback." (Its decision-control table lists no JSON decision for TaskCompleted:
// "Exit code or continue: false".)
const exitHookBlock = 2

func newHookClaudeTaskCompletedCmd(g *globalOptions) *cobra.Command {
	var o hookOptions
	c := &cobra.Command{
		Use:   "claude-task-completed [--task T] [--mission M]",
		Short: "Claude Code TaskCompleted hook: a task may be marked completed only when the gate passes",
		Long: `A Claude Code TaskCompleted hook. Claude Code runs it when a task is being marked as completed
(TaskUpdate, or an agent-team teammate finishing its turn with in-progress tasks). It reads the
hook's JSON from stdin, picks the task, runs the gate on it (a recorded run, as geas gate does) and
answers:

  pass, or a verified or passed task       exit 0, nothing printed: the task may be marked
  whose pass holds on re-check             completed
  fail, block or error; a re-check that    exit 2 with the reason on stderr (verdict, causes with
  does not hold; a task escalated,         their evidence, next action, retry budget left): Claude
  blocked or cancelled (not gated); a      Code does not mark the task completed and gives the
  gate that cannot run                     reason to the model
  no task to gate                          exit 0 with {"systemMessage":...} saying the gate did not
                                           run

The project is chosen as the Stop hook chooses it ($CLAUDE_PROJECT_DIR's, never a .geas below the
repository root found by walking up; see geas hook claude-stop --help). The task is --task if
given; else the hook input's task_id when it is a valid geas id and
.geas/missions/M/tasks/<task_id> exists (a task_id such as ../x is not a task: the hook says so and
goes on); else $GEAS_TASK; else current_task_id of .geas/state/run.json (agents write it: a pass of a task
chosen from it is allowed with a systemMessage naming the task). The mission is --mission, else
$GEAS_MISSION, else the project's default. A hook input over 1 MiB, whose task_id cannot be read,
is refused unless --task names the task.

Refusing a completion does not trap the agent: it can still end its turn, which the Stop hook
judges with its own loop guard; the task only stays open. A mistake in the hook's own
configuration (an invalid id in a flag or the environment, input that is not a JSON object) exits
64: Claude Code reports a non-blocking hook error.

In .claude/settings.json (or install the plugin of this repository, which registers it):
  {"hooks": {"TaskCompleted": [{"hooks": [{"type": "command", "command": "geas hook claude-task-completed",
    "timeout": 600}]}]}}
Give the hook a timeout above --timeout (9m by default): Claude Code goes on when it kills a hook.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runHookClaudeTaskCompleted(c.Context(), g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id (default: the hook input's task_id, else $GEAS_TASK, else current_task_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: $GEAS_MISSION, else mission_id of .geas/state/run.json)")
	addHookTimeoutFlag(c, &o.timeout)
	return c
}

// completionAnswer is the TaskCompleted hook's answer: allowed, with an optional systemMessage
// for the user, or refused with the reason Claude Code feeds back to the model.
type completionAnswer struct {
	allow   bool
	message string
}

func runHookClaudeTaskCompleted(ctx context.Context, g *globalOptions, o hookOptions) error {
	in, err := readHookInput(g.stdin)
	if err != nil {
		return err
	}
	a, err := withHookWatchdog(o.timeout, func() (completionAnswer, error) { return decideTaskCompleted(ctx, g, o, in) },
		func(err error) completionAnswer { return completionNotRun(o, in, err) })
	if err != nil {
		return err
	}
	if a.allow {
		if a.message == "" {
			return nil
		}
		return writeJSON(g.stdout, &claudeStopOutput{SystemMessage: a.message})
	}
	fmt.Fprintln(g.stderr, a.message)
	return &exitError{code: exitHookBlock, silent: true}
}

// decideTaskCompleted is the TaskCompleted hook's answer, or a usage error.
func decideTaskCompleted(ctx context.Context, g *globalOptions, o hookOptions, in hookInput) (completionAnswer, error) {
	if err := g.pinHookProject(in); err != nil {
		return completionNotRun(o, in, err), nil
	}
	target, err := g.selectHookTask(o, in, true)
	if err != nil {
		return completionAnswer{}, err
	}
	var a completionAnswer
	switch {
	case in.Oversize && o.task == "":
		// The input's task_id, which names the task being completed, is unknown: gating the task
		// of GEAS_TASK or run.json instead could let another task's pass mark this one completed.
		a = completionAnswer{message: fmt.Sprintf("geas gate did not run: the %s, so the task being completed is not known "+
			"and may not be marked completed. Shorten the task's description and mark it completed again.", oversizeText())}
	case target.err != nil:
		a = completionCannotRun(target, target.err)
	case target.task == "":
		a = completionAnswer{allow: true, message: noTaskMessage(target, "the task may be marked completed")}
	default:
		a = taskCompleted(ctx, g, target, o.timeout)
	}
	return a, nil
}

// taskCompleted gates the target as the Stop hook does (SPEC §9: a verified or passed task is
// re-checked, every other gate state is gated), but only a pass lets the task be marked completed:
// there is no stop_hook_active here, and none is needed, since refusing a completion never keeps
// the agent from stopping.
func taskCompleted(ctx context.Context, g *globalOptions, target hookTarget, timeout time.Duration) completionAnswer {
	t, err := g.openTask(target.mission, target.task)
	if err != nil {
		return completionCannotRun(target, err)
	}
	defer t.Close()
	h, err := gate.HookGate(ctx, t.ref(), gate.HookOptions{Timeout: timeout})
	if err != nil {
		return completionCannotRun(target, err)
	}
	if h.NotGated {
		backing := "backed: " + h.Why
		if !h.Backed {
			backing = "and nothing the gate or geas recorded backs that state: " + h.Why
		}
		return completionAnswer{message: fmt.Sprintf(
			"geas gate: task %s%s is %s, so it is not done and may not be marked completed; the gate did not run (%s).\n"+
				"Leave the task open and say so; an authority decides what happens to a task in this state.%s",
			t.task, sourceSuffix(target), h.State, backing, notesText(target.notes))}
	}
	res := h.Result
	if res.Verdict.IsPass() {
		pin := ""
		if target.source == sourceRunJSON {
			pin = " " + runJSONPinText
		}
		if len(target.notes) == 0 && pin == "" {
			return completionAnswer{allow: true}
		}
		return completionAnswer{allow: true, message: fmt.Sprintf("geas gate: task %s%s passes.%s%s", t.task, sourceSuffix(target), pin, notesText(target.notes))}
	}
	head := fmt.Sprintf("geas gate: task %s%s is not done, so it may not be marked completed.", t.task, sourceSuffix(target))
	if res.Recheck {
		state := h.RecheckState()
		head = fmt.Sprintf("geas gate re-checked task %s%s, which is %s, and the pass does not hold, so it may not be marked completed.",
			t.task, sourceSuffix(target), state)
	}
	var b strings.Builder
	b.WriteString(head + " " + gate.HookReport(res))
	for _, n := range res.Notes {
		b.WriteString("\nNote: " + n)
	}
	if tr := res.Transition; tr != nil && (tr.To == vocab.Escalated || tr.To == vocab.Blocked) {
		fmt.Fprintf(&b, "\nThis run moved the task to %s: leave it open and say so.", tr.To)
	} else {
		b.WriteString("\nDo the next action, then mark the task completed again: the gate runs each time.")
	}
	b.WriteString(notesText(target.notes))
	return completionAnswer{message: b.String()}
}

// completionNotRun refuses the completion when the gate did not run before the task was chosen
// (the project refused, or the watchdog answered): fail closed.
func completionNotRun(o hookOptions, in hookInput, err error) completionAnswer {
	what := hookWhat(o)
	if o.task == "" && project.IsID(in.TaskID) {
		what = "task " + in.TaskID
	}
	return completionAnswer{message: fmt.Sprintf("geas gate could not run on %s, so it is not verified and may not be marked completed yet: %v.\n"+
		"Remove the cause if it is in your reach, then mark the task completed again. If you cannot, leave the task open and say so.", what, err)}
}

// completionCannotRun refuses the completion when the gate cannot run at all: fail closed.
func completionCannotRun(target hookTarget, err error) completionAnswer {
	return completionAnswer{message: fmt.Sprintf(
		"geas gate could not run on %s%s, so it is not verified and may not be marked completed yet: %v.\n"+
			"Fix the cause if it is in your reach (for example a file or directory in the way under .geas), then mark the task "+
			"completed again. If you cannot fix it, leave the task open and say so.%s",
		target.label(), sourceSuffix(target), err, notesText(target.notes))}
}

// sourceSuffix names where the task came from when it is not the hook input's own task_id.
func sourceSuffix(t hookTarget) string {
	if t.source == "" || t.source == sourceHookTaskID || t.task == "" {
		return ""
	}
	return " (from " + t.source + ")"
}

func notesText(notes []string) string {
	s := ""
	for _, n := range notes {
		s += "\nNote: " + n + "."
	}
	return s
}
