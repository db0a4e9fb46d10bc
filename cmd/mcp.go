package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/report"
)

// The MCP tools. An agent may ask the gate for a verdict but never write one, so every tool only
// reads: no name may suggest otherwise (TestNoMCPToolCanWrite checks the names).
const (
	mcpToolEvaluate   = "geas_gate_evaluate"
	mcpToolVerify     = "geas_gate_verify"
	mcpToolTaskStatus = "geas_task_status"
)

const mcpInstructions = `geas gate decides whether a task of a geas mission is done (pass, fail, block or error).
These tools only read: geas_gate_evaluate computes the verdict the gate would give now (a dry run,
nothing recorded), geas_gate_verify re-checks tasks that already passed, geas_task_status shows a
task's state and retry budget. A verdict counts only when the gate records it: run "geas gate --task T"
(or let the Stop hook do it). Nothing here can mark a task done.`

func newMCPCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve read-only gate tools to agents over MCP (stdio)",
		Long: `Serve the gate to agents as a Model Context Protocol server on standard input and output.

Tools (all read-only: none writes a file or changes a task's state):
  geas_gate_evaluate {task, mission?}   the verdict a gate run would give now (a dry run)
  geas_gate_verify   {task?, mission?}  re-evaluate passed tasks; intact, revoked or tampered
  geas_task_status   {task, mission?}   what geas task show --format json prints

An agent can ask the gate for a verdict but cannot write one: verdicts are recorded only by
geas gate itself. On a verified or passed task geas_gate_evaluate is the re-check geas gate does
("recheck": true). Every tool declares an outputSchema for its structured result. A request with
_meta.progressToken gets notifications/progress while the gate runs (each eval command's start
and end, and every 0.5-0.75 s its latest output line), so a client that resets its timeout on
progress does not time out on a long eval. -C DIR chooses the project; a bad or unknown task id is a tool error, not a
crash. Register it with an agent, for instance: claude mcp add geas -- geas -C /path/to/project mcp`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runMCP(c.Context(), g) },
	}
}

// runMCP serves until the client closes standard input or ctx is cancelled.
func runMCP(ctx context.Context, g *globalOptions) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(g.stdin), Writer: nopWriteCloser{g.stdout}}
	s, err := newMCPServer(g)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	err = s.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpTaskArgs names one task.
type mcpTaskArgs struct {
	Task    string `json:"task" jsonschema:"task id, e.g. t1"`
	Mission string `json:"mission,omitempty" jsonschema:"mission id; default: mission_id of .geas/state/run.json"`
}

// mcpVerifyArgs names one task, or none for every task of the mission.
type mcpVerifyArgs struct {
	Task    string `json:"task,omitempty" jsonschema:"task id; omit to verify every task of the mission"`
	Mission string `json:"mission,omitempty" jsonschema:"mission id; default: mission_id of .geas/state/run.json"`
}

// newMCPServer is the server with its tools, each declaring the schema of its structured result.
func newMCPServer(g *globalOptions) (*mcp.Server, error) {
	evalSchema, err := mcpOutputSchema[gate.Result]()
	if err != nil {
		return nil, err
	}
	verifySchema, err := mcpOutputSchema[mcpVerifyOutput]()
	if err != nil {
		return nil, err
	}
	statusSchema, err := mcpOutputSchema[taskStatus]()
	if err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "geas", Title: "geas gate", Version: geasVersion()},
		// No logging capability: the server has nothing to log. Tools are advertised once added.
		&mcp.ServerOptions{Instructions: mcpInstructions, Capabilities: &mcp.ServerCapabilities{}})
	closedWorld := false
	mcp.AddTool(s, &mcp.Tool{
		Name:  mcpToolEvaluate,
		Title: "Evaluate a task (dry run)",
		Description: "Compute the verdict geas gate would give a task now: pass, fail, block or error, with every " +
			"cause and its evidence, the retry budget and the next action. It runs the contract's eval commands and " +
			"checks like a real gate run but records nothing: the task's state, budget and record are unchanged, " +
			"and the verdict counts only when geas gate records it. On a task that is already verified or passed it " +
			"is the re-check geas gate does (\"recheck\": true): a pass while the pass still holds, else the causes.",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		OutputSchema: evalSchema,
	}, func(ctx context.Context, req *mcp.CallToolRequest, in mcpTaskArgs) (*mcp.CallToolResult, *gate.Result, error) {
		return g.mcpEvaluate(ctx, req, in)
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:  mcpToolVerify,
		Title: "Verify passed tasks",
		Description: "Re-check tasks the gate passed (state verified or passed), as geas gate verify does without " +
			"--apply: each task's gate_history chain and gate_result, and a fresh dry-run evaluation against the " +
			"evidence of the moment. Each task is intact, revoked (the fresh evaluation no longer passes; with its " +
			"causes) or tampered (the records do not verify). Without a task, every task of the mission; tasks not " +
			"passed are listed as skipped. Records nothing.",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		OutputSchema: verifySchema,
	}, func(ctx context.Context, req *mcp.CallToolRequest, in mcpVerifyArgs) (*mcp.CallToolResult, *mcpVerifyOutput, error) {
		return g.mcpVerify(ctx, req, in)
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:  mcpToolTaskStatus,
		Title: "Show a task's status",
		Description: "A task's state, gate profile, retry budget left, consecutive errors, last verdict, record " +
			"sections and evidence files (what geas task show --format json prints).",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closedWorld},
		OutputSchema: statusSchema,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in mcpTaskArgs) (*mcp.CallToolResult, taskStatus, error) {
		return g.mcpTaskStatus(in)
	})
	return s, nil
}

