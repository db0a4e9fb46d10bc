package tiers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/record"
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
}

// TierResult is a tier's status in geas's tier enum.
type TierResult struct {
	Status  Status `json:"status"`
	Details string `json:"details"`
}

// Profile is the gate profile a run used; it is written as null when the contract could not be read.
type Profile string

// MarshalJSON writes an unknown profile as null.
func (p Profile) MarshalJSON() ([]byte, error) {
	if p == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(p))
}

// UnmarshalJSON reads null as the unknown profile.
func (p *Profile) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = ""
		return nil
	}
	return json.Unmarshal(b, (*string)(p))
}

// Transition is a state change a run made (or, in a dry run, would make).
type Transition struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Summary counts the blocking checks that ran; warnings and skipped checks are not counted.
type Summary struct {
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Total    int     `json:"total"`
	PassRate float64 `json:"pass_rate"`
}

// Result is one gate run: the JSON printed by --format json and stored as gate_result (SPEC §9).
type Result struct {
	RunID              string                `json:"run_id"`
	MissionID          string                `json:"mission_id"`
	TaskID             string                `json:"task_id"`
	GateProfile        Profile               `json:"gate_profile"`
	Verdict            Verdict               `json:"verdict"`
	TierResults        map[string]TierResult `json:"tier_results"`
	Checks             []Check               `json:"checks"`
	Causes             []Cause               `json:"causes"`
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
	Hash               string                `json:"hash"`
	Summary            Summary               `json:"summary"`
	StartedAt          string                `json:"started_at"`
	FinishedAt         string                `json:"finished_at"`
	DurationMS         int64                 `json:"duration_ms"`
	DryRun             bool                  `json:"dry_run,omitempty"`
	Recheck            bool                  `json:"recheck,omitempty"` // a re-check of a verified or passed task (SPEC §7.2): nothing written
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

// run is the state of one evaluation.
type run struct {
	in   *Input
	opts Options

	known        []string
	repo         *evidence.Repo
	base, head   string
	haveBase     bool
	metrics      map[string]float64
	evalRuns     []EvalRun
	checks       []Check
	rubric       []RubricScore
	blockingDims []string
	stubCount    int
	stubCap      int
	stubErr      string
	tier1Ran     bool

	// boundResults and boundJudgments are, per criterion, the evidence entries bound to it
	// (bindCriteria, SPEC §5.3 A).
	boundResults   [][]boundResult
	boundJudgments [][]boundJudgment
}

// Evaluate runs the pipeline on fresh inputs and returns the result with its verdict, budget and
// next action computed (nothing is written: see Apply). It returns ErrInterrupted when ctx is
// cancelled during the run.
func Evaluate(ctx context.Context, in *Input, opts Options) (*Result, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	r := &run{in: in, opts: opts, metrics: map[string]float64{}}
	if in.Contract != nil {
		r.known = evidence.KnownTypes(append([]string{in.Contract.Routing.PrimaryWorkerType}, in.Contract.Routing.RequiredReviewerTypes...)...)
	} else {
		r.known = evidence.KnownTypes()
	}
	defer func() {
		if r.repo != nil {
			r.repo.Close()
		}
	}()

	r.tier0()
	stop := false
	for _, c := range r.checks {
		if c.Blocking && (c.Status == StatusBlock || c.Status == StatusError) {
			stop = true
		}
	}
	profile := ""
	if in.Contract != nil {
		profile = in.Contract.GateProfile
	}
	if !stop {
		r.tier1(ctx, profile)
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		r.tier2(ctx, profile)
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
	}
	res := r.result(profile, stop)
	res.FinishedAt = record.Timestamp(time.Now())
	res.DurationMS = time.Since(opts.Now).Milliseconds()
	return res, nil
}

// testerPassVerdict is the geas evidence verdict by which a tester claims the work passes. It is a
// claim read from evidence, not a gate verdict: only decide builds one of those (SPEC §2.2).
var testerPassVerdict = string(StatusPass)

func (r *run) tier1(ctx context.Context, profile string) {
	if profile != contract.ImplementationChange {
		r.checks = append(r.checks, skippedCheck(1, "eval_commands", "run the contract's eval commands", "profile does not require mechanical verification"))
		return
	}
	var claimed []string
	for _, e := range r.independent() {
		if e.Role == evidence.Tester && e.Verdict == testerPassVerdict {
			claimed = append(claimed, e.Name)
		}
	}
	checks, runs, metrics := tier1(ctx, tier1Input{
		Commands:       r.in.Contract.EvalCommands,
		DefaultTimeout: r.defaultTimeout(),
		ProjectDir:     r.in.ProjectDir,
		Root:           r.in.Root,
		LogRoot:        r.opts.LogRoot,
		LogDirName:     r.opts.LogDirName,
		TailBytes:      r.in.Policy.OutputTailBytes,
		ClaimedPass:    claimed,
		Progress:       r.opts.Progress,
	})
	r.tier1Ran = true
	r.checks = append(r.checks, checks...)
	r.evalRuns = append(r.evalRuns, runs...)
	for k, v := range metrics {
		r.metrics[k] = v
	}
}

// defaultTimeout is the contract's eval_timeout when it sets one, else the policy's. Only a
// top-level key counts: an env variable or a metric named eval_timeout is not the setting.
func (r *run) defaultTimeout() time.Duration {
	if r.in.Contract.EvalTimeoutSet {
		return r.in.Contract.EvalTimeout
	}
	return r.in.Policy.EvalTimeout
}

func (r *run) tier2(ctx context.Context, profile string) {
	r.partA(ctx)
	if profile == contract.ClosureReady {
		return
	}
	r.partB()
	r.partC()
	r.partD()
}

// result folds the checks into the verdict and the result document (budget not yet applied).
func (r *run) result(profile string, stoppedAtTier0 bool) *Result {
	in := r.in
	verdict, causes := decide(r.checks)
	res := &Result{
		RunID: r.opts.RunID, MissionID: in.Mission, TaskID: in.Task, GateProfile: Profile(profile),
		Verdict: verdict, Checks: r.checks, Causes: causes,
		RubricScores: r.rubric, BlockingDimensions: r.blockingDims, EvalRuns: r.evalRuns,
		StubCount: r.stubCount, StubCap: r.stubCap, Head: r.head,
		StartedAt: record.Timestamp(r.opts.Now), DryRun: r.opts.DryRun,
	}
	if res.Checks == nil {
		res.Checks = []Check{}
	}
	if res.Causes == nil {
		res.Causes = []Cause{}
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
		if r.base != "" {
			res.BaseSnapshot = r.base
		}
	}
	res.TierResults = map[string]TierResult{}
	for tier := 0; tier <= 2; tier++ {
		res.TierResults[fmt.Sprintf("tier_%d", tier)] = tierResult(r.checks, tier, stoppedAtTier0 && tier > 0)
	}
	for _, c := range r.checks {
		if !c.Blocking || c.Status == StatusSkipped || c.Status == StatusWarn {
			continue
		}
		res.Summary.Total++
		if c.Status == StatusPass {
			res.Summary.Passed++
		} else {
			res.Summary.Failed++
		}
	}
	if res.Summary.Total > 0 {
		res.Summary.PassRate = float64(res.Summary.Passed) / float64(res.Summary.Total)
	}
	res.InputsSHA256 = inputsDigest(in, r.head)
	return res
}

// tierResult is the worst blocking status of a tier's checks; skipped when none ran.
func tierResult(checks []Check, tier int, notRun bool) TierResult {
	if notRun {
		return TierResult{Status: StatusSkipped, Details: "not run: tier 0 did not pass"}
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

// inputsDigest digests what the verdict was computed from: the contract, the agent-written record
// sections, every evidence file (name and content digest) and the head commit. The contract and the
// record sections are digested in compact form: the gate's own rewrite of record.json re-indents
// the sections it does not own, and that must not read as a change of the inputs.
func inputsDigest(in *Input, head string) string {
	h := sha256.New()
	if in.Contract != nil {
		fmt.Fprintf(h, "contract %x\n", compactSum(in.Contract.Raw))
	}
	if in.Record != nil {
		for _, s := range in.Record.Sections() {
			if s == "gate_result" || s == "gate_history" {
				continue
			}
			raw, _ := in.Record.Section(s)
			fmt.Fprintf(h, "record %s %x\n", s, compactSum(raw))
		}
	}
	names := make([]string, 0, len(in.Evidence))
	sums := map[string]string{}
	for _, e := range in.Evidence {
		names = append(names, e.Name)
		sums[e.Name] = e.SHA256
	}
	for _, b := range in.BadEvidence {
		names = append(names, b.Name)
		sums[b.Name] = "invalid"
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "evidence %s %s\n", n, sums[n])
	}
	fmt.Fprintf(h, "head %s\n", head)
	return hex.EncodeToString(h.Sum(nil))
}

// compactSum is the SHA-256 of a JSON document without its insignificant white space (of the bytes
// as they are when they are not valid JSON).
func compactSum(raw []byte) [sha256.Size]byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return sha256.Sum256(b.Bytes())
	}
	return sha256.Sum256(raw)
}

