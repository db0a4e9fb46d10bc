package tiers

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

var fullSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{40}$`) })

// gitFacts are what tier 0's baseline resolved: the repository it opened (the run closes it),
// the base and the integration head, whether the base is an ancestor of the head (haveBase),
// where the head came from (headName: "integration.commit <commit>", else "HEAD"); and the
// project root's place in the repository (paths; without one, the paths are the project's).
type gitFacts struct {
	repo       *git.Repo
	base, head string
	haveBase   bool
	headName   string
	paths      projectPaths
	// placed is where each path of base..head lies in the project (placeChange), placed once
	// here, where the diff is first read, for every check of the run.
	placed placement
	// othersHistory[i] is what the history check found of the gate history of the snapshot's
	// Others[i] (verified with this task's): attribution confirms their passes with it.
	othersHistory []otherHistory
}

// tier0 runs the prechecks of the inputs, the state, the reviews, the budget and the baseline
// (SPEC §5.1), and reports them all; before are the checks the run made before tier 0. The run
// then makes its isolated checkout, if it needs one, and tier0Tree checks the tree. The caller
// stops after tier 0 when any of them blocks or errors.
func tier0(pass *Pass, before []Check) ([]Check, gitFacts) {
	var out []Check
	add := func(checks []Check) {
		for _, c := range checks {
			c.Tier = 0
			out = append(out, c)
		}
	}
	add(inputsValid(pass))
	history, others := historyCheck(pass)
	add(history)
	if pass.in.Contract == nil {
		g := gitFacts{paths: projectPathsIn(pass.in, nil), othersHistory: others} // nothing else can be judged without the contract
		g.placed = placeChange(g.paths, nil)
		return out, g
	}
	add(stateEligible(pass))
	add(selfCheckPresent(pass))
	add(requiredReviewers(pass))
	add(evidenceValid(pass))
	add(reviewVerdicts(pass))
	add(integrationMerged(pass))
	add(budgetCheck(pass, slices.Concat(before, out)))
	checks, g := baseline(pass)
	add(checks)
	g.othersHistory = others
	g.paths = projectPathsIn(pass.in, g.repo)
	var changes []git.FileChange
	if g.haveBase {
		// The checks that read the diff read it again from the repository's memo of it, and
		// report its error themselves: a diff that cannot be read places nothing.
		changes, _ = g.repo.FileChanges(g.base, g.head)
	}
	g.placed = placeChange(g.paths, changes)
	return out, g
}

// tier0Tree runs the prechecks of the change and the head's tree once the baseline resolved them
// (pass holds gitFacts and the project's place, and the isolated checkout when the run made one;
// coErr says why it could not): the empty change, the working tree, the symbolic links, stale
// evidence and the pinned rules.
func tier0Tree(pass *Pass, coErr error) []Check {
	if pass.in.Contract == nil {
		return nil
	}
	var out []Check
	for _, checks := range [][]Check{emptyChange(pass), worktree(pass, coErr), linksCheck(pass), staleEvidence(pass), rulesCheck(pass)} {
		for _, c := range checks {
			c.Tier = 0
			out = append(out, c)
		}
	}
	return out
}

// inputsValid checks that the gate policy, the contract and the record were read and valid.
func inputsValid(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	in := pass.in
	if in.PolicyErr != nil {
		add(failCheck(0, "policy_valid", "read .geas/gate-policy.json", in.PolicyErr.Error(), StatusError, vocab.CausePolicyInvalid))
	}
	if in.ContractErr != nil {
		add(failCheck(0, "contract_valid", "contract.json parses and matches the schema", in.ContractErr.Error(), StatusError, vocab.CauseContractInvalid))
	} else {
		add(passCheck(0, "contract_valid", "contract.json parses and matches the schema", "valid"))
	}
	if in.RecordErr != nil {
		add(failCheck(0, "record_valid", "record.json parses and matches the schema", in.RecordErr.Error(), StatusError, vocab.CauseRecordInvalid))
	} else {
		add(passCheck(0, "record_valid", "record.json parses and matches the schema", pass.recordNote()))
	}
	return
}

// stateEligible checks that the task's state is one its gate profile gates (verify also accepts a
// task that already passed).
func stateEligible(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	c := pass.in.Contract
	eligible := contract.EligibleStates(c.GateProfile)
	text := fmt.Sprintf("task state is eligible for profile %s (%s)", c.GateProfile, vocab.JoinStates(eligible, " or "))
	if pass.opts.Verify && c.Status.IsFinished() {
		add(passCheck(0, "state_eligible", text, "state is "+string(c.Status)+"; verify re-evaluates the pass"))
	} else if slices.Contains(eligible, c.Status) {
		add(passCheck(0, "state_eligible", text, "state is "+string(c.Status)))
	} else {
		why := fmt.Sprintf("state is %s; %s needs %s", c.Status, c.GateProfile, vocab.JoinStates(eligible, " or "))
		if cmd := TransitionCommand(pass.in.Task, c.Status, eligible); cmd != "" {
			why += "; move it with " + cmd + ", then run the gate"
		}
		add(failCheck(0, "state_eligible", text, why, StatusError, vocab.CauseStateIneligible))
	}
	return
}

// selfCheckPresent checks that the record has a self_check section.
func selfCheckPresent(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	if pass.in.Record == nil {
		return
	}
	if pass.in.Facts.SelfCheck != nil {
		add(passCheck(0, "self_check", "record.json has a self_check section", "present"))
	} else {
		add(failCheck(0, "self_check", "record.json has a self_check section", "no self_check section in record.json", StatusBlock, vocab.CauseMissingSelfCheck))
	}
	return
}

// requiredReviewers checks that each required reviewer type has an evidence file with a
// non-implementer role.
func requiredReviewers(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	for _, want := range pass.in.Contract.Routing.RequiredReviewerTypes {
		name := "review:" + want
		text := fmt.Sprintf("required reviewer %s has an evidence file with a non-implementer role", want)
		var found, implOnly []string
		for _, e := range pass.in.Evidence {
			if pass.agentType[e] != want {
				continue
			}
			if pass.builder[e] { // the implementer never reviews its own work (SPEC §2.1)
				implOnly = append(implOnly, e.Name)
				continue
			}
			found = append(found, e.Name)
		}
		switch {
		case len(found) > 0:
			add(passCheck(0, name, text, "found "+strings.Join(found, ", ")))
		case len(implOnly) > 0:
			add(failCheck(0, name, text, fmt.Sprintf("%s has role implementer or is the primary worker's; a review needs reviewer, tester or authority from another agent", strings.Join(implOnly, ", ")), StatusBlock, vocab.CauseMissingReview))
		default:
			add(failCheck(0, name, text, fmt.Sprintf("no evidence file of agent %s (evidence files: %s)", want, orNone(pass.evidenceNames())), StatusBlock, vocab.CauseMissingReview))
		}
	}
	return
}

// evidenceValid checks that every evidence file parses and matches the schema.
func evidenceValid(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	in := pass.in
	if in.EvidenceErr != nil {
		add(failCheck(0, "evidence_valid", "every evidence file parses and matches the schema", in.EvidenceErr.Error(), StatusError, vocab.CauseEvidenceInvalid))
	}
	for _, bad := range in.BadEvidence {
		add(failCheck(0, "evidence:"+bad.Name[strings.LastIndex(bad.Name, "/")+1:], "evidence file parses and matches the schema", oneLine(bad.Error()), StatusBlock, vocab.CauseEvidenceInvalid))
	}
	if len(in.BadEvidence) == 0 && in.EvidenceErr == nil {
		if len(in.Evidence) == 0 {
			add(skippedCheck(0, "evidence_valid", "every evidence file parses and matches the schema", "no evidence files"))
		} else {
			add(passCheck(0, "evidence_valid", "every evidence file parses and matches the schema", text.Counted(len(in.Evidence), "file", "files")+" valid"))
		}
	}
	return
}

// integrationMerged checks, for implementation_change, that integration.json says merged.
func integrationMerged(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	if pass.in.Contract.GateProfile != vocab.ImplementationChange || pass.in.Record == nil {
		return
	}
	text := "integration.status is merged"
	integ := pass.in.Facts.Integration
	switch {
	case integ == nil:
		add(failCheck(0, "integration", text, "no integration.json (geas task integrate writes it)", StatusBlock, vocab.CauseMissingIntegration))
	case integ.Status != "merged":
		add(failCheck(0, "integration", text, fmt.Sprintf("integration.status is %s", integ.Status), StatusBlock, vocab.CauseMissingIntegration))
	default:
		ev := "merged"
		if integ.Commit != "" {
			ev += " at " + integ.Commit
		}
		add(passCheck(0, "integration", text, ev))
	}
	return
}

// baseline resolves base_snapshot and the integration head and checks ancestry. It runs for
// implementation_change always, and for other profiles when they name a base (their scope is then
// computed from git too).
func baseline(pass *Pass) (out []Check, g gitFacts) {
	add := func(c Check) { out = append(out, c) }
	c := pass.in.Contract
	if c.GateProfile != vocab.ImplementationChange && c.BaseSnapshot == "" {
		return
	}
	text := "base_snapshot resolves to a commit that is an ancestor of the integration head"
	if c.BaseSnapshot == "" {
		add(failCheck(0, "baseline", text, "base_snapshot is empty", StatusBlock, vocab.CauseBaselineMismatch))
		return
	}
	repo, err := pass.env.Repo(pass.in) // by default opened by the read of the policy at the base, or now
	if err != nil {
		code, st := vocab.CauseNoRepository, StatusError
		if !errors.Is(err, git.ErrNoRepository) {
			code = vocab.CauseBaselineMismatch
		}
		add(failCheck(0, "baseline", text, err.Error(), st, code))
		return
	}
	g.repo = repo
	headRev := "HEAD"
	g.headName = "HEAD"
	if c := pass.in.integrationCommit(); c != "" {
		headRev = c
		g.headName = "integration.commit " + c
	}
	if headRev == "HEAD" && pass.opts.Verify && pass.opts.Head != "" {
		// A re-check of a pass judges the commit the pass named, wherever HEAD has moved since.
		headRev = pass.opts.Head
	}
	head, err := repo.Resolve(headRev)
	if err != nil {
		add(gitFailCheck(0, "baseline", text, fmt.Sprintf("integration head %s: %v", headRev, err), err, resolveStatus(err), vocab.CauseBaselineMismatch))
		return
	}
	// The base as the inputs' read resolved it, which the rules hold (SPEC §4.4): one resolution
	// a run, so that the commit the pin compares is the commit the diff starts from.
	base, err := pass.in.BaseCommit, pass.in.BaseErr
	if !pass.in.baseResolved {
		base, err = repo.Resolve(c.BaseSnapshot)
	}
	if err != nil {
		add(gitFailCheck(0, "baseline", text, fmt.Sprintf("base_snapshot %s: %v", c.BaseSnapshot, err), err, resolveStatus(err), vocab.CauseBaselineMismatch))
		return
	}
	g.head, g.base = head, base
	ok, err := repo.IsAncestor(base, head)
	switch {
	case err != nil:
		add(gitFailCheck(0, "baseline", text, fmt.Sprintf("ancestry of %s in %s: %v", short(base), short(head), err), err, StatusError, vocab.CauseBaselineMismatch))
		return
	case !ok:
		add(failCheck(0, "baseline", text, fmt.Sprintf("base %s (%s) is not an ancestor of head %s (%s)", short(base), c.BaseSnapshot, short(head), headRev), StatusBlock, vocab.CauseBaselineMismatch))
		return
	}
	g.haveBase = true
	add(passCheck(0, "baseline", text, fmt.Sprintf("base %s is an ancestor of head %s (%s)", short(base), short(head), headRev)))
	if !fullSHA().MatchString(c.BaseSnapshot) {
		add(warnCheck(0, "base_pinned", "base_snapshot is a full commit SHA", fmt.Sprintf("base_snapshot %q is not pinned; it resolved to %s", c.BaseSnapshot, base), vocab.CauseBaseUnpinned))
	}
	return
}

// resolveStatus is the status of a revision that does not resolve: block (something is missing),
// but error when a file of the repository was refused as not regular (a named pipe at a ref): the
// gate could not look, which says nothing about the revision.
func resolveStatus(err error) Status {
	var nr *git.NotRegularError
	if errors.As(err, &nr) {
		return StatusError
	}
	return StatusBlock
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// oneLine joins a multi-line error into one line for an evidence string.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func (pass *Pass) recordNote() string {
	if pass.in.RecordMissing {
		return "no record.json yet: read as an empty record"
	}
	return "valid"
}

// TransitionCommand is the geas task transition command that walks a task from its state to one
// its gate profile gates (vocab.PathTo), for the next action of a state_ineligible error; "" when
// no walk of the machine leads there (a terminal state).
func TransitionCommand(task string, from vocab.State, eligible []vocab.State) string {
	path, ok := vocab.PathTo(from, eligible)
	if !ok || len(path) == 0 {
		return ""
	}
	return fmt.Sprintf("geas task transition --id %s --to %s", task, vocab.JoinStates(path, ","))
}
