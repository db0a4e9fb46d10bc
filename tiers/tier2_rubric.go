package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// RubricScore is one dimension's outcome in the gate result.
type RubricScore struct {
	Dimension  string   `json:"dimension"`
	Score      float64  `json:"score"`
	Threshold  int      `json:"threshold"`
	Passed     bool     `json:"passed"`
	Evaluators []string `json:"evaluators"`
}

// stubCapped are the dimensions a confirmed stub caps at 2.
var stubCapped = []string{"feature_completeness", "output_completeness"}

// rubricFacts is what part D found: its checks, the rubric's scores, the dimensions that block,
// and the confirmed stubs against their cap.
type rubricFacts struct {
	checks       []Check
	rubric       []RubricScore
	blockingDims []string
	stubCount    int
	stubCap      int
}

// partD scores the rubric (SPEC §5.3 Part D) after confirming stubs.
func partD(pass *Pass) rubricFacts {
	var f rubricFacts
	stubs, sf := confirmStubs(pass)
	confidence := 0
	if sc := pass.in.Facts.SelfCheck; sc != nil {
		confidence = sc.Confidence
	}
	for _, dim := range pass.in.Contract.Rubric.Dimensions {
		checks, score, blocking := scoreDimension(pass, dim, confidence, len(stubs))
		f.checks = append(f.checks, checks...)
		if score != nil {
			f.rubric = append(f.rubric, *score)
		}
		if blocking {
			f.blockingDims = append(f.blockingDims, dim.Name)
		}
	}
	checks, cap := checkStubCap(pass, stubs, sf)
	f.checks = append(f.checks, checks...)
	f.stubCount, f.stubCap = len(stubs), cap
	return f
}

// dimensionScores is what the evidence says about one rubric dimension.
type dimensionScores struct {
	files   []string // evidence files of the dimension's evaluators
	scored  []string // "file score", each score counted
	refused []string // why an evaluator's scores are not counted (not independent)
	notes   []string // builders' own scores, not counted
	// setAside are evaluators whose claims the run's measurements contradicted (SPEC §5.2a.7)
	setAside []string
	score    float64 // the minimum counted score
	have     bool    // whether any score was counted
	// warns are the independence warnings of evaluators whose provider is unknown
	warns []Check
	// unscored are the evaluators' files that give no score for the dimension
	unscored []*evidence.Evidence
}

// scoreDimension checks one rubric dimension: the minimum of its independent evaluators' scores
// reaches its threshold, raised by one when the self-check's confidence is 1 or 2; with stubs
// confirmed (nStubs > 0) the completeness dimensions are capped at 2. It returns the dimension's
// checks (its independence warnings, then its check), its score when one was counted, and
// whether the dimension blocks (blocking_dimensions).
func scoreDimension(pass *Pass, dim contract.Dimension, confidence, nStubs int) (checks []Check, score *RubricScore, blocking bool) {
	name := "rubric:" + dim.Name
	threshold := dim.Threshold
	raised := ""
	if confidence > 0 && confidence <= 2 {
		threshold = min(threshold+1, 5)
		raised = fmt.Sprintf(" (self_check confidence %d raised it from %d)", confidence, dim.Threshold)
	}
	evaluators := dimensionEvaluators(pass.in.Contract, dim, &pass.in.Policy)
	who := "any independent evaluator"
	if len(evaluators) > 0 {
		who = strings.Join(evaluators, " or ")
	}
	text := fmt.Sprintf("%s scored by %s reaches threshold %d", dim.Name, who, threshold)

	ds := collectScores(pass, dim.Name, name, evaluators)
	checks = ds.warns
	note := ""
	if len(ds.notes) > 0 {
		note = "; " + strings.Join(ds.notes, "; ")
	}
	if len(ds.setAside) > 0 {
		note += "; not counted, their claims contradicted by the gate's measurements: " + limitedList(ds.setAside, 20)
	}
	switch {
	case len(ds.files) == 0 && len(ds.setAside) > 0:
		// A measurement of this run failed (it contradicted the evaluator): a fail, never the
		// milder block that setting the evaluator aside would give.
		return append(checks, failCheck(2, name, text, fmt.Sprintf("no counted evidence from %s%s", who, note), StatusFail, vocab.CauseMissingReview)), nil, true
	case len(ds.refused) > 0:
		return append(checks, failCheck(2, name, text, strings.Join(ds.refused, "; ")+note, StatusBlock, vocab.CauseJudgeNotIndependent)), nil, false
	case len(ds.files) == 0:
		return append(checks, failCheck(2, name, text, fmt.Sprintf("no evidence from %s%s", who, note), StatusBlock, vocab.CauseMissingReview)), nil, false
	case !ds.have:
		note += unmatchedScores(ds.unscored, pass.in.Contract.Rubric.Dimensions)
		return append(checks, failCheck(2, name, text, fmt.Sprintf("%s gives no score for %s%s", strings.Join(ds.files, ", "), dim.Name, note), StatusBlock, vocab.CauseScoreMissing)), nil, false
	}
	got := ds.score
	capNote := ""
	if nStubs > 0 && slices.Contains(stubCapped, dim.Name) && got > 2 {
		capNote = fmt.Sprintf("; capped from %s to 2 by %d confirmed stub(s)", fmtNum(got), nStubs)
		got = 2
	}
	passed := got >= float64(threshold)
	score = &RubricScore{Dimension: dim.Name, Score: got, Threshold: threshold, Passed: passed, Evaluators: ds.files}
	ev := fmt.Sprintf("score %s (minimum of %s)%s", fmtNum(got), strings.Join(ds.scored, ", "), capNote)
	if !passed {
		return append(checks, failCheck(2, name, text, fmt.Sprintf("score %s < threshold %d%s (minimum of %s)%s%s", fmtNum(got), threshold, raised, strings.Join(ds.scored, ", "), capNote, note), StatusFail, vocab.CauseBelowThreshold)), score, true
	}
	return append(checks, passCheck(2, name, text, ev+note)), score, false
}

