//go:build unix

package proc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shellSpec is a Spec for a shell command in a fresh directory.
// logRoot makes dir and opens it as a log directory.
func logRoot(t testing.TB, dir string) *os.Root {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func shellSpec(t testing.TB, shell string) Spec {
	return Spec{Label: shell, Shell: shell, Dir: t.TempDir(), Timeout: 30 * time.Second}
}

// pgidFromOutput reads the process group id a command printed with `echo $$` on its first line.
func pgidFromOutput(t *testing.T, out string) int {
	t.Helper()
	first, _, _ := strings.Cut(out, "\n")
	pgid, err := strconv.Atoi(strings.TrimSpace(first))
	require.NoError(t, err, "first line of output %q", out)
	require.Greater(t, pgid, 1)
	return pgid
}

// assertGroupGone polls, for up to 2s, until no process of group pgid is alive. A killed process
// stays a zombie until its reaper collects it (here the background children are orphans reaped by
// PID 1, which some sandboxes do lazily), so a group whose remaining members are all zombies is gone.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	var live []string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if live = liveGroupMembers(t, pgid); len(live) == 0 {
			return
		}
	}
	t.Errorf("process group %d still alive 2s after Run returned: %v", pgid, live)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// liveGroupMembers lists the processes of group pgid that are not zombies, from /proc.
func liveGroupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var live []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" || f[0] == "X" {
			continue
		}
		live = append(live, strings.TrimSpace(string(b[:i+1]))+" "+f[0])
	}
	return live
}

func TestRunProcessExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		shell  string
		expect int
		status Status
		code   int
	}{
		{"zero passes", "exit 0", 0, StatusPass, 0},
		{"non-zero fails", "exit 2", 0, StatusFail, 2},
		{"expected non-zero passes", "exit 3", 3, StatusPass, 3},
		{"zero fails when non-zero is expected", "true", 1, StatusFail, 0},
		{"command not found is a failure of the shell", "no-such-program-geas", 0, StatusFail, 127},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := shellSpec(t, tc.shell)
			spec.ExpectExit = tc.expect
			run := Run(t.Context(), spec)
			assert.Equal(t, tc.status, run.Status, "error %q", run.Error)
			require.NotNil(t, run.ExitCode)
			assert.Equal(t, tc.code, *run.ExitCode)
			assert.Equal(t, tc.shell, run.Command)
			assert.False(t, run.TimedOut)
			assert.Empty(t, run.Error)
			assert.GreaterOrEqual(t, run.DurationMS, int64(0))
		})
	}
}

func TestRunProcessEnvDirAndArgv(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{
			name: "env is added to the gate's environment",
			spec: Spec{Shell: `printf '%s|%s' "$GEAS_TEST_VAR" "${PATH:+has-path}"`, Env: map[string]string{"GEAS_TEST_VAR": "a b=c"}},
			want: "a b=c|has-path",
		},
		{
			name: "runs in Dir with PWD set to it",
			spec: Spec{Shell: `printf '%s|%s' "$(pwd -P)" "$PWD"`},
			want: real + "|" + dir,
		},
		{
			name: "argv runs without a shell",
			spec: Spec{Argv: []string{"printf", "%s|%s", "$HOME", "a b"}},
			want: "$HOME|a b",
		},
		{
			name: "stdout and stderr are combined in order",
			spec: Spec{Shell: `echo one; echo two >&2; echo three`},
			want: "one\ntwo\nthree\n",
		},
		{
			name: "stdin is empty",
			spec: Spec{Shell: `wc -c`},
			want: "0\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Dir, spec.Timeout = dir, 30*time.Second
			run := Run(t.Context(), spec)
			require.Equal(t, StatusPass, run.Status, "error %q", run.Error)
			assert.Equal(t, strings.TrimSpace(tc.want), strings.TrimSpace(run.OutputTail))
		})
	}
}

