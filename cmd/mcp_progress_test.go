package cmd

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
)

// progressLog collects the progress notifications a client receives, in order.
type progressLog struct {
	mu   sync.Mutex
	got  []mcp.ProgressNotificationParams
	seen chan struct{} // gets a value per notification (never blocks: buffered, extra dropped)
}

func newProgressLog() *progressLog { return &progressLog{seen: make(chan struct{}, 1)} }

func (l *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	l.got = append(l.got, *req.Params)
	l.mu.Unlock()
	select {
	case l.seen <- struct{}{}:
	default:
	}
}

func (l *progressLog) list() []mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcp.ProgressNotificationParams(nil), l.got...)
}

// waitFor waits until a notification whose message contains text has arrived (the client hands
// notifications to its handler asynchronously, so one the server sent before its result may be
// handled after CallTool returns), failing after a minute.
func (l *progressLog) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		for _, n := range l.list() {
			if strings.Contains(n.Message, text) {
				return
			}
		}
		select {
		case <-l.seen:
		case <-deadline:
			require.FailNow(t, "no progress notification says "+text, "got %v", l.list())
		}
	}
}

// TestMCPEvaluateSendsProgress: a request with a progress token gets notifications/progress while
// the eval commands run — at each command's start and end and, between them, ones quoting its
// live output — with strictly increasing progress values and the request's token; the result is
// still the verdict. A request without a token gets none.
func TestMCPEvaluateSendsProgress(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) {
		c["eval_commands"] = []any{"for i in 1 2 3; do echo step $i; sleep 1; done", "true"}
	})
	log := newProgressLog()
	cs := mcpSessionWith(t, dir, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})

	// First without a token: the server must send nothing for this call.
	var quiet struct{ Verdict string }
	mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &quiet)
	assert.Equal(t, "pass", quiet.Verdict)

	params := &mcp.CallToolParams{Name: mcpToolEvaluate, Arguments: map[string]any{"task": "t1"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", mcpText(res))
	verdict, _ := res.StructuredContent.(map[string]any)["verdict"].(string)
	assert.Equal(t, "pass", verdict)

	log.waitFor(t, "eval: true  pass, exit 0") // the last command's end
	got := log.list()
	require.GreaterOrEqual(t, len(got), 4, "the start and end of two commands at least: %v", got)
	assert.Equal(t, 1.0, got[0].Progress, "the first notification is the token call's: none came for the call without a token")
	var live, started bool
	for i, n := range got {
		assert.Equal(t, "tok-1", n.ProgressToken, "notification %d", i)
		if i > 0 {
			assert.Greater(t, n.Progress, got[i-1].Progress, "progress increases: notification %d", i)
		}
		assert.NotContains(t, n.Message, "\n", "one line each")
		started = started || strings.HasPrefix(n.Message, "eval: for i in 1 2 3") && strings.Contains(n.Message, "started")
		live = live || strings.Contains(n.Message, "running") && strings.Contains(n.Message, ": step ")
	}
	assert.True(t, started, "the first command's start is announced: %v", got)
	assert.True(t, live, "a notification quotes the running command's output: %v", got)
	assert.Contains(t, got[0].Message, "gate run of task t1 (dry run): started")
}

// TestMCPVerifySendsProgress: geas_gate_verify reports progress too (the ticker: gate.Verify has
// no eval output to give), and none without a token.
func TestMCPVerifySendsProgress(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	code, res := gateTask(t, dir)
	require.Equal(t, 0, code, "the example task passes: %v", res["causes"])
	log := newProgressLog()
	cs := mcpSessionWith(t, dir, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})
	params := &mcp.CallToolParams{Name: mcpToolVerify, Arguments: map[string]any{"task": "t1"}}
	params.SetProgressToken(7)
	out, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, out.IsError, "%s", mcpText(out))
	log.waitFor(t, "verify of task t1: started")
	got := log.list()
	assert.EqualValues(t, 7, got[0].ProgressToken, "a number token comes back as the number")
}

// fakeSend records what a reporter sends, with the clock it is driven by.
type fakeSend struct {
	sent []*mcp.ProgressNotificationParams
	now  time.Time
}

func (f *fakeSend) send(_ context.Context, p *mcp.ProgressNotificationParams) error {
	f.sent = append(f.sent, p)
	return nil
}

func (f *fakeSend) messages() []string {
	var out []string
	for _, p := range f.sent {
		out = append(out, p.Message)
	}
	return out
}

