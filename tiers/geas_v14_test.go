package tiers

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// TestARevisionRefIsJudgedAsACommitIs: geas v1.4.0's revision_ref names the commit its evidence
// is about, as v1.0's commit does, under the same rule: only the head (full in either case, or an
// unambiguous abbreviation of it) is fresh; an older commit, a branch name (even one that points
// at the head now, since it moves), HEAD or garbage is stale_evidence. A file that carries both
// fields is judged on each, so the head in one cannot cover an older commit in the other.
func TestARevisionRefIsJudgedAsACommitIs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	head := strings.TrimSpace(f.git("rev-parse", "HEAD"))
	old := strings.TrimSpace(f.git("rev-parse", "HEAD~1"))
	// A blob whose id starts with the head's first five digits, and a commit (unreachable) whose
	// id starts with its first four: git reads an abbreviation among the commits alone, so the
	// five digits still name the head and the four name two commits.
	f.write("twin.txt", colliding("blob", head[:5], "", func(i int) string { return fmt.Sprintf("twin %d\n", i) }))
	f.git("hash-object", "-w", "twin.txt")
	tree := strings.TrimSpace(f.git("rev-parse", "HEAD^{tree}"))
	f.write("twin.txt", colliding("commit", head[:4], head[:5], func(i int) string {
		return fmt.Sprintf("tree %s\nparent %s\nauthor t <t@geas.invalid> 1793523600 +0000\ncommitter t <t@geas.invalid> 1793523600 +0000\n\ntwin %d\n", tree, old, i)
	}))
	f.git("hash-object", "-t", "commit", "-w", "twin.txt")
	f.remove("twin.txt")
	for _, tc := range []struct {
		name, commit, ref string
		stale             bool
		why               string
	}{
		{name: "the head", ref: head},
		{name: "the head in upper case", ref: strings.ToUpper(head)},
		{name: "an abbreviation of the head", ref: head[:8]},
		{name: "the head with spaces around it", ref: " " + head + " "},
		{name: "an older commit", ref: old, stale: true, why: "another commit"},
		{name: "an abbreviation of an older commit", ref: old[:10], stale: true, why: "an abbreviation the head does not start with"},
		{name: "a branch that points at the head", ref: "main", stale: true, why: "which is not a commit id"},
		{name: "HEAD", ref: "HEAD", stale: true, why: "which is not a commit id"},
		{name: "too short to be an abbreviation", ref: head[:3], stale: true, why: "which is not a commit id"},
		{name: "an abbreviation of the head that a blob shares", ref: head[:5]},
		{name: "an abbreviation of the head that another commit shares", ref: head[:4], stale: true, why: "an abbreviation the repository does not resolve to one commit"},
		{name: "a longer string that starts with the head", ref: head + "0", stale: true, why: "which is not a commit id"},
		{name: "commit the head, revision_ref an older commit", commit: head, ref: old, stale: true, why: "another commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.evidence("design-authority.json", func(m map[string]any) {
				delete(m, "commit")
				if tc.commit != "" {
					m["commit"] = tc.commit
				}
				m["revision_ref"] = tc.ref
			})
			_, res, _ := f.evaluate()
			if !tc.stale {
				c := findCheck(t, res.Checks, "stale_evidence")
				assert.Equal(t, StatusPass, c.Status, c.Evidence)
				assertPass(t, res)
				return
			}
			c := findCheck(t, res.Checks, "stale:design-authority.json#revision_ref")
			assert.Equal(t, StatusBlock, c.Status)
			assert.Equal(t, vocab.CauseStaleEvidence, c.Code)
			assert.Contains(t, c.Evidence, "carries revision_ref \""+tc.ref+"\", "+tc.why)
			assert.Equal(t, vocab.VerdictBlock, res.Verdict)
			assert.False(t, hasCheck(res.Checks, "stale:design-authority.json"), "the commit field is the head")
		})
	}
}