func TestRunProcessCannotStart(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{"missing program", Spec{Argv: []string{"no-such-program-geas"}, Dir: dir}, "executable file not found"},
		{"program path that does not exist", Spec{Argv: []string{filepath.Join(dir, "nope")}, Dir: dir}, "no such file"},
		{"missing directory", Spec{Shell: "true", Dir: filepath.Join(dir, "gone")}, "no such file"},
		{"both shell and argv", Spec{Shell: "true", Argv: []string{"true"}, Dir: dir}, "exactly one"},
		{"neither shell nor argv", Spec{Dir: dir}, "exactly one"},
		{"relative directory", Spec{Shell: "true", Dir: "rel"}, "not absolute"},
		{"no timeout", Spec{Shell: "true", Dir: dir, Timeout: -1}, "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Timeout == 0 {
				spec.Timeout = 30 * time.Second
			}
			run := Run(t.Context(), spec)
			assert.Equal(t, StatusError, run.Status)
			assert.Nil(t, run.ExitCode)
			assert.Contains(t, run.Error, tc.wantErr)
		})
	}
}

// TestWithheldVariablesNeverReachTheChild: a withheld name is dropped from the gate's environment
// and from Env (SPEC §9: the gate's signing key never reaches the processes it runs).
func TestWithheldVariablesNeverReachTheChild(t *testing.T) {
	const name, key = "GEAS_GATE_KEY", "sekrit-gate-key-7f3a"
	t.Setenv(name, key)
	env := procEnv("/x", map[string]string{name: "from-the-contract", "OTHER": "1"}, []string{name}, nil)
	for _, kv := range env {
		assert.False(t, strings.HasPrefix(kv, name+"="), "%q", kv)
		assert.NotContains(t, kv, key)
	}
	assert.Contains(t, env, "OTHER=1")
	assert.Contains(t, env, "PWD=/x")
}

func TestTimedOutCommandLeavesNoProcessAlive(t *testing.T) {
	spec := shellSpec(t, `echo $$; sleep 300 & sleep 300 & echo started; wait`)
	spec.Timeout = 500 * time.Millisecond
	start := time.Now()
	run := Run(t.Context(), spec)
	t.Logf("returned after %s", time.Since(start))
	assert.Equal(t, StatusFail, run.Status)
	assert.True(t, run.TimedOut)
	assert.Nil(t, run.ExitCode)
	assert.Equal(t, "timed out after 500ms; process group killed", run.Error)
	assert.Contains(t, run.OutputTail, "started\n")
	assertGroupGone(t, pgidFromOutput(t, run.OutputTail))
}

func TestBackgroundChildDoesNotOutliveTheRun(t *testing.T) {
	spec := shellSpec(t, `echo $$; sleep 300 & echo hi`)
	run := Run(t.Context(), spec)
	require.Equal(t, StatusPass, run.Status, "error %q", run.Error)
	assert.Empty(t, run.Error)
	assert.Contains(t, run.OutputTail, "hi\n")
	assert.Less(t, run.DurationMS, (procWaitDelay + 10*time.Second).Milliseconds()) // returned at all
	assertGroupGone(t, pgidFromOutput(t, run.OutputTail))
}

func TestPipeHeldOutsideTheGroupIsAbandoned(t *testing.T) {
	t.Parallel() // waits procWaitDelay
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	// The child leaves the process group, so killing the group cannot close its copy of the pipe.
	spec := shellSpec(t, `setsid sh -c 'touch left; exec sleep 4' & while [ ! -e left ]; do sleep 0.01; done; echo hi`)
	run := Run(t.Context(), spec)
	assert.Equal(t, StatusPass, run.Status)
	assert.Equal(t, "hi\n", run.OutputTail)
	assert.Contains(t, run.Error, "output pipe still held open 2s after the process group was killed")
	assert.Less(t, run.DurationMS, int64(4000), "the gate stopped reading before the stray process exited")
}

func TestInterruptedRunKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	spec := Spec{
		Shell:   `echo $$; sleep 300 & touch ready; wait`,
		Dir:     dir,
		Timeout: time.Minute,
		LogRoot: logRoot(t, filepath.Join(dir, "logs")),
		LogFile: "1.log",
	}
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(ready); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	run := Run(ctx, spec)
	require.Error(t, ctx.Err())
	assert.Equal(t, StatusError, run.Status)
	assert.Equal(t, "interrupted", run.Error)
	assert.Nil(t, run.ExitCode)
	assert.False(t, run.TimedOut)
	assert.Empty(t, run.Log)
	assert.NoFileExists(t, filepath.Join(dir, "logs", "1.log"), "an interrupted run leaves no log")
	assertGroupGone(t, pgidFromOutput(t, run.OutputTail))

	t.Run("already cancelled starts nothing", func(t *testing.T) {
		run := Run(ctx, Spec{Shell: "touch started", Dir: dir, Timeout: time.Minute})
		assert.Equal(t, StatusError, run.Status)
		assert.Equal(t, "interrupted", run.Error)
		assert.NoFileExists(t, filepath.Join(dir, "started"))
	})
}

func TestLargeOutputKeepsBoundedMemory(t *testing.T) {
	const n = 50_000_000
	const tailBytes = 8192
	spec := shellSpec(t, `head -c 50000000 /dev/zero | tr '\0' 'a'; echo; echo tail-marker`)
	spec.TailBytes = tailBytes
	logDir := filepath.Join(t.TempDir(), "gate-logs", "gate-1")
	spec.LogRoot, spec.LogFile = logRoot(t, logDir), "1.log"
	spec.LogName = "gate-logs/gate-1/1.log"

	// The expected output, streamed the same way.
	want := sha256.New()
	chunk := []byte(strings.Repeat("a", 1<<20))
	for left := n; left > 0; left -= len(chunk) {
		want.Write(chunk[:min(left, len(chunk))])
	}
	want.Write([]byte("\ntail-marker\n"))
	wantSum := hex.EncodeToString(want.Sum(nil))
	const wantBytes = n + len("\ntail-marker\n")
	chunk = nil

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	run := Run(t.Context(), spec)
	close(stop)
	wg.Wait()

	require.Equal(t, StatusPass, run.Status, "error %q", run.Error)
	assert.Empty(t, run.Error)
	assert.Equal(t, int64(wantBytes), run.OutputBytes)
	assert.Len(t, run.OutputTail, tailBytes)
	assert.True(t, strings.HasSuffix(run.OutputTail, "a\ntail-marker\n"))
	assert.Equal(t, wantSum, run.OutputSHA256)
	assert.Equal(t, "gate-logs/gate-1/1.log", run.Log)
	t.Logf("heap in use: %d MiB before, peak %d MiB during the run", base>>20, peak>>20)
	assert.Less(t, peak, base+16<<20, "heap grew by more than 16 MiB while the process printed 50 MB")

	f, err := os.Open(filepath.Join(logDir, "1.log"))
	require.NoError(t, err)
	defer f.Close()
	got := sha256.New()
	size, err := io.Copy(got, f)
	require.NoError(t, err)
	assert.Equal(t, int64(wantBytes), size)
	assert.Equal(t, wantSum, hex.EncodeToString(got.Sum(nil)))
}