// TestMCPProgressMessages drives the reporter with a fixed clock: the start, ticks that quote the
// latest output line (none sooner than every after the last notification), the finish with the
// exit code, and the under-way tick between commands.
func TestMCPProgressMessages(t *testing.T) {
	f := &fakeSend{now: time.Unix(1000, 0)}
	p := newProgressSender(t.Context(), f.send, "tok", "gate run of task t1 (dry run)", func() time.Time { return f.now })
	p.every = 500 * time.Millisecond
	var _ tiers.Progress = p

	p.Start("go test ./...")
	_, _ = p.Write([]byte("=== RUN TestA\n--- PASS: TestA\npartial"))
	p.tick() // too soon after the start: nothing
	f.now = f.now.Add(600 * time.Millisecond)
	p.tick()
	_, _ = p.Write([]byte(" line\n\n"))
	f.now = f.now.Add(100 * time.Millisecond)
	p.tick() // 100ms after the last: nothing
	f.now = f.now.Add(500 * time.Millisecond)
	p.tick()
	code := 0
	p.Finish(tiers.EvalRun{Status: tiers.StatusPass, ExitCode: &code, DurationMS: 1200})
	f.now = f.now.Add(2 * time.Second)
	p.tick()
	p.Start("exit 3")
	p.Finish(tiers.EvalRun{Status: tiers.StatusFail, TimedOut: true, DurationMS: 60000})
	p.Start("nosuchcmd")
	p.Finish(tiers.EvalRun{Status: tiers.StatusError, Error: "could not start", DurationMS: 5})

	assert.Equal(t, []string{
		"gate run of task t1 (dry run): started",
		"eval: go test ./...  started [+0ms]",
		"eval: go test ./...  running 600ms: partial",
		"eval: go test ./...  running 1.2s: partial line",
		"eval: go test ./...  pass, exit 0 in 1.2s",
		"gate run of task t1 (dry run): under way [+3.2s]",
		"eval: exit 3  started [+3.2s]",
		"eval: exit 3  fail, timed out after 1m0s",
		"eval: nosuchcmd  started [+3.2s]",
		"eval: nosuchcmd  error, could not start (after 5ms)",
	}, f.messages())
	for i, n := range f.sent {
		assert.Equal(t, float64(i+1), n.Progress)
		assert.Equal(t, "tok", n.ProgressToken)
		assert.Zero(t, n.Total, "the total is unknown")
	}
}

// TestMCPProgressQuotesOutputSafely: the quoted line is the last non-blank one, printable (no
// control character, escape, CR or invalid UTF-8 reaches the client), on one line and bounded;
// the kept output is bounded however much a command prints.
func TestMCPProgressQuotesOutputSafely(t *testing.T) {
	tests := []struct{ name, out, want string }{
		{"last line", "a\nb\nc\n", "c"},
		{"blank lines after", "a\nlast\n\n \t\n", "last"},
		{"partial line", "a\nhalf", "half"},
		{"carriage return progress bar", "10%\r50%\r90%", "90%"},
		{"escape sequence", "\x1b[31mred\x1b[0m", "[31mred [0m"},
		{"invalid utf-8", "ok\xff\xfeok", "ok ok"},
		{"unicode kept", "✔ héllo 世界", "✔ héllo 世界"},
		{"spaces squeezed", "a \t\v  b", "a b"},
		{"nothing", "", ""},
		{"only newlines", "\n\n\n", ""},
		{"long", strings.Repeat("x", 500), strings.Repeat("x", mcpProgressLine) + "…"},
		{"exactly the bound", strings.Repeat("é", mcpProgressLine), strings.Repeat("é", mcpProgressLine)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lastLine([]byte(tc.out)))
		})
	}

	f := &fakeSend{now: time.Unix(1000, 0)}
	p := newProgressSender(t.Context(), f.send, "tok", "run", func() time.Time { return f.now })
	p.Start("cmd")
	for range 1000 {
		_, _ = p.Write([]byte(strings.Repeat("y", 100) + "\n"))
	}
	_, _ = p.Write([]byte(strings.Repeat("z", 10000)))
	assert.LessOrEqual(t, len(p.tail), 4<<10, "the kept output is bounded")
	assert.Equal(t, strings.Repeat("z", mcpProgressLine)+"…", lastLine(p.tail))
}

// TestMCPProgressNeedsAToken: no reporter (and a nil tiers.Progress, not a typed nil) without a
// progress token; closing a nil reporter is fine.
func TestMCPProgressNeedsAToken(t *testing.T) {
	var p *mcpProgress
	assert.Nil(t, p.tracker())
	p.Close()
	assert.Nil(t, newMCPProgress(t.Context(), nil, "x"))
	assert.Nil(t, newMCPProgress(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}}, "x"))
}
