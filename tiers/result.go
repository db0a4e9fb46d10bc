package tiers

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// ErrInterrupted means the run was cancelled (SIGINT/SIGTERM): its eval commands were killed and
// nothing may be written.
var ErrInterrupted = errors.New("gate run interrupted: eval commands killed, nothing written")

// Options tune one gate run.
type Options struct {
	RunID      string    // e.g. "gate-3"
	DryRun     bool      // compute the verdict and what would happen; write nothing
	LogRoot    *os.Root  // the run's eval-log directory, opened by the caller before the run; nil keeps none
	LogDirName string    // the log directory as shown to users (relative to the project root)
	Now        time.Time // start of the run
	Progress   Progress  // live output of eval commands and script detectors, or nil
	// Verify re-evaluates a task that already passed (state verified or passed) as if it were at
	// its profile's gate state, for geas gate verify: state eligibility is judged against the state
	// the pass was given in. Verify runs never write.
	Verify bool
	// Head is, for a Verify run, the commit the pass being re-checked named (its history entry's
	// head): the integration head when the task has no integration commit.
	Head string
	// KeepGoing runs the stages a failing stage stops anyway and lists their findings as
	// advisory: they never change the verdict, the budget or the transition (SPEC §5).
	KeepGoing bool
}

// TierResult is a tier's status in geas's tier enum.
type TierResult struct {
	Status  Status `json:"status"`
	Details string `json:"details"`
}

// Transition is a state change a run made (or, in a dry run, would make).
type Transition struct {
	From vocab.State `json:"from"`
	To   vocab.State `json:"to"`
}

// Summary counts the blocking checks that ran; warnings and skipped checks are not counted.
type Summary struct {
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Total    int     `json:"total"`
	PassRate float64 `json:"pass_rate"`
}

// summarize counts the blocking checks that ran (not skipped, not warnings): passed and failed.
func summarize(checks []Check) Summary {
	var sum Summary
	for _, c := range checks {
		if !c.Blocking || c.Status == StatusSkipped || c.Status == StatusWarn {
			continue
		}
		sum.Total++
		if c.Status == StatusPass {
			sum.Passed++
		} else {
			sum.Failed++
		}
	}
	if sum.Total > 0 {
		sum.PassRate = float64(sum.Passed) / float64(sum.Total)
	}
	return sum
}

