package tiers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/vocab"
)

// The repository is agent-writable, so nothing in it is taken on trust (SPEC §5.1): internal/git
// verifies every object it reads against its id and confirms a commit-graph's path against the
// commit objects. A forged object is an error of the run (repository_corrupt), whatever check
// read it: the verdict cannot be about content that is not the commit's.

// isCorrupt reports whether err is, or wraps, a forged or damaged object.
func isCorrupt(err error) bool {
	var ce *git.CorruptError
	return errors.As(err, &ce)
}

// gitFailCheck is failCheck for a check whose git read failed with err: a corrupt object makes it
// an error with cause repository_corrupt, whatever status and code the check gives other
// failures.
func gitFailCheck(tier int, name, text, evidence string, err error, s Status, code vocab.CauseCode) Check {
	if isCorrupt(err) {
		s, code = StatusError, vocab.CauseRepositoryCorrupt
	}
	return failCheck(tier, name, text, evidence, s, code)
}

// maxCorruptNamed is how many corrupt objects the repository_intact check names.
const maxCorruptNamed = 5

// repositoryIntact adds the repository_intact error when a read of the run found a corrupt object
// that no check reported as such: a caller that took the read's error for "not found" (an
// abbreviation's candidates, the policy at the base, a stale-evidence check) must not let the
// forgery go unreported. Nothing is added when the repository was never read or nothing was
// found. checks are the run's checks so far; nil when nothing is to be said.
func repositoryIntact(pass *Pass, checks []Check) *Check {
	repo := pass.repo
	if repo == nil {
		repo = pass.in.repo
	}
	if repo == nil || len(repo.Corrupt()) == 0 {
		return nil
	}
	for _, c := range checks {
		if c.Code == vocab.CauseRepositoryCorrupt && !c.Advisory {
			return nil
		}
	}
	var named []string
	for _, e := range repo.Corrupt() {
		named = append(named, e.Error())
	}
	more := ""
	if len(named) > maxCorruptNamed {
		more = fmt.Sprintf(" (and %d more)", len(named)-maxCorruptNamed)
		named = named[:maxCorruptNamed]
	}
	text := "every git object the run read hashes to its id, and every commit-graph path it used is the commit objects'"
	c := failCheck(0, "repository_intact", text, strings.Join(named, "; ")+more, StatusError, vocab.CauseRepositoryCorrupt)
	return &c
}