func TestRunProcessLogErrors(t *testing.T) {
	t.Run("a failing log write is reported and output still drains", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		// The gate only creates logs it opens itself (O_EXCL), so the full device is put
		// behind the sink directly: what is under test is how a write error is handled.
		f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		require.NoError(t, err)
		s := newProcSink(Spec{})
		s.logPath, s.logFile, s.log = "/dev/full", f, bufio.NewWriterSize(f, logBuf)
		out := bytes.Repeat([]byte{'a'}, 1_000_000)
		n, err := s.Write(out)
		assert.Equal(t, len(out), n)
		assert.NoError(t, err, "a log error never blocks the output")
		s.Write([]byte("done\n"))
		err = s.closeLog()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "write log /dev/full")
		assert.Contains(t, err.Error(), "no space left on device")
		assert.Equal(t, int64(1000005), s.n)
		assert.True(t, strings.HasSuffix(s.tail.String(), "done\n"))
	})
	t.Run("a log that already exists is never written through, and the command still runs", func(t *testing.T) {
		dir := t.TempDir()
		outside := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(outside, []byte("keep me"), 0o644))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "1.log")))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "2.log"), []byte("old"), 0o644))
		for _, name := range []string{"1.log", "2.log"} {
			spec := shellSpec(t, `echo ran`)
			spec.LogRoot, spec.LogFile, spec.LogName = logRoot(t, dir), name, "gate-logs/gate-1/"+name
			run := Run(t.Context(), spec)
			assert.Equal(t, StatusPass, run.Status, name)
			assert.Equal(t, "ran\n", run.OutputTail, name)
			assert.Empty(t, run.Log, name)
			assert.Contains(t, run.Error, "create log: gate-logs/gate-1/"+name+" already exists", name)
		}
		got, err := os.ReadFile(outside)
		require.NoError(t, err)
		assert.Equal(t, "keep me", string(got), "the planted link was not followed")
		got, err = os.ReadFile(filepath.Join(dir, "2.log"))
		require.NoError(t, err)
		assert.Equal(t, "old", string(got), "an existing file was not truncated")
	})
	t.Run("a command that replaces the log directory by a symlink redirects no log", func(t *testing.T) {
		base := t.TempDir()
		dir := filepath.Join(base, "gate-1")
		outside := t.TempDir()
		root := logRoot(t, dir)
		swap := shellSpec(t, "mv "+dir+" "+dir+".moved && ln -s "+outside+" "+dir)
		swap.LogRoot, swap.LogFile = root, "1.log"
		require.Equal(t, StatusPass, Run(t.Context(), swap).Status)
		next := shellSpec(t, `echo second`)
		next.LogRoot, next.LogFile = root, "2.log"
		run := Run(t.Context(), next)
		assert.Equal(t, StatusPass, run.Status)
		assert.NoFileExists(t, filepath.Join(outside, "2.log"), "the log did not follow the symlink out")
		assert.FileExists(t, filepath.Join(dir+".moved", "2.log"), "it went to the directory the root holds")
	})
	t.Run("a log file name with a slash is refused", func(t *testing.T) {
		spec := shellSpec(t, `echo ran`)
		spec.LogRoot, spec.LogFile = logRoot(t, t.TempDir()), "../1.log"
		run := Run(t.Context(), spec)
		assert.Equal(t, StatusError, run.Status)
		assert.Contains(t, run.Error, "must be a plain name")
	})
}

func TestRunProcessKilledBySignal(t *testing.T) {
	run := Run(t.Context(), shellSpec(t, `kill -KILL $$`))
	assert.Equal(t, StatusFail, run.Status)
	assert.Nil(t, run.ExitCode)
	assert.False(t, run.TimedOut)
	assert.Equal(t, "killed by signal: killed", run.Error)
}

