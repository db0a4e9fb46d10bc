package cmd

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

func exitRun(status tiers.Status, code int, ms int64) tiers.EvalRun {
	return tiers.EvalRun{Status: status, ExitCode: &code, DurationMS: ms}
}

func TestProgressLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		want   string
	}{
		{name: "terminal streams output", stream: true, want: "" +
			"▶ eval: go test ./...  [+250ms]\n" +
			"ok  \tgreeter\t0.1s\n" +
			"✔ exit 0 in 1.2s\n" +
			"▶ eval: go vet ./...  [+500ms]\n" +
			"vet: x.go:3: unreachable code\n" + // no trailing newline in the output: the finish line starts a new one
			"✘ exit 1 in 350ms\n" +
			"▶ eval: sleep 900  [+750ms]\n" +
			"✘ timed out after 2m0s\n" +
			"▶ eval: AC2: ./check.sh  [+1.0s]\n" +
			"✘ fork/exec ./check.sh: permission denied (after 0ms)\n"},
		{name: "not a terminal: header and finish lines only", stream: false, want: "" +
			"▶ eval: go test ./...  [+250ms]\n" +
			"✔ exit 0 in 1.2s\n" +
			"▶ eval: go vet ./...  [+500ms]\n" +
			"✘ exit 1 in 350ms\n" +
			"▶ eval: sleep 900  [+750ms]\n" +
			"✘ timed out after 2m0s\n" +
			"▶ eval: AC2: ./check.sh  [+1.0s]\n" +
			"✘ fork/exec ./check.sh: permission denied (after 0ms)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(&buf, tc.stream, fakeClock(250*time.Millisecond))
			p.Start("go test ./...")
			_, _ = p.Write([]byte("ok  \tgreeter\t0.1s\n"))
			p.Finish(exitRun(tiers.StatusPass, 0, 1234))
			p.Start("go vet ./...")
			_, _ = p.Write([]byte("vet: x.go:3: unreachable code"))
			p.Finish(exitRun(tiers.StatusFail, 1, 350))
			p.Start("sleep 900")
			p.Finish(tiers.EvalRun{Status: tiers.StatusFail, TimedOut: true, DurationMS: 120_000, Error: "timed out after 2m0s; process group killed"})
			p.Start("AC2: ./check.sh")
			p.Finish(tiers.EvalRun{Status: tiers.StatusError, Error: "fork/exec ./check.sh: permission denied"})
			assert.Equal(t, tc.want, buf.String())
		})
	}
}

// TestProgressIsSafeForTheOutputGoroutine: Write comes from the process's output goroutine while
// the gate may call Start and Finish; lines are never torn (run with -race to see the lock).
func TestProgressIsSafeForTheOutputGoroutine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true, time.Now)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				_, _ = p.Write([]byte("line of output\n"))
			}
		}()
	}
	for range 50 {
		p.Start("true")
		p.Finish(exitRun(tiers.StatusPass, 0, 1))
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		ok := line == "line of output" || strings.HasPrefix(line, "▶ eval: true  [+") || line == "✔ exit 0 in 1ms"
		require.True(t, ok, "torn line %q", line)
	}
}

func TestProgressQuietAndTerminalDetection(t *testing.T) {
	g := &globalOptions{stderr: &bytes.Buffer{}}
	assert.Nil(t, g.progress(true), "--quiet: no reporter at all")
	p, ok := g.progress(false).(*progressWriter)
	require.True(t, ok)
	assert.False(t, p.stream, "a buffer is not a terminal")

	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file is not a terminal")
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		assert.True(t, isTerminal(tty), "/dev/tty is a terminal")
	}
}

func TestProgressDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                            "0ms",
		350 * time.Millisecond:       "350ms",
		1234 * time.Millisecond:      "1.2s",
		59949 * time.Millisecond:     "59.9s",
		59999 * time.Millisecond:     "1m0s",
		123456 * time.Millisecond:    "2m3s",
		90*time.Minute + time.Second: "1h30m1s",
	} {
		assert.Equal(t, want, progressDuration(d), "%v", d)
	}
}

