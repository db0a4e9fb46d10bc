package cmd

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/geas-dev/geas/gate"

	"github.com/geas-dev/geas/report"
)

// githubActionsEnv is set to "true" by GitHub Actions in every step it runs.
const githubActionsEnv = "GITHUB_ACTIONS"

// progress returns the live progress reporter for eval commands on stderr, or nil when quiet.
// On a terminal each process's output streams under its header line; otherwise (CI logs, a fix
// loop capturing stderr) only the header and finish lines are written, so stderr stays short.
// In GitHub Actions ($GITHUB_ACTIONS=true, or --format github) each process's output goes in a
// collapsed group of the log, even with --quiet, so a CI log always has the test output one
// click away (newGroupProgress).
// stdout is never touched: it holds the report (the JSON document with --format json).
func (g *globalOptions) progress(quiet bool) gate.Progress {
	if g.githubActions || g.format == formatGitHub {
		return newGroupProgress(g.stderr, time.Now, newStopToken)
	}
	if quiet {
		return nil
	}
	return newProgress(g.stderr, isTerminal(g.stderr), time.Now)
}

// isTerminal reports whether w is a terminal (golang.org/x/term: TCGETS on Linux, TIOCGETA on
// macOS and the BSDs, the console mode on Windows).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// progressWriter writes the header and finish line of each process, and on a terminal its output
// in between. Start and Finish run on the gate's goroutine and Write on the process's output
// goroutine, so every method takes the lock; a write error is dropped (progress never fails a run).
type progressWriter struct {
	mu      sync.Mutex
	w       io.Writer
	stream  bool             // copy process output (a terminal, or a group of a GitHub Actions log)
	now     func() time.Time // the clock, fixed in tests
	begin   time.Time        // when the reporter was made: the gate run's start
	midLine bool             // the streamed output did not end with a newline
	// group is set in GitHub Actions: each process is a ::group:: of the log, its output between
	// ::stop-commands::TOKEN and ::TOKEN:: (token, fresh for each process).
	group    bool
	newToken func() string
	token    string
}

func newProgress(w io.Writer, stream bool, now func() time.Time) *progressWriter {
	return &progressWriter{w: w, stream: stream, now: now, begin: now()}
}

// newGroupProgress is the reporter of a GitHub Actions log: each process is a collapsed group
// titled with its header line, holding its output verbatim, and its finish line follows the group:
//
//	::group::▶ eval: go test ./...  [+250ms]
//	::stop-commands::TOKEN
//	(the output)
//	::TOKEN::
//	::endgroup::
//	✘ exit 1 in 2.1s
//
// The output is the agents' (the tests they wrote print it): between ::stop-commands:: and the
// token that ends it the runner runs no workflow command, so a line of output that reads
// ::error::, ::add-mask:: or ::endgroup:: is shown and not obeyed. The token is 128 random bits,
// fresh for each process and written only to the log, so the output cannot end the pause early.
// The title is escaped as workflow command data (a newline in a command cannot start a line).
func newGroupProgress(w io.Writer, now func() time.Time, newToken func() string) *progressWriter {
	return &progressWriter{w: w, stream: true, now: now, begin: now(), group: true, newToken: newToken}
}

// newStopToken is a fresh ::stop-commands:: token: 128 random bits in hex.
func newStopToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// Start writes the header: the command and the time elapsed since the run began (in GitHub
// Actions, as the title of the process's group).
func (p *progressWriter) Start(label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.midLine = false
	header := fmt.Sprintf("▶ eval: %s  [+%s]", label, progressDuration(p.now().Sub(p.begin)))
	if p.group {
		p.token = p.newToken()
		fmt.Fprintf(p.w, "::group::%s\n::stop-commands::%s\n", report.GitHubCommandData(header), p.token)
		return
	}
	fmt.Fprintln(p.w, header)
}

// Write streams output on a terminal and in a GitHub Actions group, and drops it otherwise.
func (p *progressWriter) Write(b []byte) (int, error) {
	if !p.stream || len(b) == 0 {
		return len(b), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.group && p.token == "" {
		return len(b), nil // no group open: output outside Start..Finish is not shown
	}
	_, _ = p.w.Write(b)
	p.midLine = b[len(b)-1] != '\n'
	return len(b), nil
}

// Finish writes the finish line: exit code (or why there is none) and duration.
func (p *progressWriter) Finish(run gate.EvalRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
	if p.group && p.token != "" {
		fmt.Fprintf(p.w, "::%s::\n::endgroup::\n", p.token)
		p.token = ""
	}
	d := progressDuration(time.Duration(run.DurationMS) * time.Millisecond)
	mark := "✘"
	if run.Status == gate.StatusPass {
		mark = "✔"
	}
	switch {
	case run.TimedOut:
		fmt.Fprintf(p.w, "%s timed out after %s\n", mark, d)
	case run.ExitCode != nil:
		fmt.Fprintf(p.w, "%s exit %d in %s\n", mark, *run.ExitCode, d)
	case run.Error != "":
		fmt.Fprintf(p.w, "%s %s (after %s)\n", mark, run.Error, d)
	default:
		fmt.Fprintf(p.w, "%s %s in %s\n", mark, run.Status, d)
	}
}

// progressDuration is short and stable: 350ms, 1.2s, 2m3s.
func progressDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 59950*time.Millisecond: // rounds to at most 59.9s
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// taskLabeled names the task in each header line, for a run over several tasks.
type taskLabeled struct {
	gate.Progress
	task string
}

func (p taskLabeled) Start(label string) { p.Progress.Start(p.task + ": " + label) }

// labeled wraps progress so its headers name the task; nil stays nil (no progress).
func labeled(progress gate.Progress, task string) gate.Progress {
	if progress == nil {
		return nil
	}
	return taskLabeled{Progress: progress, task: task}
}