// colliding returns the first content(i) whose git object id, as an object of kind typ, starts
// with prefix and not with avoid (prefix four or five hex digits: about 65,536 or a million
// tries).
func colliding(typ, prefix, avoid string, content func(i int) string) string {
	for i := 0; ; i++ {
		c := content(i)
		sum := sha1.Sum([]byte(fmt.Sprintf("%s %d\x00%s", typ, len(c), c)))
		id := hex.EncodeToString(sum[:])
		if strings.HasPrefix(id, prefix) && (avoid == "" || !strings.HasPrefix(id, avoid)) {
			return c
		}
	}
}

// TestSlotsRouteAsTypes: a contract that routes by geas v1.4.0 slots alone requires a review of
// each slot, matched to evidence as an agent type is, and the builder's own file under a slot
// name is not a review of it.
func TestSlotsRouteAsTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.contract(func(m map[string]any) {
		for _, k := range []string{"version", "artifact_type", "artifact_id", "producer_type"} {
			delete(m, k)
		}
		m["routing"] = map[string]any{"primary_worker_slot": "implementer", "required_reviewer_slots": []any{"design-authority", "quality"}}
	})
	// The slots name the agents: the builder's and the tester's files move to their slot names.
	f.write(taskFile("evidence/implementer.json"), string(f.read(taskFile("evidence/software-engineer.json"))))
	f.remove(taskFile("evidence/software-engineer.json"))
	f.evidence("implementer.json", func(m map[string]any) { m["agent"] = "implementer" })
	_, res, _ := f.evaluate()
	c := findCheck(t, res.Checks, "review:quality")
	assert.Equal(t, StatusBlock, c.Status, c.Evidence)
	assert.Equal(t, vocab.CauseMissingReview, c.Code)
	assert.Equal(t, StatusPass, findCheck(t, res.Checks, "review:design-authority").Status)

	f.write(taskFile("evidence/quality.json"), string(f.read(taskFile("evidence/qa-engineer.json"))))
	f.remove(taskFile("evidence/qa-engineer.json"))
	f.evidence("quality.json", func(m map[string]any) { m["agent"] = "quality" })
	_, res, _ = f.evaluate()
	assertPass(t, res)

	// The builder reviewing itself under a reviewer slot's name is no review.
	f.contract(func(m map[string]any) {
		m["routing"] = map[string]any{"primary_worker_slot": "quality", "required_reviewer_slots": []any{"quality"}}
	})
	_, res, _ = f.evaluate()
	c = findCheck(t, res.Checks, "review:quality")
	require.Equal(t, StatusBlock, c.Status, c.Evidence)
	assert.Contains(t, c.Evidence, "primary worker")
}

// TestEveryTypeOfTheWorkerSlotIsTheBuilder: a contract that names only geas v1.4.0's worker slot
// does not say which of the slot's agent types builds, so every type that fills it in geas's
// profiles is the builder (its evidence never counts as a review); one that names the worker type
// beside the slot is read by the type, as v1.0.
func TestEveryTypeOfTheWorkerSlotIsTheBuilder(t *testing.T) {
	t.Parallel()
	c := &contract.Contract{Routing: contract.Routing{PrimaryWorkerSlot: "implementer", PrimaryWorkerType: "implementer", WorkerFromSlot: true}}
	known := evidence.KnownTypes("implementer")
	for _, agent := range []string{"implementer", "implementer-2", "software-engineer", "Research_Analyst", "literature-analyst-review"} {
		assert.True(t, isBuilderOf(c, known, agent, vocab.Reviewer), agent)
	}
	for _, agent := range []string{"qa-engineer", "design-authority", "quality", "domain-expert"} {
		assert.False(t, isBuilderOf(c, known, agent, vocab.Reviewer), agent)
	}
	typed := &contract.Contract{Routing: contract.Routing{PrimaryWorkerSlot: "implementer", PrimaryWorkerType: "technical-writer"}}
	assert.True(t, isBuilderOf(typed, known, "technical-writer", vocab.Reviewer))
	assert.False(t, isBuilderOf(typed, known, "software-engineer", vocab.Reviewer), "the type names the builder")
}
