package tiers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/internal/testresults"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// tier1Input is what tier 1 needs: the contract's eval commands and where to run and log them.
type tier1Input struct {
	Commands       []contract.EvalCommand
	DefaultTimeout time.Duration // the contract's EvalTimeout
	ProjectDir     string        // absolute project root; commands run here or in their workdir
	Root           *os.Root      // the project root: a workdir must open through it
	LogRoot        *os.Root      // the run's log directory, opened before tier 1, for {n}.log; nil keeps no logs (dry run)
	LogDirName     string        // the same directory as shown to users
	TailBytes      int
	ClaimedPass    []string   // tester evidence files that claim the build/tests pass; used in evidence text
	Progress       Progress   // live output, or nil
	RunAs          *proc.User // the policy's eval_user, or nil for the gate's own user
	// Start runs each command (Env.Start); nil runs it through internal/proc.
	Start func(context.Context, proc.Spec) proc.Result
	// After, when set, is called after each command that passed; a check it returns is added
	// and stops the commands (the working-tree check of SPEC §5.1).
	After func(n int, command string) *Check
}

// tier1LastOutputLines and tier1LastOutputBytes bound the output quoted in a failing check.
const (
	tier1LastOutputLines = 3
	tier1LastOutputBytes = 400
)

// tier1 runs the eval commands in order with sh -c (SPEC §5.2) and stops at the first one that does
// not pass; the commands after it are reported as skipped. It returns one check per command, one
// EvalRun per command that was run (or could not be started), and the metrics the runs captured,
// later commands overriding earlier ones. If ctx is cancelled the interrupted command is an error
// check; the caller checks ctx.Err() and writes nothing.
func tier1(ctx context.Context, in tier1Input) (checks []Check, runs []EvalRun, metrics map[string]float64) {
	metrics = map[string]float64{}
	if len(in.Commands) == 0 {
		return []Check{skippedCheck(1, "eval_commands", "run the contract's eval commands", "no eval_commands configured")}, nil, metrics
	}
	stopped := "" // why the remaining commands are not run
	for i, ec := range in.Commands {
		n := i + 1
		name := "eval_command_" + strconv.Itoa(n)
		text := fmt.Sprintf("eval command %d: `%s` exits %d", n, ec.Run, ec.ExpectExit)
		if stopped != "" {
			checks = append(checks, skippedCheck(1, name, text, "not run: "+stopped))
			continue
		}
		if ctx.Err() != nil {
			checks = append(checks, failCheck(1, name, text, "not run: interrupted", StatusError, vocab.CauseInterrupted))
			stopped = "interrupted"
			continue
		}
		if ec.Results != nil {
			text += fmt.Sprintf(", and its results (%s) list tests run, none failed", testresults.Describe(testresults.Format(ec.Results.Format), ec.Results.Glob))
		}
		spec, err := in.spec(n, ec)
		if err != nil {
			run := EvalRun{Command: ec.Run, Status: StatusError, Error: err.Error()}
			runs = append(runs, run)
			checks = append(checks, failCheck(1, name, text, in.claimed("cannot start: "+err.Error(), StatusError), StatusError, vocab.CauseEvalUnstartable))
			stopped = fmt.Sprintf("eval command %d could not start", n)
			continue
		}
		var stream testresults.Stream
		if ec.Results != nil {
			stream = testresults.NewStream(testresults.Format(ec.Results.Format))
		}
		before := in.resultsBefore(ec.Results)
		started := time.Now()
		run := runProcess(ctx, in.Start, spec, in.Progress, stream)
		var tests *tier1Tests
		if ec.Results != nil && ctx.Err() == nil && run.Status != StatusError {
			tests = in.readResults(ec.Results, stream, before, started, time.Now())
			run.Tests = tests.counts(ec.Results.Format)
			if tests.err == nil {
				run.TestResults = tests.sum
			}
		}
		runs = append(runs, run)
		maps.Copy(metrics, run.Metrics)
		switch {
		case ctx.Err() != nil:
			checks = append(checks, failCheck(1, name, text, "interrupted", StatusError, vocab.CauseInterrupted))
			stopped = "interrupted"
		case run.Status == StatusPass && tests.holdsTheGate():
			// The measured results beat the exit code: a run that exits as expected while its
			// results list a failed test, or none at all, did not pass.
			ev := fmt.Sprintf("exit %d in %s", *run.ExitCode, tier1Duration(run.DurationMS))
			code := vocab.CauseTestsMissing
			if tests.err == nil && tests.sum.Failed > 0 {
				code = vocab.CauseEvalFailed
				ev += " but"
			} else {
				ev += ";"
			}
			ev += " " + tests.String()
			if q := run.Failures.String(); q != "" {
				ev += "; failure lines: " + q
			}
			if run.Log != "" {
				ev += "; full log: " + run.Log
			}
			checks = append(checks, failCheck(1, name, text, in.claimed(ev, StatusFail), StatusFail, code))
			stopped = fmt.Sprintf("eval command %d failed", n)
		case run.Status == StatusPass:
			ev := fmt.Sprintf("exit %d in %s", *run.ExitCode, tier1Duration(run.DurationMS))
			if tests != nil {
				ev += "; " + tests.String()
			}
			if run.Error != "" {
				ev += "; " + run.Error
			}
			checks = append(checks, passCheck(1, name, text, ev))
			if in.After != nil {
				if ch := in.After(n, ec.Run); ch != nil {
					checks = append(checks, *ch)
					stopped = fmt.Sprintf("eval command %d changed the working tree", n)
				}
			}
		case run.Status == StatusError:
			checks = append(checks, failCheck(1, name, text, in.claimed("cannot start: "+run.Error, StatusError), StatusError, vocab.CauseEvalUnstartable))
			stopped = fmt.Sprintf("eval command %d could not start", n)
		default:
			code := vocab.CauseEvalFailed
			var ev string
			switch {
			case run.TimedOut:
				code = vocab.CauseEvalTimeout
				ev = run.Error
			case run.ExitCode != nil:
				ev = fmt.Sprintf("must exit %d — exited %d in %s", ec.ExpectExit, *run.ExitCode, tier1Duration(run.DurationMS))
				if run.Error != "" {
					ev += "; " + run.Error
				}
			default:
				ev = fmt.Sprintf("%s after %s", run.Error, tier1Duration(run.DurationMS))
			}
			if tests != nil {
				ev += "; " + tests.String()
			}
			// The lines in which the runner says what failed (--- FAIL: TestX and its file:line,
			// FAILED tests/x.py::test_y, not ok 3, ✖ …), read from the whole output, say more than
			// its last lines (for go test: FAIL pkg 0.394s | ok … | FAIL); so do the failing
			// tests' names of declared results. Without either, the last lines are the best
			// pointer there is.
			if q := run.Failures.String(); q != "" {
				ev += "; failure lines: " + q
			} else if tests == nil || tests.err != nil || tests.sum.Failed == 0 {
				if last := tier1LastOutput(run.OutputTail); last != "" {
					ev += "; last output: " + last
				} else {
					ev += "; no output"
				}
			}
			if run.Log != "" {
				ev += "; full log: " + run.Log
			}
			checks = append(checks, failCheck(1, name, text, in.claimed(ev, StatusFail), StatusFail, code))
			stopped = fmt.Sprintf("eval command %d failed", n)
		}
	}
	return checks, runs, metrics
}