// Result is one gate run: the JSON printed by --format json and stored as gate_result (SPEC §9).
type Result struct {
	RunID              string                `json:"run_id"`
	MissionID          string                `json:"mission_id"`
	TaskID             string                `json:"task_id"`
	GateProfile        vocab.Profile         `json:"gate_profile"`
	Verdict            vocab.Verdict         `json:"verdict"`
	TierResults        map[string]TierResult `json:"tier_results"`
	Checks             []Check               `json:"checks"`
	Causes             []Cause               `json:"causes"`
	AdvisoryCauses     []Cause               `json:"advisory_causes,omitempty"`
	RubricScores       []RubricScore         `json:"rubric_scores"`
	BlockingDimensions []string              `json:"blocking_dimensions"`
	EvalRuns           []EvalRun             `json:"eval_runs"`
	StubCount          int                   `json:"stub_count"`
	StubCap            int                   `json:"stub_cap"`
	RetryBudgetBefore  *int                  `json:"retry_budget_before"` // null: no budget computed (SPEC §7.1, §5.1)
	RetryBudgetAfter   *int                  `json:"retry_budget_after"`  // null: no budget computed
	Transition         *Transition           `json:"transition"`
	NextAction         string                `json:"next_action"`
	BaseSnapshot       string                `json:"base_snapshot"`
	Head               string                `json:"head"`
	// ProjectPath is the project root relative to the repository's top, slash-separated, when it
	// is a subdirectory (a monorepo service, SPEC §5.3 Part B): the checks' locations are relative
	// to the project root, and a report read against the repository (SARIF, GitHub annotations)
	// joins them to it.
	ProjectPath  string  `json:"project_path,omitempty"`
	InputsSHA256 string  `json:"inputs_sha256"`
	RulesSHA256  string  `json:"rules_sha256,omitempty"`
	Hash         string  `json:"hash"`
	Summary      Summary `json:"summary"`
	StartedAt    string  `json:"started_at"`
	FinishedAt   string  `json:"finished_at"`
	DurationMS   int64   `json:"duration_ms"`
	DryRun       bool    `json:"dry_run,omitempty"`
	Recheck      bool    `json:"recheck,omitempty"` // a re-check of a verified or passed task (SPEC §7.2): nothing written
	// ClaimsContradicted lists (at most maxContradictionsShown) claims of independent evidence
	// that the run's own measurements contradict (SPEC §5.2a.7).
	ClaimsContradicted []Contradiction `json:"claims_contradicted,omitempty"`
	// claimTally counts every contradicted claim per agent, for the history entry.
	claimTally map[string]int
	// attributed is the digest of the other tasks' passes the run attributed files to
	// (passesDigest), for the history entry; "" when none.
	attributed string
	// refused and tampered are what the evaluation decided of its checks for the budget and the
	// ledger: the run was refused before anything ran (Refused), its checks found the history
	// tampered (HistoryTampered). Set once by result.
	refused, tampered bool
	// Escalation names the pending decision record an escalation wrote.
	Escalation string `json:"escalation,omitempty"`
	// Notes are things the run could not do that do not change the verdict.
	Notes []string `json:"notes,omitempty"`
	// NextCommand is the command the next action needs, when the gate knows it: the transition
	// that makes a task gateable after a state_ineligible error. "" otherwise.
	NextCommand string `json:"next_command,omitempty"`
	// RepeatOf names the recorded run this one is the same attempt as (SPEC §7.1): nothing ran,
	// nothing is recorded and no retry is spent; that run's verdict (fail) and causes are reported
	// again. "" for a run that judged.
	RepeatOf string `json:"repeat_of,omitempty"`
}

// Next actions (SPEC §7.2).
const (
	NextProceed        = "proceed"
	NextFix            = "fix"
	NextEscalate       = "escalate"
	NextResolveBlock   = "resolve_block"
	NextInvestigateErr = "investigate_error"
)

// result folds a run's checks into the verdict and the result document (budget not yet
// applied). Advisory checks are listed but take no part in the verdict; their causes are
// advisory_causes. stopped gives, per tier, why it was not reached.
func result(pass *Pass, ev *evaluation, profile vocab.Profile, stopped map[int]string) *Result {
	in := pass.in
	checks := boundChecks(ev.checks) // SPEC §7.1: nothing agents write makes the result too large
	binding := make([]Check, 0, len(checks))
	var advisoryCauses []Cause
	for _, c := range checks {
		if !c.Advisory {
			binding = append(binding, c)
			continue
		}
		if c.Blocking && c.Status != StatusPass && c.Status != StatusSkipped && c.Status != StatusWarn {
			code := c.Code
			if code == "" {
				code = vocab.CauseCode(c.Status)
			}
			advisoryCauses = append(advisoryCauses, Cause{Code: code, Check: c.Name, Detail: c.Evidence})
		}
	}
	res := &Result{
		RunID: pass.opts.RunID, MissionID: in.Mission, TaskID: in.Task, GateProfile: profile, Checks: checks,
		RubricScores: ev.rubric, BlockingDimensions: ev.blockingDims, EvalRuns: ev.evalRuns,
		StubCount: ev.stubCount, StubCap: ev.stubCap, Head: pass.head,
		ProjectPath: pass.placed.path,
		StartedAt:   record.Timestamp(pass.opts.Now), DryRun: pass.opts.DryRun,
		RulesSHA256: in.RulesSHA256, AdvisoryCauses: advisoryCauses,
		ClaimsContradicted: pass.claims.shown, claimTally: pass.claims.tally,
		attributed: pass.attempt.attributed,
	}
	if res.Checks == nil {
		res.Checks = []Check{}
	}
	if res.RubricScores == nil {
		res.RubricScores = []RubricScore{}
	}
	if res.BlockingDimensions == nil {
		res.BlockingDimensions = []string{}
	}
	if res.EvalRuns == nil {
		res.EvalRuns = []EvalRun{}
	}
	if in.Contract != nil {
		res.BaseSnapshot = in.Contract.BaseSnapshot
		if pass.base != "" {
			res.BaseSnapshot = pass.base
		}
	}
	fold(res, binding, stopped)
	res.InputsSHA256 = pass.attempt.inputs
	res.refused, res.tampered = res.Refused(), historyTampered(checks)
	return res
}

