// Package proc runs the processes the gate starts — eval commands and script detectors — and is
// the module's only user of os/exec. A process runs in its own process group with an explicit
// environment (the names in Spec.Withhold never reach it), under a timeout; its combined output
// is counted, hashed, tailed, logged and matched for metrics in constant memory; and no process
// of its group outlives Run.
//
// On Windows there are no process groups: at a timeout or a cancellation only the direct child
// is killed, and a grandchild it started may outlive the run (and keep its output pipe open, in
// which case Run waits for it). Eval commands run with sh -c there too, so they need a sh on PATH.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	// defaultTailBytes is how much combined output a Result keeps when the spec does not say.
	defaultTailBytes = 8 << 10
	// procWaitDelay bounds how long the gate waits for output once the process group is dead (a
	// process that left the group may still hold the pipe), and how long exec waits between
	// Cancel and a final Kill.
	procWaitDelay = 2 * time.Second
	// maxMetricLine is the longest line the metric regexes see; a longer line is not matched at all.
	maxMetricLine = 64 << 10
	// procReadBuf is the size of the one buffer output is read through.
	procReadBuf = 32 << 10
	// logBuf is the size of the buffer in front of the log file.
	logBuf = 64 << 10
	// maxLogBytes caps a log file: a command that prints forever must not fill the disk. The
	// output's byte count, SHA-256 and tail still cover everything it printed.
	maxLogBytes = 64 << 20
)

// errInterrupted is the Result.Error of a run whose parent context was cancelled (SIGINT/SIGTERM of
// the gate). Callers check ctx.Err() and write nothing.
const errInterrupted = "interrupted"

// Status is how a run ended, as the gate judges it.
type Status string

// The statuses of a Result; they are spelled as the gate's check statuses.
const (
	StatusPass  Status = "pass"  // exited with the expected code
	StatusFail  Status = "fail"  // another code, a signal, or the timeout
	StatusError Status = "error" // could not be started, or interrupted
)

// Spec describes one process the gate runs.
type Spec struct {
	Label      string            // shown as Result.Command
	Shell      string            // run as: sh -c Shell (eval commands)
	Argv       []string          // or run argv directly, no shell (script detector); exactly one of Shell/Argv
	Dir        string            // absolute working directory
	Env        map[string]string // added to the gate's own environment
	Withhold   []string          // variable names the child never sees, from the gate's environment or Env
	Timeout    time.Duration     // > 0
	ExpectExit int
	TailBytes  int                       // bytes of combined output kept in Result.OutputTail (0 → 8192)
	LogRoot    *os.Root                  // the run's log directory, opened before the run (see openLog)
	LogFile    string                    // plain name in LogRoot receiving the FULL combined output; "" keeps none
	LogName    string                    // how Result.Log names that file (e.g. ".geas/missions/m/tasks/t/gate-logs/gate-3/1.log")
	Metrics    map[string]*regexp.Regexp // each with one capture group
	Output     io.Writer                 // receives the combined output as it arrives, or nil; must not block for long
	// RunAs, when set, runs the process as another user (the policy's eval_user), which needs a
	// gate started as root; nil runs it as the gate's own user.
	RunAs *User
}

// User is the account a process runs as (Spec.RunAs): its ids, and the name and home directory
// that HOME, USER and LOGNAME are set to in the process's environment.
type User struct {
	Name     string
	UID, GID uint32
	Groups   []uint32
	Home     string
}

// String names the user with its uid, as errors and evidence show it.
func (u *User) String() string { return fmt.Sprintf("%s (uid %d)", u.Name, u.UID) }

// Result is what Run reports of one process.
type Result struct {
	Command      string
	Status       Status
	ExitCode     *int // nil unless the process exited on its own
	DurationMS   int64
	OutputTail   string
	OutputSHA256 string
	OutputBytes  int64
	Log          string // the log file as Spec.LogName names it, "" when none was kept
	TimedOut     bool
	Metrics      map[string]float64 // the last value each metric was captured with
	// MetricLow and MetricHigh are the lowest and highest value each metric was captured with.
	MetricLow  map[string]float64
	MetricHigh map[string]float64
	Error      string // why it did not pass, and problems that did not change the status
}

