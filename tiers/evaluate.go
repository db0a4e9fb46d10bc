package tiers

import (
	"context"
	"fmt"
	"os"

	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// Pass is what a stage of one evaluation reads: the inputs, the environment and options, and
// the facts the stages before it produced (as a golang.org/x/tools analyzer reads an
// analysis.Pass). A stage never changes it: it returns its checks and facts, and the run
// (Evaluate) records the facts here before the next stage.
type Pass struct {
	in   *Snapshot
	env  Env
	opts Options
	// judges is who wrote the evidence (independence.go): the agent types known, each file's
	// type, the builder's files and the independent ones, found once when the run starts.
	judges

	// exec is who the run's processes run as, and whether the signing key's exposure lets them
	// run at all (keyexposure.go).
	exec execution

	// What tier 0's baseline resolved (gitFacts): the repository, the base and the head, and
	// where the head came from (headName).
	repo       *git.Repo
	base, head string
	haveBase   bool
	headName   string
	// paths is the project root's place in repo (projectpath.go), found once by tier 0: every
	// check of the run compares paths with the same one.
	paths projectPaths
	// placed is where each path of base..head lies (projectpath.go, placeChange), placed once by
	// tier 0: the checks look a changed path up here.
	placed placement
	// othersHistory[i] is what tier 0's history check found of the gate history of in.Others[i],
	// verified with this task's (histories): attribution reads it.
	othersHistory []otherHistory

	// work is the isolated checkout the run made for tier 1 and the detectors (invariant 7,
	// checkout.go); nil: they run in the working tree. workDir and workRoot are where they run:
	// the checkout's project root, else the project root (opened as a root).
	work     *checkout
	workDir  string
	workRoot *os.Root

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

	// scratch makes the checkouts of their own that the held-out checks and the base run run
	// code in: the run's to write (makeScratch), handed to those checks.
	scratch scratchFunc

	// Made once, after tier 0 resolved the base and the head: attrib is what other tasks'
	// verified passes account for in base..head (attribution.go, attribute), attempt what makes
	// this run the same attempt as a recorded one (repeat.go, attemptNow). Zero until then: the
	// attribution attributes nothing.
	attrib  attribution
	attempt attempt
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

// Evaluate judges the snapshot in: the checks before any code runs, tier 0, then the stages that
// tier 0 and each stage let run (SPEC §5), the re-check of the inputs, and the verdict (decide).
// Processes, the repository and the clock come from env. It writes none of what the ledger
// writes: only the logs of the processes it runs (in opts.LogRoot) and the signed cache of a base
// run. A verdict, even error, is a Result; an error means the run could not be judged at all
// (ErrInterrupted, a signing key that cannot be read).
func Evaluate(ctx context.Context, in *Snapshot, env Env, opts Options) (*Result, error) {
	if err := record.SigningKeyErr(); err != nil {
		return nil, err // a key that cannot be read is never taken for no key
	}
	env = env.withDefaults()
	if opts.Now.IsZero() {
		opts.Now = env.Now()
	}
	pass := &Pass{in: in, env: env, opts: opts, metrics: map[string]float64{}}
	pass.scratch = func(rev string, lay []holdoutFile) (*checkout, int, error) { return makeScratch(pass, rev, lay) }
	// Room for a run's checks (about thirty): grown by append, each Check (136 bytes) was copied
	// four or five times.
	ev := &evaluation{checks: make([]Check, 0, 48)}
	pass.judges = judgesOf(in.Contract, in.Evidence)
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
		pass.attempt = attemptNow(pass)
		res := result(pass, ev, profile, map[int]string{1: notRun, 2: notRun})
		res.Notes = append(res.Notes, "the run was refused before anything ran: nothing is recorded and no retry is spent")
		res.FinishedAt = record.Timestamp(env.Now())
		res.DurationMS = env.Now().Sub(opts.Now).Milliseconds()
		return res, nil
	}
	checks, g := tier0(pass, ev.checks)
	ev.checks = append(ev.checks, checks...)
	pass.repo, pass.base, pass.head, pass.haveBase, pass.headName, pass.paths, pass.placed = g.repo, g.base, g.head, g.haveBase, g.headName, g.paths, g.placed
	pass.othersHistory = g.othersHistory
	var coErr error
	if needsCheckout(pass) {
		pass.work, coErr = makeCheckout(pass)
	}
	pass.workDir, pass.workRoot = in.ProjectDir, in.Root
	if pass.work != nil && pass.work.root != nil {
		pass.workDir, pass.workRoot = pass.work.dir, pass.work.root
	}
	ev.checks = append(ev.checks, tier0Tree(pass, coErr)...)
	ev.tier0End = len(ev.checks)
	pass.attrib = attribute(pass)
	pass.attempt = attemptNow(pass) // after the attribution: its digest is part of the attempt
	// SPEC §7.1: the same attempt as the latest recorded fail runs nothing and is reported again.
	if last, causes, ok := repeatedRun(pass, ev.checks); ok {
		if res, ok := repeatResult(pass, ev, profile, last, causes); ok {
			res.FinishedAt = record.Timestamp(env.Now())
			res.DurationMS = env.Now().Sub(opts.Now).Milliseconds()
			return res, nil
		}
	}
	// An accepted exposure of the key is accepted under the pinned rules only: when tier 0 does
	// not pass (a policy changed since the pin is one way), --keep-going runs no code.
	keep := opts.KeepGoing && in.Contract != nil && in.Record != nil && !(pass.exec.accepted && notPassedSince(ev.checks, 0))
	st := &stages{pass: pass, ev: ev, keep: keep, advisory: -1, stopped: map[int]string{}}
	if err := st.run(ctx, profile); err != nil {
		return nil, err
	}
	ev.checks = append(ev.checks, pass.claims.more...)
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
	c := failCheck(tier, "inputs_unchanged", text, fmt.Sprintf("changed while the run was under way (by an eval command or a detector): %s; the run judged the snapshot read before tier 1", txt.JoinLimited(changed, 20)), StatusError, vocab.CauseInputsChanged)
	c.Advisory = onlyAdvisory
	return &c
}
