package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geas-dev/geas/gate"
)

// mcpProgressEvery is the least time between two notifications that no eval command's start or
// end caused: while a tool call is under way, one is sent about this often (with the running command's
// latest output line), so a client that resets its request timeout on progress never times out
// on a long eval, and a client that shows progress sees the output live.
const mcpProgressEvery = 500 * time.Millisecond

// mcpProgressLine bounds the output line a notification quotes, in runes.
const mcpProgressLine = 200

// mcpProgress sends notifications/progress for one tool call whose request carried
// _meta.progressToken. It is the gate's gate.Progress (the hook the CLI's stderr progress uses):
// a notification when an eval command starts and when it ends, and between them, every
// mcpProgressEvery to 1.5 times that, one quoting the command's latest output line; when no command runs (the
// gate's other stages, a recheck, a verify) the ticker still says the call is under way. The
// progress value counts the notifications, so it increases strictly; the total is unknown.
//
// Start and Finish run on the gate's goroutine, Write on the process's output goroutine and the
// ticker on its own: sends are serialized by sendMu (so values reach the client in order), and
// Write only takes mu, never waiting on a send. A failed send is dropped: progress never fails
// a call.
type mcpProgress struct {
	ctx   context.Context
	send  func(context.Context, *mcp.ProgressNotificationParams) error
	token any
	what  string // what the call does, e.g. "gate run of task t1 (dry run)"
	every time.Duration
	now   func() time.Time

	sendMu sync.Mutex
	n      int // notifications sent so far: the progress value of the last one

	mu       sync.Mutex
	begin    time.Time // the call's start
	label    string    // the eval command running, "" between commands
	started  time.Time // when it started
	tail     []byte    // its latest output, at most 4 KiB
	lastSent time.Time

	stop chan struct{}
	done chan struct{}
}

// newMCPProgress returns the progress reporter of a tool call, or nil when the client sent no
// progress token (then nothing is sent). Close it when the call ends.
func newMCPProgress(ctx context.Context, req *mcp.CallToolRequest, what string) *mcpProgress {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	p := newProgressSender(ctx, req.Session.NotifyProgress, token, what, time.Now)
	p.run(mcpProgressEvery)
	return p
}

// newProgressSender is the reporter without its ticker (run starts it): the unit tests drive it
// with a fixed clock.
func newProgressSender(ctx context.Context, send func(context.Context, *mcp.ProgressNotificationParams) error,
	token any, what string, now func() time.Time) *mcpProgress {
	p := &mcpProgress{ctx: ctx, send: send, token: token, what: what, now: now, begin: now()}
	p.notify(what + ": started")
	return p
}

// run starts the ticker. It ticks twice per every, and a tick that comes at least every after the
// last notification sends one: while the call is under way a notification goes out every 500 to
// 750 ms (a ticker of period every would skip each tick that comes a hair too soon and send one
// a second).
func (p *mcpProgress) run(every time.Duration) {
	p.every, p.stop, p.done = every, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every / 2)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-p.ctx.Done():
				return
			case <-tick.C:
				p.tick()
			}
		}
	}()
}

// Close stops the ticker and waits for it, so no notification follows the call's result. A nil
// reporter is closed.
func (p *mcpProgress) Close() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
}

// tracker is the reporter as a gate.Progress; a nil reporter is no progress (a nil interface,
// not a typed nil the gate would call).
func (p *mcpProgress) tracker() gate.Progress {
	if p == nil {
		return nil
	}
	return p
}

// tick sends a notification unless one went out less than p.every ago.
func (p *mcpProgress) tick() {
	p.mu.Lock()
	now := p.now()
	if now.Sub(p.lastSent) < p.every {
		p.mu.Unlock()
		return
	}
	var msg string
	if p.label != "" {
		msg = fmt.Sprintf("eval: %s  running %s", p.label, progressDuration(now.Sub(p.started)))
		if line := lastLine(p.tail); line != "" {
			msg += ": " + line
		}
	} else {
		msg = fmt.Sprintf("%s: under way [+%s]", p.what, progressDuration(now.Sub(p.begin)))
	}
	p.mu.Unlock()
	p.notify(msg)
}

// Start announces an eval command (as the CLI's "▶ eval:" header line does).
func (p *mcpProgress) Start(label string) {
	p.mu.Lock()
	p.label, p.started, p.tail = label, p.now(), p.tail[:0]
	msg := fmt.Sprintf("eval: %s  started [+%s]", label, progressDuration(p.started.Sub(p.begin)))
	p.mu.Unlock()
	p.notify(msg)
}

// Write keeps the command's latest output for the next tick; it never sends, so the process's
// output is never held up by the client.
func (p *mcpProgress) Write(b []byte) (int, error) {
	const keep = 4 << 10
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(b) >= keep {
		p.tail = append(p.tail[:0], b[len(b)-keep:]...)
	} else {
		if over := len(p.tail) + len(b) - keep; over > 0 {
			p.tail = append(p.tail[:0], p.tail[over:]...)
		}
		p.tail = append(p.tail, b...)
	}
	return len(b), nil
}

// Finish announces the command's end: its status and exit code (or why there is none) and
// duration.
func (p *mcpProgress) Finish(run gate.EvalRun) {
	p.mu.Lock()
	label := p.label
	p.label, p.tail = "", p.tail[:0]
	p.mu.Unlock()
	d := progressDuration(time.Duration(run.DurationMS) * time.Millisecond)
	var how string
	switch {
	case run.TimedOut:
		how = "timed out after " + d
	case run.ExitCode != nil:
		how = fmt.Sprintf("exit %d in %s", *run.ExitCode, d)
	case run.Error != "":
		how = fmt.Sprintf("%s (after %s)", run.Error, d)
	default:
		how = "in " + d
	}
	p.notify(fmt.Sprintf("eval: %s  %s, %s", label, run.Status, how))
}

// notify sends the next notification, numbered one more than the last.
func (p *mcpProgress) notify(msg string) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.n++
	p.mu.Lock()
	p.lastSent = p.now()
	p.mu.Unlock()
	_ = p.send(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: float64(p.n), Message: msg})
}

// lastLine is the last non-blank line of out, made printable: invalid UTF-8 and control
// characters (escape sequences included) become spaces, runs of spaces one, and it is cut to
// mcpProgressLine runes.
func lastLine(out []byte) string {
	out = bytes.TrimRight(out, " \t\r\n")
	if i := bytes.LastIndexAny(out, "\r\n"); i >= 0 {
		out = out[i+1:]
	}
	var b strings.Builder
	n, space := 0, false
	for len(out) > 0 && n < mcpProgressLine {
		r, size := utf8.DecodeRune(out)
		out = out[size:]
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			n, space = n+1, false
		}
		b.WriteRune(r)
		n++
	}
	if len(out) > 0 {
		b.WriteString("…")
	}
	return b.String()
}
