package tiers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/git"
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
	InputsSHA256       string                `json:"inputs_sha256"`
	RulesSHA256        string                `json:"rules_sha256,omitempty"`
	Hash               string                `json:"hash"`
	Summary            Summary               `json:"summary"`
	StartedAt          string                `json:"started_at"`
	FinishedAt         string                `json:"finished_at"`
	DurationMS         int64                 `json:"duration_ms"`
	DryRun             bool                  `json:"dry_run,omitempty"`
	Recheck            bool                  `json:"recheck,omitempty"` // a re-check of a verified or passed task (SPEC §7.2): nothing written
	// ClaimsContradicted lists (at most maxContradictionsShown) claims of independent evidence
	// that the run's own measurements contradict (SPEC §5.2a.7).
	ClaimsContradicted []Contradiction `json:"claims_contradicted,omitempty"`
	// claimTally counts every contradicted claim per agent, for the history entry.
	claimTally map[string]int
	// Escalation names the pending decision record an escalation wrote.
	Escalation string `json:"escalation,omitempty"`
	// Notes are things the run could not do that do not change the verdict.
	Notes []string `json:"notes,omitempty"`
}

// JSON encodes the result compactly without HTML escaping, so evidence such as "score 3 < 4"
// reads the same in record.json as on the terminal.
func (res *Result) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Next actions (SPEC §7.2).
const (
	NextProceed        = "proceed"
	NextFix            = "fix"
	NextEscalate       = "escalate"
	NextResolveBlock   = "resolve_block"
	NextInvestigateErr = "investigate_error"
)

// Pass is what a stage of one evaluation reads: the inputs, the environment and options, and
// the facts the stages before it produced (as a golang.org/x/tools analyzer reads an
// analysis.Pass). A stage never changes it: it returns its checks and facts, and the run
// (EvaluateWith) records the facts here before the next stage.
type Pass struct {
	in    *Input
	env   Env
	opts  Options
	known []string // the agent types evidence names resolve to

	// exec is who the run's processes run as, and whether the signing key's exposure lets them
	// run at all (keyexposure.go).
	exec execution

	// What tier 0's baseline resolved (gitFacts): the repository, the base and the head.
	repo       *git.Repo
	base, head string
	haveBase   bool

	// work is the isolated checkout the run made for tier 1 and the detectors (invariant 7,
	// tier0_worktree.go); nil: they run in the working tree.
	work *checkout

	// What tier 1 measured: the metrics its eval commands captured (metricSpread: per metric,
	// the lowest and highest value printed) and its runs.
	metrics      map[string]float64
	metricSpread map[string][2]float64
	evalRuns     []EvalRun
	// changedBy names the code (an eval command, the held-out commands, a script detector) that
	// changed the working tree or the checkout; "" while none did.
	changedBy string
	// claims are the contradicted claims of independent evidence so far (claims.go).
	claims claims
	// added is the one pass over the lines base..head adds, made by test integrity and reused by
	// the stub scan (tier2_stubscan.go); nil until then.
	added *addedScan
}

// evaluation is what the stages of one run returned, in order: the material of the result.
type evaluation struct {
	checks       []Check
	tier0End     int // checks[:tier0End] are tier 0's
	evalRuns     []EvalRun
	rubric       []RubricScore
	blockingDims []string
	stubCount    int
	stubCap      int
}

// Evaluate is EvaluateWith in the default environment (DefaultEnv).
//
// Deprecated: transitional, removed after the merge; call EvaluateWith.
func Evaluate(ctx context.Context, in *Input, opts Options) (*Result, error) {
	return EvaluateWith(ctx, in, DefaultEnv(), opts)
}