// Budget computes a run's retry budget, transition and next action from the record's history
// (SPEC §7.1, §7.2). It fills res and reports whether the run escalates. A run on an unreadable
// contract, or over a history that does not verify, computes no budget (null before and after)
// and moves nothing: the next run takes its budget from the history as if this one had not
// happened, and tampering never yields a fresh budget.
func Budget(in *Input, res *Result) (escalate bool) {
	res.RetryBudgetBefore, res.RetryBudgetAfter = nil, nil
	if in.Contract == nil || historyTampered(res.Checks) {
		res.Transition = nil
		switch {
		case res.Verdict == VerdictFail:
			res.NextAction = NextFix
		case res.Verdict == VerdictBlock:
			res.NextAction = NextResolveBlock
		default:
			res.NextAction = NextInvestigateErr
		}
		if in.Contract != nil {
			res.Notes = append(res.Notes, "the gate history does not verify: this run records nothing and computes no budget until an authority runs geas task history reset")
		}
		return false
	}
	before := record.BudgetLeft(in.Contract.RetryBudget, in.Record)
	after := before
	status := in.Contract.Status
	switch res.Verdict {
	case VerdictFail:
		after = max(before-1, 0)
		if after == 0 {
			escalate = true
			res.NextAction = NextEscalate
			res.Transition = transitionIfLegal(status, record.Escalated)
		} else {
			res.NextAction = NextFix
		}
	case VerdictBlock:
		res.NextAction = NextResolveBlock
	case VerdictError:
		res.NextAction = NextInvestigateErr
		n, cause := record.ConsecutiveErrors(in.Record)
		code := ""
		if len(res.Causes) > 0 {
			code = res.Causes[0].Code
		}
		if n == 0 || cause != code {
			n = 0
		}
		if n+1 >= in.Policy.ConsecutiveErrorLimit && status != string(record.Blocked) {
			res.Transition = transitionIfLegal(status, record.Blocked)
			if res.Transition != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%d consecutive errors with cause %s: task blocked", n+1, code))
			}
		}
	default:
		if res.Verdict.IsPass() {
			res.NextAction = NextProceed
			res.Transition = transitionIfLegal(status, record.Verified)
		}
	}
	res.RetryBudgetBefore, res.RetryBudgetAfter = &before, &after
	return escalate
}

func transitionIfLegal(from string, to record.State) *Transition {
	if from == "" || record.CheckTransition(record.State(from), to, true) != nil {
		return nil
	}
	return &Transition{From: from, To: string(to)}
}

// historyEntry is the compact gate_history entry of a run.
func historyEntry(res *Result) record.HistoryEntry {
	causes, _ := json.Marshal(res.Causes)
	return record.HistoryEntry{
		Kind: record.KindGateRun, RunID: res.RunID, Verdict: string(res.Verdict), Causes: causes,
		RetryBudgetBefore: copyInt(res.RetryBudgetBefore), RetryBudgetAfter: copyInt(res.RetryBudgetAfter), Head: res.Head,
		InputsSHA256: res.InputsSHA256, StartedAt: res.StartedAt,
	}
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
			if e.Kind == "" || e.Kind == record.KindGateRun {
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
