package tiers

import (
	"fmt"
	"strings"

	"github.com/geas-dev/geas/vocab"
)

// staleEvidence checks that no evidence file that carries a commit names a commit other than the
// head (SPEC §5.1, stale_evidence): a review of an older commit says nothing about the head. It runs
// after baseline, which resolves the head. The commit is geas v1.0's commit or geas v1.4.0's
// revision_ref, whichever the file carries, and both when it carries both (evidence.Revisions):
// each is judged by the same rule, so a file cannot name the head in one and an older commit in
// the other.
//
// The comparison: a full SHA (either case) must equal the head. An abbreviated SHA (4 to 39 hex
// digits) counts as the head only if the head starts with it and it is unambiguous in the
// repository (git's own rule for abbreviations; a branch that happens to be named like the digits
// does not make an older commit's prefix the head). Anything else (a branch name, "HEAD", a
// prefix that matches several objects) names no commit this gate can prove is the head: stale.
func staleEvidence(pass *Pass) (out []Check) {
	add := func(c Check) { out = append(out, c) }
	const text = "no evidence file that carries a commit names a commit other than the head"
	var carrying []string
	for _, e := range pass.in.Evidence {
		if len(e.Revisions()) > 0 {
			carrying = append(carrying, e.Name)
		}
	}
	if len(carrying) == 0 {
		return
	}
	if pass.head == "" {
		add(skippedCheck(0, "stale_evidence", text, fmt.Sprintf("no integration head was resolved (%s), so %s carrying commit could not be compared",
			pass.noHeadReason(), limitedList(carrying, 10))))
		return
	}
	var fresh []string
	for _, e := range pass.in.Evidence {
		revs := e.Revisions()
		if len(revs) == 0 {
			continue
		}
		stale := false
		for _, r := range revs {
			why := notTheHead(pass, strings.TrimSpace(r.Ref))
			if why == "" {
				continue
			}
			stale = true
			name := "stale:" + e.Name
			if r.Field != "commit" {
				name += "#" + r.Field
			}
			add(failCheck(0, name, text, fmt.Sprintf("%s (agent %s) carries %s %q, %s; the head is %s", e.Name, e.Agent, r.Field, r.Ref, why, pass.head), StatusBlock, vocab.CauseStaleEvidence))
		}
		if !stale {
			fresh = append(fresh, e.Name)
		}
	}
	if len(fresh) == len(carrying) {
		add(passCheck(0, "stale_evidence", text, fmt.Sprintf("%s name the head %s", limitedList(fresh, 10), short(pass.head))))
	}
	return
}

// notTheHead says why commit c is not the head, or "" when it is.
func notTheHead(pass *Pass, c string) string {
	lc := strings.ToLower(c)
	switch {
	case !isHexString(lc):
		return "which is not a commit id"
	case len(lc) == 40:
		if lc == pass.head {
			return ""
		}
		return "another commit"
	case len(lc) < 4 || len(lc) > 40:
		return "which is not a commit id"
	case !strings.HasPrefix(pass.head, lc):
		return "an abbreviation the head does not start with"
	}
	if pass.repo == nil {
		return "an abbreviation that could not be checked against the repository"
	}
	full, err := pass.repo.ResolveAbbrev(lc)
	if err != nil {
		return fmt.Sprintf("an abbreviation the repository does not resolve to one commit (%v)", err)
	}
	if full != pass.head {
		return "an abbreviation of another commit " + full
	}
	return ""
}

func (pass *Pass) noHeadReason() string {
	if c := pass.in.Contract; c != nil && c.BaseSnapshot == "" {
		return "profile " + string(c.GateProfile) + " without a base_snapshot has no git checks"
	}
	return "the baseline check did not resolve it"
}

func isHexString(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