// EvaluateWith runs the pipeline on fresh inputs in env and returns the result with its verdict,
// budget and next action computed (nothing is written: see Apply). It returns ErrInterrupted when
// ctx is cancelled during the run.
func EvaluateWith(ctx context.Context, in *Input, env Env, opts Options) (*Result, error) {
	if err := record.SigningKeyErr(); err != nil {
		return nil, err // a key that cannot be read is never taken for no key
	}
	env = env.withDefaults()
	if opts.Now.IsZero() {
		opts.Now = env.Now()
	}
	pass := &Pass{in: in, env: env, opts: opts, metrics: map[string]float64{}}
	// Room for a run's checks (about thirty): grown by append, each Check (136 bytes) was copied
	// four or five times.
	ev := &evaluation{checks: make([]Check, 0, 48)}
	in.logRoot = opts.LogRoot
	if in.Contract != nil {
		pass.known = evidence.KnownTypes(append([]string{in.Contract.Routing.PrimaryWorkerType}, in.Contract.Routing.RequiredReviewerTypes...)...)
	} else {
		pass.known = evidence.KnownTypes()
	}
	defer func() {
		pass.work.remove()
		if pass.repo != nil {
			pass.repo.Close()
		}
	}()

	var profile vocab.Profile
	if in.Contract != nil {
		profile = in.Contract.GateProfile
	}
	// Before anything else: whether the code the run would start could read the signing key.
	pass.exec = planExecution(ctx, pass)
	ev.checks = append(ev.checks, pass.exec.checks...)
	if pass.exec.refused {
		ev.tier0End = len(ev.checks)
		notRun := "not run: the run was refused before anything ran"
		res := result(pass, ev, profile, map[int]string{1: notRun, 2: notRun})
		res.Notes = append(res.Notes, "the run was refused before anything ran: nothing is recorded and no retry is spent")
		res.FinishedAt = record.Timestamp(env.Now())
		res.DurationMS = env.Now().Sub(opts.Now).Milliseconds()
		return res, nil
	}
	checks, g := tier0(pass, ev.checks)
	ev.checks = append(ev.checks, checks...)
	pass.repo, pass.base, pass.head, pass.haveBase = g.repo, g.base, g.head, g.haveBase
	var coErr error
	if needsCheckout(pass) {
		pass.work, coErr = makeCheckout(pass)
	}
	ev.checks = append(ev.checks, tier0Tree(pass, coErr)...)
	ev.tier0End = len(ev.checks)
	// An accepted exposure of the key is accepted under the pinned rules only: when tier 0 does
	// not pass (a policy changed since the pin is one way), --keep-going runs no code.
	keep := opts.KeepGoing && in.Contract != nil && in.Record != nil && !(pass.exec.accepted && notPassedSince(ev.checks, 0))
	st := &stages{pass: pass, ev: ev, keep: keep, advisory: -1, stopped: map[int]string{}}
	if err := st.run(ctx, profile); err != nil {
		return nil, err
	}
	ev.checks = append(ev.checks, pass.claims.more()...)
	if st.advisory >= 0 {
		for i := st.advisory; i < len(ev.checks); i++ {
			ev.checks[i].Advisory = true
		}
	}
	if c := repositoryIntact(pass, ev.checks); c != nil {
		ev.checks = append(ev.checks, *c)
	}
	if c := inputsUnchanged(pass, ev.checks[ev.tier0End:], st.advisory >= 0 && st.advisory <= ev.tier0End); c != nil {
		ev.checks = append(ev.checks, *c)
	}
	res := result(pass, ev, profile, st.stopped)
	res.FinishedAt = record.Timestamp(env.Now())
	res.DurationMS = env.Now().Sub(opts.Now).Milliseconds()
	return res, nil
}

// stages runs the stages after tier 0. Stages stop where the seed stops (SPEC §5): tier 0, tier
// 1, tier 2 part A, then parts B, C and D. The first stage that does not pass decides; --keep-going
// (keep) runs the stages not reached anyway and marks what they find advisory. After each stage it
// records the stage's checks in ev and its facts in pass, for the stages after it.
type stages struct {
	pass     *Pass
	ev       *evaluation
	keep     bool
	reason   string         // why the first stage that did not pass stopped the run; "" while all pass
	advisory int            // the checks from this index on are advisory; -1: none
	stopped  map[int]string // tier -> why it was not run
}