// spec turns eval command n into a proc.Spec. An error means the command cannot be started: its
// workdir does not open as a directory inside the project, or its contract fields do not parse.
func (in tier1Input) spec(n int, ec contract.EvalCommand) (proc.Spec, error) {
	spec := proc.Spec{
		Label:      ec.Run,
		Shell:      ec.Run,
		Dir:        in.ProjectDir,
		Env:        ec.Env,
		Timeout:    in.DefaultTimeout,
		ExpectExit: ec.ExpectExit,
		TailBytes:  in.TailBytes,
		RunAs:      in.RunAs,
	}
	if spec.Timeout <= 0 {
		spec.Timeout = contract.DefaultEvalTimeout
	}
	if ec.Timeout != "" {
		d, err := time.ParseDuration(ec.Timeout)
		if err != nil || d <= 0 {
			return spec, fmt.Errorf("bad timeout %q", ec.Timeout)
		}
		spec.Timeout = d
	}
	if ec.Workdir != "" {
		dir, err := in.workdir(ec.Workdir)
		if err != nil {
			return spec, err
		}
		spec.Dir = dir
	}
	for name, expr := range ec.Metrics {
		re, err := regexp.Compile(expr)
		if err != nil {
			return spec, fmt.Errorf("metric %q: %w", name, err)
		}
		if spec.Metrics == nil {
			spec.Metrics = map[string]*regexp.Regexp{}
		}
		spec.Metrics[name] = re
	}
	if in.LogRoot != nil {
		file := strconv.Itoa(n) + ".log"
		spec.LogRoot, spec.LogFile, spec.LogName = in.LogRoot, file, file
		if in.LogDirName != "" {
			spec.LogName = path.Join(filepath.ToSlash(in.LogDirName), file)
		}
	}
	return spec, nil
}