// fold sets res's verdict and causes (decide), its tier results and its summary from the binding
// checks of a run; stopped gives, per tier, why it was not reached.
func fold(res *Result, binding []Check, stopped map[int]string) {
	res.Verdict, res.Causes = decide(binding)
	if res.Causes == nil {
		res.Causes = []Cause{}
	}
	res.TierResults = map[string]TierResult{}
	for tier := 0; tier <= 2; tier++ {
		res.TierResults[fmt.Sprintf("tier_%d", tier)] = tierResult(binding, tier, stopped[tier])
	}
	res.Summary = summarize(binding)
}

// ErrorResult is the result shown for a task no run could judge (geas gate --all: an entry that
// cannot be read as a task, a run that could not complete): the one blocking tier-0 check, in
// error, folded as a run's checks are, so that it is an error verdict that every output format
// shows, never a pass. note says what was (not) recorded.
func ErrorResult(mission, task string, check Check, note string) *Result {
	res := &Result{MissionID: mission, TaskID: task, Checks: []Check{check},
		RubricScores: []RubricScore{}, BlockingDimensions: []string{}, EvalRuns: []EvalRun{},
		NextAction: NextInvestigateErr, Notes: []string{note}}
	notRun := "not run: tier 0 did not pass"
	fold(res, res.Checks, map[int]string{1: notRun, 2: notRun})
	return res
}

// tierResult is the worst blocking status of a tier's checks; skipped when none ran, or with
// notRun's reason when an earlier stage stopped the run before it.
func tierResult(checks []Check, tier int, notRun string) TierResult {
	if notRun != "" {
		return TierResult{Status: StatusSkipped, Details: notRun}
	}
	worst := Status("")
	n, passed := 0, 0
	var warns int
	for _, c := range checks {
		if c.Tier != tier || c.Status == StatusSkipped {
			continue
		}
		if c.Status == StatusWarn {
			warns++
			continue
		}
		if !c.Blocking {
			continue
		}
		n++
		if c.Status == StatusPass {
			passed++
		}
		if c.Status.rank() > worst.rank() {
			worst = c.Status
		}
	}
	if n == 0 {
		details := "no checks ran"
		for _, c := range checks {
			if c.Tier == tier && c.Status == StatusSkipped {
				details = c.Evidence
				break
			}
		}
		return TierResult{Status: StatusSkipped, Details: details}
	}
	details := fmt.Sprintf("%d of %d checks passed", passed, n)
	if warns > 0 {
		details += ", " + text.Counted(warns, "warning", "warnings")
	}
	return TierResult{Status: worst, Details: details}
}

// Refused reports whether the run was refused before anything ran (keyexposure.go): the signing
// key would be exposed to the code it runs, or its eval_user cannot be used. Such a run records
// nothing, computes no budget and moves nothing.
func (res *Result) Refused() bool {
	for _, c := range res.Checks {
		if (c.Name == checkKeyExposure || c.Name == checkEvalUser) && c.Tier == 0 && c.Status == StatusError {
			return true
		}
	}
	return false
}

// RefusedByEvaluation is whether the evaluation refused the run before anything ran, as it
// decided once when it built the result (Refused of its checks): the gate reads it as data. A
// result read back from JSON does not hold it; Refused derives it from the checks.
func (res *Result) RefusedByEvaluation() bool { return res.refused }

// historyTampered reports whether a run's checks found the history tampered.
func historyTampered(checks []Check) bool {
	for _, c := range checks {
		if c.Code == vocab.CauseHistoryTampered && c.Status != StatusPass {
			return true
		}
	}
	return false
}

// HistoryTampered reports whether the run's checks found the task's gate history tampered
// (check history failed): its budget is then not computed.
func (res *Result) HistoryTampered() bool { return historyTampered(res.Checks) }