// unmatchedScores names the rubric_scores entries of files that name no dimension of the contract
// (at most maxUnmatchedNamed of them), with what each was probably meant for: for a dimension no
// evaluator scored, the score its evaluator meant for it is often one of them. They count for
// nothing.
func unmatchedScores(files []*evidence.Evidence, dims []contract.Dimension) string {
	var names []string
	more := 0
	var sg *suggester
	var have map[string]bool
	for _, e := range files {
		for k, s := range e.RubricScores {
			if have == nil {
				have = dimensionNames(dims)
			}
			if have[s.Dimension] {
				continue
			}
			if len(names) == maxUnmatchedNamed {
				more++
				continue
			}
			if sg == nil {
				sg = dimensionSuggester(dims)
			}
			names = append(names, unmatchedDimension(e.Name, k, s, sg).Message)
		}
	}
	if more > 0 {
		names = append(names, fmt.Sprintf("and %d more entries that match no dimension", more))
	}
	if len(names) == 0 {
		return ""
	}
	return "; " + strings.Join(names, "; ")
}

// collectScores reads the scores of dimension dim from the evidence of its evaluators (any
// non-builder when evaluators is empty). A builder's own score is noted, not counted; an
// evaluator who is not independent of the builder is refused, and one whose provider is unknown
// adds a warning check (named check+":independence").
func collectScores(pass *Pass, dim, check string, evaluators []string) dimensionScores {
	var ds dimensionScores
	for _, e := range pass.in.Evidence {
		if pass.builder[e] {
			for _, s := range e.RubricScores {
				if s.Dimension == dim {
					ds.notes = append(ds.notes, fmt.Sprintf("%s's own score %s is not counted", e.Name, fmtNum(s.Score)))
				}
			}
			continue
		}
		if len(evaluators) > 0 && !slices.Contains(evaluators, pass.agentType[e]) {
			continue
		}
		if pass.claims.setAside[e] {
			ds.setAside = append(ds.setAside, e.Name)
			continue
		}
		ds.files = append(ds.files, e.Name)
		var mine []evidence.RubricScore
		for _, s := range e.RubricScores {
			if s.Dimension == dim {
				mine = append(mine, s)
			}
		}
		if len(mine) == 0 {
			ds.unscored = append(ds.unscored, e)
			continue
		}
		ind := judgeIndependence(pass, e.ProviderID, e.Name)
		if ind.refused {
			ds.refused = append(ds.refused, ind.detail)
			continue
		}
		if ind.warn != "" {
			ds.warns = append(ds.warns, warnCheck(2, check+":independence", "evaluator and builder ran on different providers", ind.warn, "provider_unknown"))
		}
		for _, s := range mine {
			ds.scored = append(ds.scored, fmt.Sprintf("%s %s", e.Name, fmtNum(s.Score)))
			if !ds.have || s.Score < ds.score {
				ds.score, ds.have = s.Score, true
			}
		}
	}
	return ds
}

// stubFacts is what the stub confirmation could not do: the builder's possible stubs the gate
// did not read (unread), the scan of the added lines that could not run (err, with errCause when
// it is not detector_error), and what that scan read (scan).
type stubFacts struct {
	unread   []string
	err      string
	errCause vocab.CauseCode
	scan     *git.AddedScan
}