// runProcess runs spec through start (nil: internal/proc) with the signing key withheld from the
// child (SPEC §9); progress, when set, brackets the run and receives its output as it arrives, and
// so does results, the reader of the test results a command declares in its output, and the
// reader of the lines that say what failed (EvalRun.Failures).
func runProcess(ctx context.Context, start func(context.Context, proc.Spec) proc.Result, spec proc.Spec, progress Progress, results testresults.Stream) EvalRun {
	if start == nil {
		start = proc.Run
	}
	spec.Withhold = []string{record.SigningKeyEnv, record.SigningKeyFileEnv}
	if progress != nil {
		progress.Start(spec.Label)
	}
	failures := testresults.NewFailureLines()
	var out teeWriter
	if progress != nil {
		out = append(out, progress) // first: live output is not held up by the readers
	}
	if results != nil {
		out = append(out, results)
	}
	spec.Output = append(out, failures)
	r := start(ctx, spec)
	run := EvalRun{
		Command: r.Command, Status: Status(r.Status), ExitCode: r.ExitCode, DurationMS: r.DurationMS,
		OutputTail: r.OutputTail, OutputSHA256: r.OutputSHA256, OutputBytes: r.OutputBytes, Log: r.Log,
		TimedOut: r.TimedOut, Metrics: r.Metrics, MetricLow: r.MetricLow, MetricHigh: r.MetricHigh, Error: r.Error,
		Failures: failures.Failures(),
	}
	if failures.Written() == 0 && r.OutputTail != "" {
		// A Start that did not stream the output (a test's stand-in): read what it kept.
		run.Failures = testresults.FailuresIn(r.OutputTail)
	}
	if progress != nil {
		progress.Finish(run)
	}
	return run
}

// teeWriter passes output to each of its writers; none can fail another (proc ignores the error
// anyway: a process is never blocked by a reader of its output).
type teeWriter []io.Writer

func (t teeWriter) Write(p []byte) (int, error) {
	for _, w := range t {
		_, _ = w.Write(p)
	}
	return len(p), nil
}

// tier1Tests is what a command's declared results said, or why they could not be read.
type tier1Tests struct {
	what string // "go test -json output", "JUnit files reports/*.xml"
	sum  *testresults.Summary
	err  error
}

