package tiers

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
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

// partD scores the rubric (SPEC §5.3 Part D) after confirming stubs.
func (r *run) partD() {
	c := r.in.Contract
	stubs := r.stubs()

	confidence := 0
	if sc, ok := r.in.Record.SelfCheck(); ok {
		confidence = sc.Confidence
	}
	for _, dim := range c.Rubric.Dimensions {
		name := "rubric:" + dim.Name
		threshold := dim.Threshold
		raised := ""
		if confidence > 0 && confidence <= 2 {
			threshold = min(threshold+1, 5)
			raised = fmt.Sprintf(" (self_check confidence %d raised it from %d)", confidence, dim.Threshold)
		}
		evaluators := dim.Evaluators
		if len(evaluators) == 0 {
			evaluators = r.in.Policy.Evaluators[dim.Name]
		}
		who := "any independent evaluator"
		if len(evaluators) > 0 {
			who = strings.Join(evaluators, " or ")
		}
		text := fmt.Sprintf("%s scored by %s reaches threshold %d", dim.Name, who, threshold)

		var files, scored, refused, notes []string
		score, have := 0.0, false
		for _, e := range r.in.Evidence {
			if r.isBuilder(e) {
				for _, s := range e.RubricScores {
					if s.Dimension == dim.Name {
						notes = append(notes, fmt.Sprintf("%s's own score %s is not counted", e.Name, fmtNum(s.Score)))
					}
				}
				continue
			}
			if len(evaluators) > 0 && !slices.Contains(evaluators, r.agentType(e)) {
				continue
			}
			files = append(files, e.Name)
			var mine []evidence.RubricScore
			for _, s := range e.RubricScores {
				if s.Dimension == dim.Name {
					mine = append(mine, s)
				}
			}
			if len(mine) == 0 {
				continue
			}
			ind := r.judgeIndependence(e.ProviderID, e.Name)
			if ind.refused {
				refused = append(refused, ind.detail)
				continue
			}
			if ind.warn != "" {
				r.checks = append(r.checks, warnCheck(2, name+":independence", "evaluator and builder ran on different providers", ind.warn, "provider_unknown"))
			}
			for _, s := range mine {
				scored = append(scored, fmt.Sprintf("%s %s", e.Name, fmtNum(s.Score)))
				if !have || s.Score < score {
					score, have = s.Score, true
				}
			}
		}
		note := ""
		if len(notes) > 0 {
			note = "; " + strings.Join(notes, "; ")
		}
		switch {
		case len(refused) > 0:
			r.checks = append(r.checks, failCheck(2, name, text, strings.Join(refused, "; ")+note, StatusBlock, CauseJudgeNotIndependent))
			continue
		case len(files) == 0:
			r.checks = append(r.checks, failCheck(2, name, text, fmt.Sprintf("no evidence from %s%s", who, note), StatusBlock, CauseMissingReview))
			continue
		case !have:
			r.checks = append(r.checks, failCheck(2, name, text, fmt.Sprintf("%s gives no score for %s%s", strings.Join(files, ", "), dim.Name, note), StatusBlock, CauseScoreMissing))
			continue
		}
		capNote := ""
		if len(stubs) > 0 && slices.Contains(stubCapped, dim.Name) && score > 2 {
			capNote = fmt.Sprintf("; capped from %s to 2 by %d confirmed stub(s)", fmtNum(score), len(stubs))
			score = 2
		}
		passed := score >= float64(threshold)
		r.rubric = append(r.rubric, RubricScore{Dimension: dim.Name, Score: score, Threshold: threshold, Passed: passed, Evaluators: files})
		ev := fmt.Sprintf("score %s (minimum of %s)%s", fmtNum(score), strings.Join(scored, ", "), capNote)
		if !passed {
			r.blockingDims = append(r.blockingDims, dim.Name)
			r.checks = append(r.checks, failCheck(2, name, text, fmt.Sprintf("score %s < threshold %d%s (minimum of %s)%s%s", fmtNum(score), threshold, raised, strings.Join(scored, ", "), capNote, note), StatusFail, CauseBelowThreshold))
			continue
		}
		r.checks = append(r.checks, passCheck(2, name, text, ev+note))
	}

	r.stubCap = r.in.Policy.stubCap(c.RiskLevel)
	if c.StubCap != nil {
		r.stubCap = *c.StubCap
	}
	r.stubCount = len(stubs)
	text := fmt.Sprintf("confirmed stubs do not exceed the cap of %d (risk %s)", r.stubCap, c.RiskLevel) + r.stubScanNote()
	var locs []string
	var where []Location
	for _, s := range stubs {
		locs = append(locs, s.String())
		where = append(where, s.Location)
	}
	switch {
	case r.stubErr != "":
		r.checks = append(r.checks, failCheck(2, "stubs", text, r.stubErr, StatusError, CauseDetectorError))
	case len(stubs) > r.stubCap:
		ch := failCheck(2, "stubs", text, fmt.Sprintf("%d confirmed stubs > cap %d: %s", len(stubs), r.stubCap, joinLimited(locs, 10)), StatusBlock, CauseStubCapExceeded)
		ch.Locations = where
		r.checks = append(r.checks, ch)
	case len(stubs) > 0:
		ch := warnCheck(2, "stubs", text, fmt.Sprintf("%d confirmed stubs (cap %d): %s", len(stubs), r.stubCap, joinLimited(locs, 10)), "stub_confirmed")
		ch.Locations = where
		r.checks = append(r.checks, ch)
	case r.stubScan != nil:
		r.checks = append(r.checks, passCheck(2, "stubs", text, fmt.Sprintf("no confirmed stub in %d added lines of %d text files (cap %d)", r.stubScan.Lines, r.stubScan.Files, r.stubCap)))
	}
}

type stub struct {
	Location
	Pattern string
	Text    string
}

func (s stub) String() string {
	return fmt.Sprintf("%s:%d %q", s.Path, s.Line, truncate(strings.TrimSpace(s.Text), 60))
}

// stubs confirms stubs: a self_check.possible_stubs location whose line matches a stub pattern,
// and every added line of the diff that does. Each place counts once.
func (r *run) stubs() []stub {
	var out []stub
	seen := map[Location]bool{}
	add := func(s stub) {
		if !seen[s.Location] {
			seen[s.Location] = true
			out = append(out, s)
		}
	}
	if sc, ok := r.in.Record.SelfCheck(); ok {
		for _, loc := range sc.PossibleStubs {
			r.confirmStub(loc, add)
		}
	}
	if r.haveBase {
		r.scanAddedLines(add)
	}
	return out
}

// confirmStub reads a possible stub location in the working tree (through the project root, so it
// cannot leave the project) and confirms it when its line (or, without a line, any line) matches.
func (r *run) confirmStub(loc record.StubLocation, add func(stub)) {
	data, err := fsutil.ReadLimited(r.workRoot(), loc.Path, r.in.Policy.MaxEvidenceBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return // a stub in a file that no longer exists is not a stub
	}
	if err != nil {
		r.stubErr = fmt.Sprintf("possible stub %s: %v", loc.Path, err)
		return
	}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if loc.Line > 0 && n != loc.Line {
			continue
		}
		if p, ok := r.in.Policy.isStub(line); ok {
			add(stub{Location: Location{Path: loc.Path, Line: n}, Pattern: p, Text: line})
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