func TestRunProcessMetrics(t *testing.T) {
	tests := []struct {
		name    string
		shell   string
		metrics map[string]string
		want    map[string]float64
	}{
		{
			name:    "last match wins",
			shell:   `echo 'coverage: 10%'; echo 'coverage: 80.5%'; echo other`,
			metrics: map[string]string{"coverage": `coverage: ([0-9.]+)%`},
			want:    map[string]float64{"coverage": 80.5},
		},
		{
			name:    "thousands separators",
			shell:   `echo 'rps 1,234.5'`,
			metrics: map[string]string{"rps": `rps (\S+)`},
			want:    map[string]float64{"rps": 1234.5},
		},
		{
			name:    "a non-numeric capture is ignored",
			shell:   `echo 'score 3'; echo 'score n/a'; echo 'score NaN'; echo 'score Inf'`,
			metrics: map[string]string{"score": `score (\S+)`},
			want:    map[string]float64{"score": 3},
		},
		{
			name:    "never numeric means not reported",
			shell:   `echo 'score n/a'`,
			metrics: map[string]string{"score": `score (\S+)`, "other": `other (\d+)`},
			want:    nil,
		},
		{
			name:    "the last match on a line wins",
			shell:   `echo 'loss 1.5 loss 0.25'`,
			metrics: map[string]string{"loss": `loss (\S+)`},
			want:    map[string]float64{"loss": 0.25},
		},
		{
			name:    "lines are matched one at a time, CRLF included",
			shell:   `printf 'a=1\r\nb=2\r\n'`,
			metrics: map[string]string{"a": `^a=(\d+)$`, "b": `^b=(\d+)$`},
			want:    map[string]float64{"a": 1, "b": 2},
		},
		{
			name:    "a line split across writes still matches",
			shell:   `printf 'accu'; sleep 0.2; printf 'racy: 0.93\n'`,
			metrics: map[string]string{"accuracy": `accuracy: ([0-9.]+)`},
			want:    map[string]float64{"accuracy": 0.93},
		},
		{
			name:    "a last line without a newline counts",
			shell:   `printf 'n=7'`,
			metrics: map[string]string{"n": `n=(\d+)`},
			want:    map[string]float64{"n": 7},
		},
		{
			name:    "stderr lines count",
			shell:   `echo 'p95 12ms' >&2`,
			metrics: map[string]string{"p95": `p95 (\d+)ms`},
			want:    map[string]float64{"p95": 12},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := shellSpec(t, tc.shell)
			spec.Metrics = map[string]*regexp.Regexp{}
			for name, expr := range tc.metrics {
				spec.Metrics[name] = regexp.MustCompile(expr)
			}
			run := Run(t.Context(), spec)
			require.Equal(t, StatusPass, run.Status, "error %q", run.Error)
			assert.Equal(t, tc.want, run.Metrics)
		})
	}
}

func TestProcMetricsLineHandling(t *testing.T) {
	re := map[string]*regexp.Regexp{"m": regexp.MustCompile(`m=(\d+)`)}
	t.Run("a line split across writes", func(t *testing.T) {
		m := newProcMetrics(re)
		for _, w := range []string{"x m", "=", "4", "2\nm=", "1"} {
			m.Write([]byte(w))
		}
		assert.Equal(t, map[string]float64{"m": 42}, m.found)
		m.flush()
		assert.Equal(t, map[string]float64{"m": 1}, m.found)
	})
	t.Run("a line longer than 64 KiB is never matched", func(t *testing.T) {
		// SPEC §5.5: matching a cut line would read "failures": 1500 as 15.
		m := newProcMetrics(re)
		long := strings.Repeat("x", maxMetricLine-4) + "m=12345" // the match straddles the limit
		for range 10 {
			m.Write([]byte(long))
		}
		assert.LessOrEqual(t, cap(m.line), maxMetricLine)
		m.Write([]byte("\n"))
		assert.Empty(t, m.found, "a cut line reads another number")
		assert.LessOrEqual(t, cap(m.line), maxMetricLine)
		m.Write([]byte("m=9\n"))
		assert.Equal(t, map[string]float64{"m": 9}, m.found)
	})
	t.Run("a line of exactly 64 KiB is matched", func(t *testing.T) {
		m := newProcMetrics(re)
		line := strings.Repeat("x", maxMetricLine-len("m=1500")) + "m=1500"
		m.Write([]byte(line[:1000]))
		m.Write([]byte(line[1000:] + "\n"))
		assert.Equal(t, map[string]float64{"m": 1500}, m.found)
	})
	t.Run("a long last line without a newline is not matched", func(t *testing.T) {
		m := newProcMetrics(re)
		m.Write([]byte(strings.Repeat("y", maxMetricLine) + "m=15"))
		m.flush()
		assert.Empty(t, m.found)
	})
}

