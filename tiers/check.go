// Package tiers is the gate's pipeline: tier 0 (precheck), tier 1 (the contract's eval commands),
// tier 2 (criteria, scope, known risks, rubric), the detectors, and the verdict that follows
// mechanically from the checks.
//
// Evaluate (evaluate.go) runs the stages in order. Each stage is a function of a read-only
// *Pass (the inputs, the Env, the options and the facts of the stages before it) that returns
// its checks and facts; the run records them and result folds the collected checks into the one
// verdict (decide). Processes start only through Env.Start (internal/proc by default) and the
// repository is read only through the view Env.Repo opens (internal/git).
package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/internal/testresults"
	"github.com/geas-dev/geas/vocab"
)

// Status is the outcome of one check.
type Status string

// Check statuses. Only a blocking check that is not Pass holds the gate; Warn never blocks.
const (
	StatusPass    Status = "pass"
	StatusFail    Status = "fail"
	StatusBlock   Status = "block"
	StatusError   Status = "error"
	StatusWarn    Status = "warn"
	StatusSkipped Status = "skipped"
)

// rank orders statuses for precedence: error > block > fail > pass.
func (s Status) rank() int {
	switch s {
	case StatusError:
		return 4
	case StatusBlock:
		return 3
	case StatusFail:
		return 2
	case StatusPass:
		return 1
	}
	return 0
}

// Check is one check's result. Field names mirror the eval-viewer grading schema (text, passed,
// evidence): Text says what was checked, Evidence what was found, with the values.
type Check struct {
	Name     string `json:"name"`
	Tier     int    `json:"tier"`
	Text     string `json:"text"`
	Status   Status `json:"status"`
	Passed   bool   `json:"passed"`
	Blocking bool   `json:"blocking"`
	Evidence string `json:"evidence"`
	// Code is the cause code when the check holds the gate (or warns).
	Code vocab.CauseCode `json:"code,omitempty"`
	// Advisory marks a finding of a stage the run did not reach, listed under --keep-going: it
	// never changes the verdict, the budget or the transition (SPEC §5).
	Advisory bool `json:"advisory,omitempty"`
	// Locations point at files (scope violations, confirmed stubs) for annotations.
	Locations []Location `json:"locations,omitempty"`
}

// Location is a place in the project a check refers to.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// String is path:line, or path when the location has no line.
func (l Location) String() string {
	if l.Line > 0 {
		return fmt.Sprintf("%s:%d", l.Path, l.Line)
	}
	return l.Path
}

// Cause is one reason a run did not pass.
type Cause struct {
	Code   vocab.CauseCode `json:"code"`
	Check  string          `json:"check"`
	Detail string          `json:"detail"`

	status Status // for ordering, worst first
}

// EvalRun records one eval command (or script detector) run.
type EvalRun struct {
	Command      string             `json:"command"`
	Status       Status             `json:"status"`
	ExitCode     *int               `json:"exit_code"`
	DurationMS   int64              `json:"duration_ms"`
	OutputTail   string             `json:"output_tail"`
	OutputSHA256 string             `json:"output_sha256"`
	OutputBytes  int64              `json:"output_bytes"`
	Log          string             `json:"log,omitempty"`
	TimedOut     bool               `json:"timed_out,omitempty"`
	Metrics      map[string]float64 `json:"metrics,omitempty"`
	// MetricLow and MetricHigh are the lowest and highest value each metric was captured with in
	// this run's output: a threshold holds only if every captured value satisfies it, so a line
	// the command's own code prints after the tool's ("coverage: 99%") cannot stand in for it.
	MetricLow  map[string]float64 `json:"-"`
	MetricHigh map[string]float64 `json:"-"`
	Error      string             `json:"error,omitempty"`
	// Tests counts what the command's declared results said (SPEC §5.2a), or says why they could
	// not be read; nil when it declares none. The check's evidence says the same in words.
	Tests *TestCounts `json:"tests,omitempty"`
	// TestResults is every test of the declared results by name, or nil when it declares none or
	// they could not be read: kept in memory for a comparison by name, not recorded.
	TestResults *testresults.Summary `json:"-"`
	// Failures is what the output says failed, in the lines the common test runners write
	// (testresults.FailureLines), read from the whole output as it was written: quoted in a
	// failing check's evidence, not recorded apart.
	Failures testresults.Failures `json:"-"`
}

// TestCounts is what an eval command's declared results counted.
type TestCounts struct {
	Results string `json:"results"` // the declared format: go-test-json, tap, junit
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// Failing names the first 20 failing tests, in the order the results report them.
	Failing []string `json:"failing,omitempty"`
	// Error says why the results could not be read; the counts are then what was read before.
	Error string `json:"error,omitempty"`
}

// check builders keep Passed consistent with Status.

func passCheck(tier int, name, text, evidence string) Check {
	return Check{Name: name, Tier: tier, Text: text, Status: StatusPass, Passed: true, Blocking: true, Evidence: evidence}
}

func failCheck(tier int, name, text, evidence string, s Status, code vocab.CauseCode) Check {
	return Check{Name: name, Tier: tier, Text: text, Status: s, Blocking: true, Evidence: evidence, Code: code}
}

func warnCheck(tier int, name, text, evidence string, code vocab.CauseCode) Check {
	return Check{Name: name, Tier: tier, Text: text, Status: StatusWarn, Blocking: false, Evidence: evidence, Code: code}
}

func skippedCheck(tier int, name, text, evidence string) Check {
	return Check{Name: name, Tier: tier, Text: text, Status: StatusSkipped, Blocking: false, Evidence: evidence}
}

// Progress receives live output of the processes a run starts (eval commands and script
// detectors). Start and Finish bracket each process; Write gets its combined output as it arrives.
// Implementations must not block for long: they run on the output path.
type Progress interface {
	Start(label string)
	Write(p []byte) (int, error)
	Finish(run EvalRun)
}