// mcpEvaluate is geas gate --dry-run as a tool: the result JSON as structured content, and the text
// report followed by the same JSON as text content (for clients that ignore structured content).
// When the request carries a progress token, the run's eval commands are reported as
// notifications/progress while it is under way (mcpProgress).
func (g *globalOptions) mcpEvaluate(ctx context.Context, req *mcp.CallToolRequest, in mcpTaskArgs) (*mcp.CallToolResult, *gate.Result, error) {
	t, err := g.openTask(in.Mission, in.Task)
	if err != nil {
		return nil, nil, err
	}
	defer t.Close()
	progress := newMCPProgress(ctx, req, fmt.Sprintf("gate run of task %s (dry run)", t.task))
	defer progress.Close()
	res, err := gate.Run(ctx, t.ref(), gate.Options{DryRun: true, Progress: progress.tracker()})
	if err != nil {
		return nil, nil, fmt.Errorf("the gate could not run: %w", err)
	}
	var textReport bytes.Buffer
	if err := report.For(report.Text).Gate(&textReport, []*gate.Result{res}); err != nil {
		return nil, nil, err
	}
	raw, err := res.JSON()
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: textReport.String()},
		&mcp.TextContent{Text: string(raw)},
	}}, res, nil
}

// mcpVerifyOutput is the result of geas_gate_verify.
type mcpVerifyOutput struct {
	MissionID string               `json:"mission_id"`
	OK        bool                 `json:"ok"` // no task is revoked or tampered
	Tasks     []*gate.VerifyReport `json:"tasks"`
	Skipped   []mcpSkippedTask     `json:"skipped"`
}

// mcpSkippedTask is a task verify does not apply to: the gate has not passed it.
type mcpSkippedTask struct {
	TaskID string `json:"task_id"`
	Reason string `json:"reason"`
}

func (g *globalOptions) mcpVerify(ctx context.Context, req *mcp.CallToolRequest, in mcpVerifyArgs) (*mcp.CallToolResult, *mcpVerifyOutput, error) {
	var p *project.Project
	out := mcpVerifyOutput{OK: true, Tasks: []*gate.VerifyReport{}, Skipped: []mcpSkippedTask{}}
	if in.Task != "" {
		t, err := g.openTask(in.Mission, in.Task)
		if err != nil {
			return nil, nil, err
		}
		p, out.MissionID = t.p, t.mission
	} else {
		var err error
		if p, out.MissionID, err = g.openMission(in.Mission); err != nil {
			return nil, nil, err
		}
	}
	defer p.Close()
	what := "verify of mission " + out.MissionID
	if in.Task != "" {
		what = "verify of task " + in.Task
	}
	progress := newMCPProgress(ctx, req, what) // no eval output (gate.Verify takes none): the ticker only
	defer progress.Close()
	v, err := gate.Verify(ctx, p, out.MissionID, in.Task, false)
	if err != nil {
		return nil, nil, err
	}
	out.OK = v.Revoked+v.Tampered == 0
	for _, vt := range v.Tasks {
		out.Tasks = append(out.Tasks, vt.VerifyReport)
	}
	for _, s := range v.Skipped {
		out.Skipped = append(out.Skipped, mcpSkippedTask(s))
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: mcpVerifyText(out)},
		&mcp.TextContent{Text: strings.TrimSuffix(raw.String(), "\n")},
	}}, &out, nil
}

// mcpVerifyText is geas_gate_verify's report as text: a line per task, its causes or problems,
// the skipped tasks, and a summary.
func mcpVerifyText(out mcpVerifyOutput) string {
	var text strings.Builder
	for _, rep := range out.Tasks {
		switch rep.Status {
		case gate.VerifyIntact:
			fmt.Fprintf(&text, "%s intact (%s)\n", rep.TaskID, rep.State)
		case gate.VerifyRevoked:
			fmt.Fprintf(&text, "%s revoked (%s): the pass no longer holds\n", rep.TaskID, rep.State)
			for _, c := range rep.Causes {
				fmt.Fprintf(&text, "  %s (check %s): %s\n", c.Code, c.Check, c.Detail)
			}
		default:
			fmt.Fprintf(&text, "%s %s (%s)\n", rep.TaskID, rep.Status, rep.State)
			for _, pr := range rep.Problems {
				fmt.Fprintf(&text, "  %s\n", pr)
			}
		}
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&text, "%s skipped: %s\n", s.TaskID, s.Reason)
	}
	switch {
	case len(out.Tasks) == 0:
		fmt.Fprintf(&text, "no task of mission %s has passed the gate: nothing to verify\n", out.MissionID)
	case out.OK:
		fmt.Fprintf(&text, "every verified task of mission %s still holds\n", out.MissionID)
	default:
		fmt.Fprintf(&text, "some passes of mission %s no longer hold: see above\n", out.MissionID)
	}
	return text.String()
}

func (g *globalOptions) mcpTaskStatus(in mcpTaskArgs) (*mcp.CallToolResult, taskStatus, error) {
	t, err := g.openTask(in.Mission, in.Task)
	if err != nil {
		return nil, taskStatus{}, err
	}
	defer t.Close()
	st, err := loadTaskStatus(t)
	return nil, st, err
}

// geasVersion is the version geas version prints on its first line (the module version, or
// devel with the commit for a build from a checkout).
func geasVersion() string { return buildVersion().Short }