// stop records why as the reason the run stops when a blocking check from index from on did not
// pass, unless an earlier stage already stopped it.
func (st *stages) stop(from int, why string) {
	if st.reason == "" && notPassedSince(st.ev.checks, from) {
		st.reason = why
	}
}

// enter reports whether the next stage runs; the first stage entered after the run stopped starts
// the advisory checks.
func (st *stages) enter() bool {
	if st.reason != "" && st.advisory < 0 && st.keep {
		st.advisory = len(st.ev.checks)
	}
	return st.reason == "" || st.keep
}

// add records checks in the run's result.
func (st *stages) add(checks ...Check) { st.ev.checks = append(st.ev.checks, checks...) }

// run runs tier 1 and tier 2 as far as tier 0 and each stage let it. It returns ErrInterrupted
// when ctx is cancelled.
func (st *stages) run(ctx context.Context, profile vocab.Profile) error {
	pass, ev := st.pass, st.ev
	st.stop(0, "tier 0 did not pass")
	if st.reason != "" {
		st.stopped[1], st.stopped[2] = "not run: "+st.reason, "not run: "+st.reason
	}
	if !st.enter() {
		return nil
	}
	mark := len(ev.checks)
	t1 := runTier1(ctx, pass, profile)
	st.add(t1.checks...)
	ev.evalRuns = append(ev.evalRuns, t1.runs...)
	pass.evalRuns, pass.metrics, pass.metricSpread, pass.claims = t1.runs, t1.metrics, t1.spread, t1.claims
	pass.changedBy = t1.changedBy
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	ti := testIntegrity(pass) // after the eval commands, in tier 1 (SPEC §5.2a); every profile with a base
	st.add(ti.checks...)
	pass.added = ti.added
	st.add(st.compareBase(ctx, profile, mark)...)
	// The held-out commands' logs are the run's to keep, outside the project: the run opens their
	// directory when the commands are about to run.
	logs := func() (*os.Root, string, string) { return openHoldoutLogs(pass) }
	ho := holdout(ctx, pass, profile, !notPassedSince(ev.checks, mark), logs)
	st.add(ho.checks...)
	if ho.changedBy != "" {
		pass.changedBy = ho.changedBy
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	st.stop(mark, "tier 1 failed")
	if st.reason != "" && st.stopped[2] == "" {
		st.stopped[2] = "not run: " + st.reason
		if !st.keep {
			st.add(skippedCheck(2, "tier_2", "tier 2: acceptance criteria, scope, known risks, rubric", "not run: "+st.reason))
		}
	}
	if !st.enter() {
		return nil
	}
	mark = len(ev.checks)
	pa := partA(ctx, pass)
	st.add(pa.checks...)
	ev.evalRuns = append(ev.evalRuns, pa.runs...)
	pass.claims, pass.changedBy = pa.claims, pa.changedBy
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if profile == vocab.ClosureReady {
		return nil
	}
	st.stop(mark, "part A did not pass")
	if st.reason == "part A did not pass" && !st.keep {
		st.add(skippedCheck(2, "parts_bcd", "tier 2 parts B, C, D: scope, known risks, rubric", "not run: "+st.reason))
	}
	if !st.enter() {
		return nil
	}
	st.add(partB(pass)...)
	st.add(partC(pass)...)
	pd := partD(pass)
	st.add(pd.checks...)
	ev.rubric, ev.blockingDims, ev.stubCount, ev.stubCap = pd.rubric, pd.blockingDims, pd.stubCount, pd.stubCap
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return nil
}

// compareBase runs the tests_dropped check (baseline.go) and, when the base ran now and the run
// writes, stores the base run in the task's cache, signed: the check judges, the run writes.
func (st *stages) compareBase(ctx context.Context, profile vocab.Profile, mark int) []Check {
	pass := st.pass
	bo := compareBase(ctx, pass, profile, !notPassedSince(st.ev.checks, mark))
	if bo.done != nil {
		return []Check{*bo.done}
	}
	if bo.base == nil {
		return nil // interrupted
	}
	how := bo.how
	if bo.store != nil {
		if err := writeBaseline(pass.in.Geas, bo.store.name, bo.store.key, bo.base); err != nil {
			how += "; not cached: " + err.Error()
		} else {
			how += "; cached in .geas/" + bo.store.name
		}
	}
	return []Check{dropped(pass, bo.base, how)}
}

// notPassedSince reports whether a blocking check from index from on did not pass (warnings and
// skipped checks do not stop a stage).
func notPassedSince(checks []Check, from int) bool {
	for _, c := range checks[from:] {
		if c.Blocking && !c.Advisory && c.Status != StatusPass && c.Status != StatusSkipped && c.Status != StatusWarn {
			return true
		}
	}
	return false
}

// inputsUnchanged re-reads every input after tier 1 and the detectors (SPEC §2.7, §7.4): when an
// eval command or a script detector rewrote evidence, the contract, the record, the debt
// register or the policy, the run did not judge one snapshot and is an error (inputs_changed).
// after are the checks after tier 0's: nothing ran past tier 0 when there are none, so there is
// nothing to re-check; when only advisory stages ran, the finding is advisory too. Nil when
// nothing is to be said.
//
// A verify run (geas gate verify) takes no lock and writes nothing: other commands may write the
// task's files meanwhile, and its verdict is about the snapshot it digested, so it does not
// re-check.
func inputsUnchanged(pass *Pass, after []Check, onlyAdvisory bool) *Check {
	if len(after) == 0 || pass.opts.Verify {
		return nil
	}
	tier := -1 // the last tier that ran a check
	for _, c := range after {
		if c.Status != StatusSkipped && c.Tier > tier {
			tier = c.Tier
		}
	}
	if tier < 0 {
		return nil
	}
	changed := pass.in.changedInputs()
	if len(changed) == 0 {
		return nil // nothing to report: a passing re-check must not count as a blocking check that ran
	}
	text := "the inputs judged (contract, record sections, evidence, debt register, policy) did not change during the run"
	c := failCheck(tier, "inputs_unchanged", text, fmt.Sprintf("changed while the run was under way (by an eval command or a detector): %s; the run judged the snapshot read before tier 1", joinLimited(changed, 20)), StatusError, vocab.CauseInputsChanged)
	c.Advisory = onlyAdvisory
	return &c
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
	for _, e := range pass.independent() {
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
		ProjectDir:     pass.workDir(),
		Root:           pass.workRoot(),
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
		StartedAt: record.Timestamp(pass.opts.Now), DryRun: pass.opts.DryRun,
		RulesSHA256: in.RulesSHA256, AdvisoryCauses: advisoryCauses,
		ClaimsContradicted: pass.claims.shown(), claimTally: contradictionTally(pass.claims.list),
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
	res.InputsSHA256 = inputsDigest(in, pass.head)
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
		details += fmt.Sprintf(", %d warnings", warns)
	}
	return TierResult{Status: worst, Details: details}
}

// Budget computes a run's retry budget, transition and next action from the record's history
// (SPEC §7.1, §7.2). It fills res and reports whether the run escalates. A run on an unreadable
// contract, on a record or history that cannot be read, or over a history that does not verify,
// computes no budget (null before and after) and moves nothing: the next run takes its budget
// from the history as if this one had not happened, and neither tampering nor an unreadable
// history ever yields the contract's fresh budget.
func Budget(in *Input, res *Result) (escalate bool) {
	res.RetryBudgetBefore, res.RetryBudgetAfter = nil, nil
	if in.Contract == nil || in.Record == nil || historyTampered(res.Checks) || res.Refused() {
		res.Transition = nil
		switch {
		case res.Verdict == vocab.VerdictFail:
			res.NextAction = NextFix
		case res.Verdict == vocab.VerdictBlock:
			res.NextAction = NextResolveBlock
		default:
			res.NextAction = NextInvestigateErr
		}
		switch {
		case in.Contract == nil || res.Refused():
		case in.Record == nil:
			res.Notes = append(res.Notes, "record.json or the gate history cannot be read: this run computes no budget (the contract's retry_budget is not what is left)")
		default:
			res.Notes = append(res.Notes, "the gate history does not verify: this run records nothing and computes no budget until an authority runs geas task history reset")
		}
		return false
	}
	before := record.BudgetLeft(in.Contract.RetryBudget, in.Record)
	after := before
	status := in.Contract.Status
	switch res.Verdict {
	case vocab.VerdictFail:
		after = max(before-1, 0)
		if after == 0 {
			escalate = true
			res.NextAction = NextEscalate
			res.Transition = transitionIfLegal(status, vocab.Escalated)
		} else {
			res.NextAction = NextFix
		}
	case vocab.VerdictBlock:
		res.NextAction = NextResolveBlock
	case vocab.VerdictError:
		res.NextAction = NextInvestigateErr
		n, cause := record.ConsecutiveErrors(in.Record)
		code := ""
		if len(res.Causes) > 0 {
			code = string(res.Causes[0].Code)
		}
		if n == 0 || cause != code {
			n = 0
		}
		if n+1 >= in.Policy.ConsecutiveErrorLimit && status != vocab.Blocked {
			res.Transition = transitionIfLegal(status, vocab.Blocked)
			if res.Transition != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%d consecutive errors with cause %s: task blocked", n+1, code))
			}
		}
	default:
		if res.Verdict.IsPass() {
			res.NextAction = NextProceed
			res.Transition = transitionIfLegal(status, vocab.Verified)
		}
	}
	res.RetryBudgetBefore, res.RetryBudgetAfter = &before, &after
	return escalate
}