// TestProgressNamesTheTaskInMultiTaskRuns: with geas gate --all, each header names its task.
func TestProgressNamesTheTaskInMultiTaskRuns(t *testing.T) {
	var buf bytes.Buffer
	p := labeled(newProgress(&buf, false, fakeClock(250*time.Millisecond)), "t7")
	p.Start("go test ./...")
	p.Finish(tiers.EvalRun{Command: "go test ./...", Status: tiers.StatusPass, ExitCode: new(int)})
	assert.Contains(t, buf.String(), "t7: go test ./...")
	assert.Nil(t, labeled(nil, "t7"), "no progress stays no progress")
}

// TestProgressGroupsEachProcessInGitHubActions: in a GitHub Actions log each process is a group
// titled with its header, holding its output verbatim between ::stop-commands:: and a fresh
// token, with the finish line after the group; output that reads as a workflow command (an
// ::error::, an ::endgroup::, a forged resume token) stays inside the pause; output without a final
// newline gets one before the token; a title with a newline is escaped; output outside a process
// is not written.
func TestProgressGroupsEachProcessInGitHubActions(t *testing.T) {
	var buf bytes.Buffer
	n := 0
	token := func() string { n++; return strings.Repeat(string(rune('a'+n-1)), 32) }
	p := newGroupProgress(&buf, fakeClock(250*time.Millisecond), token)
	_, _ = p.Write([]byte("before any process\n"))
	p.Start("go test ./...")
	_, _ = p.Write([]byte("--- FAIL: TestGreet\n::error::forged\n::endgroup::\n::" + strings.Repeat("0", 32) + "::\n"))
	_, _ = p.Write([]byte("FAIL"))
	p.Finish(exitRun(tiers.StatusFail, 1, 1234))
	_, _ = p.Write([]byte("after the process\n"))
	p.Start("echo a\n::error::title")
	p.Finish(exitRun(tiers.StatusPass, 0, 5))
	a, b := strings.Repeat("a", 32), strings.Repeat("b", 32)
	assert.Equal(t, ""+
		"::group::▶ eval: go test ./...  [+250ms]\n"+
		"::stop-commands::"+a+"\n"+
		"--- FAIL: TestGreet\n::error::forged\n::endgroup::\n::"+strings.Repeat("0", 32)+"::\n"+
		"FAIL\n"+
		"::"+a+"::\n"+
		"::endgroup::\n"+
		"✘ exit 1 in 1.2s\n"+
		"::group::▶ eval: echo a%0A::error::title  [+500ms]\n"+
		"::stop-commands::"+b+"\n"+
		"::"+b+"::\n"+
		"::endgroup::\n"+
		"✔ exit 0 in 5ms\n", buf.String())

	t1, t2 := newStopToken(), newStopToken()
	assert.Regexp(t, `^[0-9a-f]{32}$`, t1)
	assert.NotEqual(t, t1, t2, "each process gets a token of its own")
}

// TestProgressInGitHubActionsIgnoresQuiet: in GitHub Actions ($GITHUB_ACTIONS=true or --format
// github) the reporter groups the output even with --quiet; elsewhere --quiet still means none.
func TestProgressInGitHubActionsIgnoresQuiet(t *testing.T) {
	for _, g := range []*globalOptions{{stderr: &bytes.Buffer{}, githubActions: true}, {stderr: &bytes.Buffer{}, format: formatGitHub}} {
		for _, quiet := range []bool{true, false} {
			p, ok := g.progress(quiet).(*progressWriter)
			require.True(t, ok)
			assert.True(t, p.group, "quiet %v: grouped", quiet)
		}
	}
	g := &globalOptions{stderr: &bytes.Buffer{}, format: formatText}
	assert.Nil(t, g.progress(true))
	p, ok := g.progress(false).(*progressWriter)
	require.True(t, ok)
	assert.False(t, p.group)
}