// TestParseMetric: a captured metric is a plain decimal number (SPEC §5.5).
func TestParseMetric(t *testing.T) {
	good := map[string]float64{
		"0": 0, "95": 95, "-3": -3, "+4": 4, "91.5": 91.5, "91.5%": 91.5, "95%": 95, "1e3": 1000, "2.5E-1": 0.25,
		"1,234": 1234, "1,234,567": 1234567, "12,345.5": 12345.5, " 80 ": 80, "007": 7, "-1,000%": -1000,
	}
	for in, want := range good {
		v, ok := parseMetric([]byte(in))
		assert.True(t, ok, "%q is a number", in)
		assert.Equal(t, want, v, in)
	}
	for _, in := range []string{
		"12,5", "12,5%", "0x1p10", "0x1.4p6", "0X10", "1_000", "8,0,0", "80,00", ",95", "95,", "1234,567", "1,2345",
		"NaN", "nan", "Inf", "+Inf", "-infinity", "1e999", "", ".5", "95.", "%", "5%%", "1.2.3", "١٢", "1e", "e5", "--1", "1 000",
	} {
		_, ok := parseMetric([]byte(in))
		assert.False(t, ok, "%q is not a number", in)
	}
}

func TestProcRing(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		writes []string
		want   string
	}{
		{"short output is kept whole", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly full", 4, []string{"ab", "cd"}, "abcd"},
		{"wraps", 4, []string{"abc", "def"}, "cdef"},
		{"one big write", 4, []string{"abcdefgh"}, "efgh"},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e"}, "cde"},
		{"a cut inside a rune is trimmed", 4, []string{"xx€€"}, "€"},
		{"a whole rune at the start is kept", 3, []string{"ab€"}, "€"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := procRing{buf: make([]byte, tc.size)}
			for _, w := range tc.writes {
				r.Write([]byte(w))
			}
			assert.Equal(t, tc.want, r.String())
		})
	}
}

// BenchmarkRunProcessOutput measures a process printing 100 MB; run with -benchmem to see that the
// gate's memory does not grow with the output.
func BenchmarkRunProcessOutput(b *testing.B) {
	spec := shellSpec(b, `head -c 100000000 /dev/zero`)
	spec.LogRoot = logRoot(b, b.TempDir())
	spec.Metrics = map[string]*regexp.Regexp{"m": regexp.MustCompile(`m=(\d+)`)}
	b.SetBytes(100_000_000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		spec.LogFile = strconv.Itoa(i) + ".log" // logs are created with O_EXCL: one name a run
		run := Run(b.Context(), spec)
		if run.Status != StatusPass || run.OutputBytes != 100_000_000 || run.Error != "" {
			b.Fatalf("run: %s %d bytes %q", run.Status, run.OutputBytes, run.Error)
		}
	}
}

// TestRunAsRunsTheProcessAsThatUser: a Spec with RunAs runs as that user, with its HOME, USER
// and LOGNAME, and without the gate's supplementary groups. It needs root and a nobody user.
func TestRunAsRunsTheProcessAsThatUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	out, err := exec.Command("id", "-u", "nobody").Output()
	if err != nil {
		t.Skip("no nobody user")
	}
	uid, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	require.NoError(t, err)
	out, err = exec.Command("id", "-g", "nobody").Output()
	require.NoError(t, err)
	gid, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 32)
	require.NoError(t, err)

	spec := shellSpec(t, `echo "$(id -u) $(id -g) $(id -G) $HOME $USER $LOGNAME"`)
	spec.Dir = "/"
	spec.RunAs = &User{Name: "nobody", UID: uint32(uid), GID: uint32(gid), Home: "/nonexistent"}
	res := Run(context.Background(), spec)
	require.Equal(t, StatusPass, res.Status, res.Error)
	want := fmt.Sprintf("%d %d %d /nonexistent nobody nobody\n", uid, gid, gid)
	assert.Equal(t, want, res.OutputTail)

	spec.RunAs = nil // the control: the gate's own user
	res = Run(context.Background(), spec)
	require.Equal(t, StatusPass, res.Status, res.Error)
	assert.True(t, strings.HasPrefix(res.OutputTail, "0 "), res.OutputTail)
}