// checkStubCap checks that the confirmed stubs do not exceed the cap of the task's risk level
// (the contract's stub_cap overrides the policy's), and returns its checks and the cap.
func checkStubCap(pass *Pass, stubs []stub, sf stubFacts) (out []Check, stubCap int) {
	c := pass.in.Contract
	stubCap = pass.in.Policy.StubCapFor(c.RiskLevel)
	if c.StubCap != nil {
		stubCap = *c.StubCap
	}
	text := fmt.Sprintf("confirmed stubs do not exceed the cap of %d (risk %s)", stubCap, c.RiskLevel) + stubScanNote(sf.scan)
	var locs []string
	var where []Location
	for _, s := range stubs {
		locs = append(locs, s.String())
		where = append(where, s.Location)
	}
	switch {
	case sf.err != "":
		code := vocab.CauseDetectorError
		if sf.errCause != "" {
			code = sf.errCause
		}
		out = append(out, failCheck(2, "stubs", text, sf.err, StatusError, code))
	case len(stubs) > stubCap:
		ch := failCheck(2, "stubs", text, fmt.Sprintf("%d confirmed stubs > cap %d: %s", len(stubs), stubCap, txt.JoinLimited(locs, 10)), StatusBlock, vocab.CauseStubCapExceeded)
		ch.Locations = where
		out = append(out, ch)
	case len(stubs) > 0:
		ch := warnCheck(2, "stubs", text, fmt.Sprintf("%d confirmed stubs (cap %d): %s", len(stubs), stubCap, txt.JoinLimited(locs, 10)), vocab.CauseStubConfirmed)
		ch.Locations = where
		out = append(out, ch)
	case sf.scan != nil:
		out = append(out, passCheck(2, "stubs", text, fmt.Sprintf("no confirmed stub in %d added lines of %d text files (cap %d)", sf.scan.Lines, sf.scan.Files, stubCap)))
	}
	if len(sf.unread) > 0 {
		// The builder named places the gate cannot read: its own claim cannot be checked. A fail
		// (it spends a retry, as the run's other failures do), never an error that would stand in
		// for them (SPEC §7.1), and never a silent pass.
		out = append(out, failCheck(2, "stubs:unread", "every self_check.possible_stubs location is a file of the commit the gate can read",
			fmt.Sprintf("%d of self_check.possible_stubs cannot be read, so the builder's claim cannot be checked: %s; name files of the commit, with their lines",
				len(sf.unread), txt.JoinLimited(sf.unread, 5)), StatusFail, vocab.CauseStubUnreadable))
	}
	if w := submoduleWarning(pass, "stubs", "scanned for stubs"); w != nil {
		out = append(out, *w)
	}
	return out, stubCap
}

type stub struct {
	Location
	Pattern string
	Text    string
}

func (s stub) String() string {
	return fmt.Sprintf("%s:%d %q", s.Path, s.Line, txt.Truncate(strings.TrimSpace(s.Text), 60))
}

// confirmStubs confirms stubs: a self_check.possible_stubs location whose line matches a stub
// pattern, and every added line of the diff that does. Each place counts once.
func confirmStubs(pass *Pass) ([]stub, stubFacts) {
	var out []stub
	var sf stubFacts
	seen := map[Location]bool{}
	add := func(s stub) {
		if !seen[s.Location] {
			seen[s.Location] = true
			out = append(out, s)
		}
	}
	if sc := pass.in.Facts.SelfCheck; sc != nil {
		files := map[string][]byte{}
		budget := pass.in.Policy.MaxTotalEvidenceBytes
		for _, loc := range sc.PossibleStubs {
			confirmStub(pass, loc, files, &budget, add, &sf.unread)
		}
	}
	if pass.haveBase {
		scanAddedLines(pass, add, &sf)
	}
	return out, sf
}

// confirmStub reads a possible stub location in the working tree (through the project root, so it
// cannot leave the project) and confirms it when its line (or, without a line, any line) matches.
// A possible stub is the builder's own claim about its work: one the gate cannot read (a
// directory, a named pipe, a link out of the project, a file over the evidence limit) is not
// confirmed, is named in unread and is a fail of its own (stub_unreadable), never an error, which would turn the run's
// fail into an error that spends no retry (SPEC §7.1). files keeps each file read, so that a path named many times is read once;
// budget bounds the bytes read for all of them together (the total evidence limit), so that
// thousands of names (hard links cost no disk) of a large file cannot make the run take hours.
func confirmStub(pass *Pass, loc record.StubLocation, files map[string][]byte, budget *int64, add func(stub), unread *[]string) {
	data, seen := files[loc.Path]
	if !seen && *budget <= 0 { // (ReadLimited reads without a bound at a limit of 0)
		*unread = append(*unread, fmt.Sprintf("%s (past the %d bytes read for possible stubs)", loc.Path, pass.in.Policy.MaxTotalEvidenceBytes))
		return
	}
	if !seen {
		var err error
		data, err = fsutil.ReadLimited(pass.workRoot, loc.Path, min(pass.in.Policy.MaxEvidenceBytes, *budget))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// a stub in a file that no longer exists is not a stub
		case err != nil:
			*unread = append(*unread, fmt.Sprintf("%s (%v)", loc.Path, err))
		}
		*budget -= int64(len(data))
		files[loc.Path] = data
	}
	if data == nil {
		return
	}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if loc.Line > 0 && n != loc.Line {
			continue
		}
		if p, ok := pass.in.Policy.IsStub(line); ok {
			add(stub{Location: Location{Path: loc.Path, Line: n}, Pattern: p, Text: line})
		}
	}
}