func transitionIfLegal(from, to vocab.State) *Transition {
	if from == "" || vocab.CheckTransition(from, to, true) != nil {
		return nil
	}
	return &Transition{From: from, To: to}
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

// historyEntry is the compact gate_history entry of a run.
func historyEntry(res *Result) record.HistoryEntry {
	causes, _ := json.Marshal(res.Causes)
	e := record.HistoryEntry{
		Kind: record.KindGateRun, RunID: res.RunID, Verdict: string(res.Verdict), Causes: causes,
		RetryBudgetBefore: copyInt(res.RetryBudgetBefore), RetryBudgetAfter: copyInt(res.RetryBudgetAfter), Head: res.Head,
		InputsSHA256: res.InputsSHA256, RulesSHA256: res.RulesSHA256, StartedAt: res.StartedAt,
	}
	if len(res.claimTally) > 0 {
		tally, _ := json.Marshal(res.claimTally)
		e.Extra = map[string]json.RawMessage{record.ClaimsContradictedKey: tally}
	}
	return e
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// BudgetText shows a budget value, or "none" when the run computed none.
func BudgetText(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// NextRunID is the id of the next run of a task: gate-N, N one more than the runs so far. After a
// history reset the numbering goes on from the runs of the discarded history (the reset entry's
// superseded_runs), so a run id, and its log directory, is never used twice.
func NextRunID(rec *record.Record) string {
	n := 0
	if rec != nil {
		for i, e := range rec.History() {
			if e.IsGateRun() {
				n++
			}
			if i == 0 && e.Kind == record.KindHistoryReset {
				var prior int
				if raw, ok := e.Extra["superseded_runs"]; ok && json.Unmarshal(raw, &prior) == nil && prior > 0 {
					n += prior
				}
			}
		}
	}
	return fmt.Sprintf("gate-%d", n+1)
}