// root is the judged tree's root: in.Root, or the project directory opened now (closed by the
// function returned).
func (in tier1Input) root() (*os.Root, func(), error) {
	if in.Root != nil {
		return in.Root, func() {}, nil
	}
	r, err := os.OpenRoot(in.ProjectDir)
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// resultsBefore notes the JUnit files a command's glob matches before it runs.
func (in tier1Input) resultsBefore(r *contract.Results) testresults.Before {
	if r == nil || r.Format != contract.ResultsJUnit {
		return nil
	}
	root, done, err := in.root()
	if err != nil {
		return nil
	}
	defer done()
	return testresults.JUnitBefore(root, r.Glob)
}

// readResults reads the results a command declares: its output, already streamed, or the JUnit
// files it wrote in the judged tree between started and ended (not those found before it ran).
func (in tier1Input) readResults(r *contract.Results, stream testresults.Stream, before testresults.Before, started, ended time.Time) *tier1Tests {
	f := testresults.Format(r.Format)
	t := &tier1Tests{what: testresults.Describe(f, r.Glob)}
	if stream != nil {
		t.sum = stream.Finish()
		return t
	}
	if f != testresults.JUnit {
		t.err = fmt.Errorf("unknown results format %q", r.Format)
		return t
	}
	root, done, err := in.root()
	if err != nil {
		t.err = err
		return t
	}
	defer done()
	t.sum, t.err = testresults.ReadJUnit(root, r.Glob, before, started, ended)
	return t
}

// counts is t as recorded in the eval run.
func (t *tier1Tests) counts(format string) *TestCounts {
	c := &TestCounts{Results: format}
	if t.sum != nil {
		c.Passed, c.Failed, c.Skipped = t.sum.Passed, t.sum.Failed, t.sum.Skipped
		c.Failing = t.sum.Failing
	}
	if t.err != nil {
		c.Error = t.err.Error()
	}
	return c
}

// holdsTheGate reports whether results make a run that exited as expected fail: they cannot be
// read, no test ran, or a test failed. A nil t (no results declared) never does.
func (t *tier1Tests) holdsTheGate() bool {
	return t != nil && (t.err != nil || t.sum.Ran() == 0 || t.sum.Failed > 0)
}

// String says what the results held, for a check's evidence: the counts and the first failing
// names, or why there are none.
func (t *tier1Tests) String() string {
	switch {
	case t.err != nil:
		return fmt.Sprintf("its results (%s) cannot be read: %v", t.what, t.err)
	case t.sum.Ran() == 0:
		return fmt.Sprintf("its results (%s) say no test ran (%s)", t.what, t.sum.Counts())
	}
	s := fmt.Sprintf("tests: %s (%s)", t.sum.Counts(), t.what)
	if t.sum.Failed > 0 {
		s += "; failing: " + t.sum.FailingText()
	}
	return s
}

// workdir resolves a contract workdir through the project root, so a symlink that leads out of
// the project is refused, and returns its absolute path.
func (in tier1Input) workdir(wd string) (string, error) {
	rel := filepath.Clean(filepath.FromSlash(wd))
	root := in.Root
	if root == nil {
		r, err := os.OpenRoot(in.ProjectDir)
		if err != nil {
			return "", fmt.Errorf("workdir %s: %w", wd, err)
		}
		defer r.Close()
		root = r
	}
	fi, err := root.Stat(rel)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, below
		}
		return "", fmt.Errorf("workdir %s: %w", wd, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workdir %s: not a directory", wd)
	}
	return filepath.Join(in.ProjectDir, rel), nil
}

// claimed adds the contradiction between a tester's claim and the fresh run to a failing check's
// evidence: the fresh run is the truth.
func (in tier1Input) claimed(ev string, s Status) string {
	if len(in.ClaimedPass) == 0 {
		return ev
	}
	verb := "claims"
	if len(in.ClaimedPass) > 1 {
		verb = "claim"
	}
	outcome := "the fresh run failed"
	if s == StatusError {
		outcome = "the fresh run could not start"
	}
	return fmt.Sprintf("%s; %s %s pass, %s", ev, strings.Join(in.ClaimedPass, ", "), verb, outcome)
}