// Run runs spec's process in its own process group and reports what happened. It never returns a
// Go error: a process that could not be started is StatusError with the reason in Error.
//
// Memory stays constant whatever the process prints: output flows through one read buffer into a
// tail ring, a SHA-256, a byte count, the log file and (when metrics are asked for) a line buffer of
// at most maxMetricLine bytes.
//
// No process of the group outlives the call: the group is SIGKILLed on timeout, on cancellation
// of ctx, and again once the leader has exited, so background children die with it.
func Run(ctx context.Context, spec Spec) Result {
	start := time.Now()
	res := Result{Command: spec.Label, Status: StatusError}
	if ctx.Err() != nil {
		res.Error = errInterrupted
	} else if err := spec.validate(); err != nil {
		res.Error = err.Error()
	} else {
		run(ctx, spec, &res)
	}
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

// run starts the process of a valid spec, collects its output into res and judges how it ended.
func run(ctx context.Context, spec Spec, res *Result) {
	sink := newProcSink(spec)
	defer sink.closeLog()
	var notes []string // problems that do not change the status (log file, held pipe)
	if err := sink.openLog(spec.LogRoot, spec.LogFile, spec.LogName); err != nil {
		notes = append(notes, err.Error())
	} else if spec.LogFile != "" {
		res.Log = spec.LogName
		if res.Log == "" {
			res.Log = spec.LogFile
		}
	}

	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := command(runCtx, spec)
	pr, err := start(ctx, cmd)
	if err != nil {
		res.Error = err.Error()
		return
	}
	defer pr.Close()
	waitErr, err := wait(cmd, sink, pr)
	if err != nil {
		notes = append(notes, err.Error())
	}
	if err := sink.closeLog(); err != nil {
		notes = append(notes, err.Error())
	}

	res.OutputTail = sink.tail.String()
	res.OutputSHA256 = hex.EncodeToString(sink.sum.Sum(nil))
	res.OutputBytes = sink.n
	if len(sink.metrics.found) > 0 {
		res.Metrics = sink.metrics.found
		res.MetricLow, res.MetricHigh = sink.metrics.low, sink.metrics.high
	}
	if ctx.Err() != nil {
		// The gate writes nothing when interrupted: drop the partial log too.
		res.Status = StatusError
		notes = []string{errInterrupted}
		if res.Log != "" {
			sink.closeLog()
			_ = spec.LogRoot.Remove(spec.LogFile)
			res.Log = ""
		}
	} else {
		notes = judge(runCtx, spec, cmd.ProcessState, waitErr, res, notes)
	}
	res.Error = strings.Join(notes, "; ")
}

// command builds the process of spec, in a process group of its own that cancelling ctx kills.
func command(ctx context.Context, spec Spec) *exec.Cmd {
	var cmd *exec.Cmd
	if spec.Argv != nil {
		cmd = exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", spec.Shell)
	}
	cmd.Dir = spec.Dir
	cmd.Env = procEnv(spec.Dir, spec.Env, spec.Withhold, spec.RunAs)
	setGroup(cmd)
	setUser(cmd, spec.RunAs)
	cmd.Cancel = func() error { return killProcessGroup(cmd.Process) }
	cmd.WaitDelay = procWaitDelay
	return cmd
}

// start starts cmd with its stdout and stderr on one pipe and returns the pipe's read end. A
// start that fails once ctx is cancelled says errInterrupted.
//
// The gate owns the pipe rather than letting exec copy it: exec's Wait would also wait for
// every background child holding the write end, up to WaitDelay, before the group could be
// killed. Here Wait returns when the leader exits, the group dies, and the pipe drains to EOF.
func start(ctx context.Context, cmd *exec.Cmd) (*os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create output pipe: %v", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw // one writer: stdout and stderr interleave in order
	err = cmd.Start()
	pw.Close() // the child has its copy; EOF comes when every holder is gone
	if err != nil {
		pr.Close()
		if ctx.Err() != nil {
			return nil, errors.New(errInterrupted)
		}
		return nil, err
	}
	return pr, nil
}

// wait drains pr into sink while it waits for cmd, kills cmd's process group, and stops reading
// procWaitDelay after that if the pipe is still held. It returns cmd.Wait's error and the
// reading's.
func wait(cmd *exec.Cmd, sink *procSink, pr *os.File) (waitErr, err error) {
	copied := make(chan error, 1)
	go func() { copied <- sink.drain(pr) }()
	// Background children die with the leader. The group is killed while the exited leader is
	// still unreaped, so its pid, which is the group id, cannot have been reused by then.
	leaderDone := awaitExit(cmd.Process.Pid)
	if leaderDone {
		_ = killProcessGroup(cmd.Process)
	}
	waitErr = cmd.Wait()
	if !leaderDone {
		_ = killProcessGroup(cmd.Process)
	}
	select {
	case err = <-copied:
	case <-time.After(procWaitDelay):
		// A process that left the group (setsid) still holds the pipe: stop reading.
		_ = pr.SetReadDeadline(time.Now())
		<-copied
		err = fmt.Errorf("output pipe still held open %s after the %s was killed; stopped reading", procWaitDelay, groupName)
	}
	return waitErr, err
}

// judge sets res's status (and exit code, timeout) from how a process that was not interrupted
// ended, and returns notes with the reason first when it did not exit on its own.
func judge(runCtx context.Context, spec Spec, state *os.ProcessState, waitErr error, res *Result, notes []string) []string {
	exited := state != nil && state.Exited()
	switch {
	case runCtx.Err() != nil && !exited:
		res.Status = StatusFail
		res.TimedOut = true
		return append([]string{fmt.Sprintf("timed out after %s; %s killed", spec.Timeout, groupName)}, notes...)
	case exited:
		code := state.ExitCode()
		res.ExitCode = &code
		res.Status = StatusFail
		if code == spec.ExpectExit {
			res.Status = StatusPass
		}
		return notes
	}
	res.Status = StatusFail
	why := "terminated abnormally"
	if state != nil {
		if sig, ok := signalled(state); ok {
			why = "killed by signal: " + sig
		}
	} else if waitErr != nil {
		why = waitErr.Error()
	}
	return append([]string{why}, notes...)
}

func (s Spec) validate() error {
	switch {
	case (s.Shell == "") == (len(s.Argv) == 0):
		return errors.New("invalid run spec: exactly one of a shell command and an argv is required")
	case len(s.Argv) > 0 && s.Argv[0] == "":
		return errors.New("invalid run spec: empty program name")
	case s.Timeout <= 0:
		return fmt.Errorf("invalid run spec: timeout %s is not positive", s.Timeout)
	case !filepath.IsAbs(s.Dir):
		return fmt.Errorf("invalid run spec: working directory %q is not absolute", s.Dir)
	case s.RunAs != nil && !canRunAs:
		return fmt.Errorf("invalid run spec: cannot run as %s on this platform", s.RunAs)
	case s.LogFile != "" && (s.LogRoot == nil || s.LogFile == "." || s.LogFile == ".." || strings.ContainsAny(s.LogFile, `/\`)):
		return fmt.Errorf("invalid run spec: log file %q must be a plain name in an opened log directory", s.LogFile)
	}
	return nil
}

// procEnv is the gate's environment without the withheld variables, with PWD set to dir (exec
// only does that when Env is nil) and the spec's variables added in a stable order; exec keeps
// the last value of a repeated name. The processes the gate runs are code the agents wrote: they
// never see the key that signs the history (SPEC §9), whichever way it is spelled in the
// environment, and a contract cannot name the variable either. A process run as another user
// gets that user's HOME, USER and LOGNAME (the gate's own would name a home it cannot write).
func procEnv(dir string, extra map[string]string, withhold []string, as *User) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !isWithheld(kv, withhold) {
			env = append(env, kv)
		}
	}
	if as != nil {
		env = append(env, "HOME="+as.Home, "USER="+as.Name, "LOGNAME="+as.Name)
	}
	env = append(env, "PWD="+dir)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if kv := k + "=" + extra[k]; !isWithheld(kv, withhold) {
			env = append(env, kv)
		}
	}
	return env
}

// isWithheld reports whether an environment entry sets one of the withheld variables. The name
// is compared exactly as the kernel passes it (up to the first "="), with nothing trimmed: a
// child reading GEAS_GATE_KEY finds none.
func isWithheld(kv string, withhold []string) bool {
	name, _, _ := strings.Cut(kv, "=")
	return slices.Contains(withhold, name)
}

// procSink receives a process's combined output. It is written by one goroutine and read once that
// goroutine is done, so it needs no lock.
type procSink struct {
	tail    procRing
	sum     hash.Hash
	n       int64
	metrics procMetrics

	logPath string
	logFile *os.File
	log     *bufio.Writer
	logErr  error
	logged  int64 // bytes written to the log
	output  io.Writer
}

func newProcSink(spec Spec) *procSink {
	size := spec.TailBytes
	if size <= 0 {
		size = defaultTailBytes
	}
	return &procSink{
		tail:    procRing{buf: make([]byte, size)},
		sum:     sha256.New(),
		metrics: newProcMetrics(spec.Metrics),
		output:  spec.Output,
	}
}

// openLog creates name in root with O_EXCL: a file or symlink already there (planted before the
// run, or by an earlier command of it) is never truncated or written through, and no path leaves
// root. An error means no log is kept, with a note saying why; the process still runs and its
// output is still counted, hashed and tailed.
func (s *procSink) openLog(root *os.Root, name, shown string) error {
	if name == "" {
		return nil
	}
	if shown == "" {
		shown = name
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create log: %s already exists: the gate never writes through a file it did not create, so this command's log is not kept", shown)
	}
	if err != nil {
		return fmt.Errorf("create log: %w", err)
	}
	s.logPath, s.logFile, s.log = shown, f, bufio.NewWriterSize(f, logBuf)
	return nil
}

// Write never fails: a log error is remembered and the log abandoned, so the process is never
// blocked on a full pipe because its log could not be written.
func (s *procSink) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	s.sum.Write(p)
	s.tail.Write(p)
	s.metrics.Write(p)
	if s.output != nil {
		_, _ = s.output.Write(p)
	}
	if s.log != nil && s.logErr == nil && s.logged < maxLogBytes {
		chunk := p
		if room := maxLogBytes - s.logged; int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		if _, err := s.log.Write(chunk); err != nil {
			s.logErr = fmt.Errorf("write log %s: %w", s.logPath, err)
		}
		s.logged += int64(len(chunk))
		if s.logged >= maxLogBytes && s.logErr == nil {
			fmt.Fprintf(s.log, "\n[geas: log truncated after %d bytes; output_bytes, output_sha256 and output_tail cover all of the output]\n", maxLogBytes)
		}
	}
	return len(p), nil
}

// drain copies r into s until EOF or a read error (a read deadline when the gate stops waiting).
func (s *procSink) drain(r io.Reader) error {
	buf := make([]byte, procReadBuf)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.Write(buf[:n])
		}
		switch {
		case err == io.EOF:
			s.metrics.flush()
			return nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.metrics.flush()
			return nil // the caller explains why it stopped reading
		case err != nil:
			s.metrics.flush()
			return fmt.Errorf("read output: %w", err)
		}
	}
}

// closeLog flushes and closes the log once; it returns the first log error.
func (s *procSink) closeLog() error {
	if s.logFile == nil {
		return s.logErr
	}
	if s.logErr == nil {
		if err := s.log.Flush(); err != nil {
			s.logErr = fmt.Errorf("write log %s: %w", s.logPath, err)
		}
	}
	if err := s.logFile.Close(); err != nil && s.logErr == nil {
		s.logErr = fmt.Errorf("close log %s: %w", s.logPath, err)
	}
	s.logFile, s.log = nil, nil
	return s.logErr
}

// procRing keeps the last len(buf) bytes written.
type procRing struct {
	buf     []byte
	next    int   // where the next byte goes
	written int64 // total bytes written
}

func (r *procRing) Write(p []byte) {
	r.written += int64(len(p))
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.next = 0
		return
	}
	n := copy(r.buf[r.next:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
	}
	r.next = (r.next + len(p)) % len(r.buf)
}

// String returns the kept bytes in order. When older output was dropped, the cut may fall inside a
// UTF-8 sequence: its leading continuation bytes are trimmed.
func (r *procRing) String() string {
	if r.written <= int64(len(r.buf)) {
		return string(r.buf[:r.written])
	}
	b := make([]byte, 0, len(r.buf))
	b = append(b, r.buf[r.next:]...)
	b = append(b, r.buf[:r.next]...)
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return string(b)
}

// procMetrics matches metric regexes against every line of output no longer than maxMetricLine.
// The last numeric capture of each metric wins.
type procMetrics struct {
	names []string
	res   map[string]*regexp.Regexp
	line  []byte
	found map[string]float64
	// low and high are the extremes of every value captured for a metric (found is the last).
	low, high map[string]float64
	// long is set when the current line is longer than maxMetricLine: such a line is never matched,
	// since a match on its cut ("failures": 1500 cut to 15) would read another number (SPEC §5.5).
	long bool
}

func newProcMetrics(res map[string]*regexp.Regexp) procMetrics {
	if len(res) == 0 {
		return procMetrics{}
	}
	return procMetrics{
		names: slices.Sorted(maps.Keys(res)),
		res:   res,
		line:  make([]byte, 0, maxMetricLine),
		found: map[string]float64{},
		low:   map[string]float64{},
		high:  map[string]float64{},
	}
}

func (m *procMetrics) Write(p []byte) {
	if len(m.names) == 0 {
		return
	}
	for len(p) > 0 {
		seg, rest, complete := bytes.Cut(p, []byte{'\n'})
		if room := maxMetricLine - len(m.line); len(seg) <= room {
			m.line = append(m.line, seg...)
		} else {
			m.long = true
		}
		if !complete {
			return
		}
		m.match()
		p = rest
	}
}

// flush matches the last line when the output did not end with a newline.
func (m *procMetrics) flush() {
	if len(m.line) > 0 || m.long {
		m.match()
	}
}

func (m *procMetrics) match() {
	if m.long {
		m.line, m.long = m.line[:0], false
		return
	}
	line := bytes.TrimSuffix(m.line, []byte{'\r'})
	for _, name := range m.names {
		all := m.res[name].FindAllSubmatchIndex(line, -1)
		for i := len(all) - 1; i >= 0; i-- {
			loc := all[i]
			if len(loc) < 4 || loc[2] < 0 {
				continue
			}
			if v, ok := parseMetric(line[loc[2]:loc[3]]); ok {
				m.found[name] = v
				if lo, seen := m.low[name]; !seen || v < lo {
					m.low[name] = v
				}
				if hi, seen := m.high[name]; !seen || v > hi {
					m.high[name] = v
				}
				break
			}
		}
	}
	m.line = m.line[:0]
}

// metricNumber is the grammar of a captured metric (SPEC §5.5): a plain decimal number with an
// optional sign, digits (grouped by "," only in groups of three: 1,234,567), an optional "."
// fraction and exponent, and an optional "%" after it. Anything else — 12,5 (a decimal comma),
// 0x1p10, 1_000, 8,0,0, 80,00, ,95, 95, — is not a number to the gate, whatever strconv accepts.
var metricNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?%?$`)
})

// parseMetric reads a captured number by metricNumber. NaN and infinities (also an exponent that
// overflows) are not measurements, and cannot be written as JSON.
func parseMetric(b []byte) (float64, bool) {
	s := strings.TrimSpace(string(b))
	if !metricNumber().MatchString(s) {
		return 0, false
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, ",", ""), "%")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// LogFileSafe makes a label usable as a log file name: every byte outside [A-Za-z0-9._-] becomes
// "_", so a criterion id such as "a/../b" names one file in the log directory.
func LogFileSafe(label string) string {
	b := []byte(label)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