// tier1Duration prints a run's wall time briefly: 350ms, 1.2s, 2m5s.
func tier1Duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		// Always in milliseconds, "0ms" included: a command that finishes in under a millisecond
		// reads the same way as one that takes 12ms (time.Duration would print "0s").
		return strconv.FormatInt(ms, 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// tier1LastOutput quotes the last few non-blank lines of an output tail on one line.
func tier1LastOutput(tail string) string {
	var lines []string
	rest := strings.ToValidUTF8(tail, "\uFFFD")
	for len(lines) < tier1LastOutputLines && rest != "" {
		var line string
		if i := strings.LastIndexByte(rest, '\n'); i >= 0 {
			rest, line = rest[:i], rest[i+1:]
		} else {
			rest, line = "", rest
		}
		line = strings.Join(strings.Fields(line), " ") // also drops \r, tabs and other spacing
		if line != "" {
			lines = append(lines, line)
		}
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	out := strings.Join(lines, " | ")
	if len(out) > tier1LastOutputBytes {
		cut := len(out) - tier1LastOutputBytes
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = "…" + out[cut:]
	}
	return out
}

// testerPassVerdict is the geas evidence verdict by which a tester claims the work passes. It is a
// claim read from evidence, not a gate verdict: only decide builds one of those (SPEC §2.2).
var testerPassVerdict = string(StatusPass)

// tier1Facts is what tier 1 found: its checks, its runs, the metrics they captured (spread: per
// metric, the lowest and highest value printed), the claims its failures contradict, and the
// eval command that changed the working tree ("" when none did).
type tier1Facts struct {
	checks    []Check
	runs      []EvalRun
	metrics   map[string]float64
	spread    map[string][2]float64
	claims    claims
	changedBy string
}

// runTier1 runs the contract's eval commands (tier1.go) in the run's working directory, comparing
// the working tree (or the checkout) with the head after each one (SPEC §5.1).
func runTier1(ctx context.Context, pass *Pass, profile vocab.Profile) tier1Facts {
	f := tier1Facts{metrics: map[string]float64{}, claims: pass.claims}
	if profile != vocab.ImplementationChange {
		f.checks = []Check{skippedCheck(1, "eval_commands", "run the contract's eval commands", "profile does not require mechanical verification")}
		return f
	}
	var claimed []string
	for _, e := range pass.independent {
		if e.Role == vocab.Tester && e.Verdict == testerPassVerdict {
			claimed = append(claimed, e.Name)
		}
	}
	// afterEval is called after eval command n passed: an eval command that changed a tracked
	// file or left an untracked one makes the run worktree_mismatch, naming it (SPEC §5.1); the
	// check is returned once, for the first command that changed the tree. In an isolated
	// checkout the same holds for the checkout: it is compared with the stat data the gate
	// recorded when it wrote it, so an eval command cannot rewrite what the detectors read there
	// either.
	afterEval := func(n int, command string) *Check {
		if !pass.haveBase || f.changedBy != "" || pass.changedBy != "" || pass.repo == nil {
			return nil
		}
		const name, text = "worktree_after_eval", "the eval commands leave the working tree at the integration head"
		after := fmt.Sprintf("eval command %d `%s`", n, command)
		ch := afterCode(pass, 1, name, text, after)
		if ch != nil {
			f.changedBy = after
		}
		return ch
	}
	checks, runs, metrics := tier1(ctx, tier1Input{
		Commands:       pass.in.Contract.EvalCommands,
		DefaultTimeout: pass.defaultTimeout(),
		ProjectDir:     pass.workDir,
		Root:           pass.workRoot,
		After:          afterEval,
		LogRoot:        pass.opts.LogRoot,
		LogDirName:     pass.opts.LogDirName,
		TailBytes:      pass.in.Policy.OutputTailBytes,
		ClaimedPass:    claimed,
		Progress:       pass.opts.Progress,
		RunAs:          pass.exec.runAs,
		Start:          pass.env.Start,
	})
	f.checks, f.runs = checks, runs
	f.claims = pass.claims.clone()
	f.claims.contradictTesters(pass, runs)
	f.checks = append(f.checks, f.claims.warnings(1)...)
	maps.Copy(f.metrics, metrics)
	for _, run := range runs {
		for k, lo := range run.MetricLow {
			hi := run.MetricHigh[k]
			if f.spread == nil {
				f.spread = map[string][2]float64{}
			}
			if sp, ok := f.spread[k]; ok {
				lo, hi = min(lo, sp[0]), max(hi, sp[1])
			}
			f.spread[k] = [2]float64{lo, hi}
		}
	}
	return f
}

// defaultTimeout is the contract's eval_timeout when it sets one, else the policy's. Only a
// top-level key counts: an env variable or a metric named eval_timeout is not the setting.
func (pass *Pass) defaultTimeout() time.Duration {
	if pass.in.Contract.EvalTimeoutSet {
		return pass.in.Contract.EvalTimeout
	}
	return pass.in.Policy.EvalTimeout
}
