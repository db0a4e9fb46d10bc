package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/testfixture"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// revalidateFixture is the example task in git with one more commit on top of its work, as an
// earlier task's work would be: base (the task's base) → greeter (its work) → later. It returns
// the task and the SHAs of the three commits.
func revalidateFixture(t *testing.T) (*fixture, Task, [3]string) {
	t.Helper()
	f := newFixture(t, true)
	base := f.Git("rev-parse", "HEAD~1")
	work := f.Git("rev-parse", "HEAD")
	f.Write("greeter/later.go", "package main\n")
	later := f.Commit("later")
	return f, Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, [3]string{base, work, later}
}

func historyLen(t *testing.T, f *fixture) int {
	t.Helper()
	rec, err := record.Load(f.Open().Geas, testTaskDir+"/"+record.RecordFile)
	require.NoError(t, err)
	return len(rec.History())
}

func TestTheDriftReportNamesTheFilesSinceThePinnedBaseAndWritesNothing(t *testing.T) {
	f, task, c := revalidateFixture(t)
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	contractBefore := f.Read(testfixture.TaskFile("contract.json"))
	n := historyLen(t, f)

	out, err := Revalidate(t.Context(), task, Revalidation{})
	require.NoError(t, err)
	assert.Equal(t, c[0], out.PinnedBase)
	assert.Contains(t, out.PinnedBy, "approval by product-authority")
	require.NotNil(t, out.Drift)
	assert.Equal(t, c[0], out.Drift.Base)
	assert.Equal(t, c[2], out.Drift.Head)
	assert.Equal(t, "HEAD", out.Drift.HeadFrom)
	assert.True(t, out.Drift.Ancestor)
	assert.Equal(t, []string{"README.md", "greeter/later.go", "greeter/main.go"}, out.Drift.Changed)
	assert.Equal(t, []string{"README.md", "greeter/later.go", "greeter/main.go"}, out.Drift.InSurfaces)
	assert.Empty(t, out.Drift.Outside)
	assert.Equal(t, 1, out.Drift.Bookkeeping, "the contract's base pin, committed with the work")
	assert.Equal(t, contractBefore, f.Read(testfixture.TaskFile("contract.json")))
	assert.Equal(t, n, historyLen(t, f), "a report appends nothing")
}

func TestARepinMovesTheBaseAndApprovesItsRulesInOneStep(t *testing.T) {
	f, task, c := revalidateFixture(t)
	res := f.gate() // the first run pins the rules with the old base
	assertPass(t, res)
	f.Contract(func(m map[string]any) { m["status"] = "integrated" })

	out, err := Revalidate(t.Context(), task, Revalidation{Base: "HEAD~1", By: "orchestration-authority", Reason: "the work before is another task's"})
	require.NoError(t, err)
	assert.Equal(t, c[1], out.NewBase, "HEAD~1 is recorded as the full SHA it names")
	assert.True(t, out.BaseWritten)
	require.NotNil(t, out.Approved)
	assert.True(t, out.Approved.HadPin)
	assert.NotEqual(t, out.Approved.Previous, out.Approved.RulesSHA256)
	assert.Equal(t, []string{"greeter/later.go"}, out.Drift.Changed)

	_, res2, _ := f.evaluate(tiers.Options{Now: testNow})
	assertPass(t, res2)
	assert.Contains(t, findCheck(t, res2.Checks, "scope").Evidence, "all 1 changed files are in the surfaces")
}

func TestARepinCutShortBetweenItsWritesBlocksNamingTheBaseUntilRunAgain(t *testing.T) {
	f, task, c := revalidateFixture(t)
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	n := historyLen(t, f)

	crash := errors.New("killed between the writes")
	testAfterBaseWritten = func() error { return crash }
	_, err = Revalidate(t.Context(), task, Revalidation{Base: c[1], By: "orchestration-authority", Reason: "move"})
	testAfterBaseWritten = nil
	require.ErrorIs(t, err, crash)
	assert.Equal(t, n, historyLen(t, f), "nothing approved")

	// The next run blocks with rules_changed, naming base_snapshot with both values.
	_, res, _ := f.evaluate(tiers.Options{Now: testNow})
	assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseRulesChanged)
	ev := findCheck(t, res.Checks, "rules_pinned").Evidence
	assert.Contains(t, ev, `base_snapshot: "`+c[0]+`" → "`+c[1]+`"`)

	// The report says the contract's base is not the pinned one.
	rep, err := Revalidate(t.Context(), task, Revalidation{})
	require.NoError(t, err)
	assert.Equal(t, c[0], rep.PinnedBase)
	assert.Equal(t, c[1], rep.ContractBase)

	// The same command run again approves without a second write of the contract.
	out, err := Revalidate(t.Context(), task, Revalidation{Base: c[1], By: "orchestration-authority", Reason: "move"})
	require.NoError(t, err)
	assert.False(t, out.BaseWritten)
	_, res, _ = f.evaluate(tiers.Options{Now: testNow})
	assertPass(t, res)
}

func TestARepinIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	cases := []struct {
		name string
		r    Revalidation
		key  bool   // the history is signed, and the command runs without the key
		want string // in the error
	}{
		{"a builder", Revalidation{Base: "HEAD~1", By: "software-engineer", Reason: "mine"}, false, "software-engineer may not re-pin a task's base"},
		{"an authority's name in another case", Revalidation{Base: "HEAD~1", By: "Orchestration-Authority", Reason: "mine"}, false, "may not re-pin"},
		{"no authority", Revalidation{Base: "HEAD~1", Reason: "mine"}, false, "--base needs --by"},
		{"no reason", Revalidation{Base: "HEAD~1", By: "orchestration-authority", Reason: " "}, false, "--base needs --reason"},
		{"an approval without a base", Revalidation{By: "orchestration-authority", Reason: "x"}, false, "give it with --base REV"},
		{"an unknown revision", Revalidation{Base: "nope", By: "orchestration-authority", Reason: "x"}, false, `--base "nope" does not name a commit`},
		{"a tree", Revalidation{Base: "HEAD^{tree}", By: "orchestration-authority", Reason: "x"}, false, `--base "HEAD^{tree}" does not name a commit`},
		{"a blob's tag", Revalidation{Base: "blobtag", By: "orchestration-authority", Reason: "x"}, false, `--base "blobtag" does not name a commit`},
		{"no key on a signed history", Revalidation{Base: "HEAD~1", By: "orchestration-authority", Reason: "forged"}, true, "approving its rules needs " + record.SigningKeyEnv},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, task, _ := revalidateFixture(t)
			f.Git("tag", "blobtag", "HEAD:README.md")
			if tc.key {
				t.Setenv(record.SigningKeyEnv, "k-revalidate")
			}
			_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
			require.NoError(t, err)
			if tc.key {
				t.Setenv(record.SigningKeyEnv, "")
			}
			before := f.Read(testfixture.TaskFile("contract.json"))
			n := historyLen(t, f)
			_, err = Revalidate(t.Context(), task, tc.r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, string(before), string(f.Read(testfixture.TaskFile("contract.json"))), "the contract is not written")
			assert.Equal(t, n, historyLen(t, f), "nothing is appended")
		})
	}
}

func TestARepinWithTheKeyIsSigned(t *testing.T) {
	f, task, c := revalidateFixture(t)
	t.Setenv(record.SigningKeyEnv, "k-revalidate")
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	out, err := Revalidate(t.Context(), task, Revalidation{Base: "main~1", By: "orchestration-authority", Reason: "move"})
	require.NoError(t, err)
	assert.Equal(t, c[1], out.NewBase, "a branch with ~1 resolves to its commit")
	rec, err := record.Load(f.Open().Geas, testTaskDir+"/"+record.RecordFile)
	require.NoError(t, err)
	h := rec.History()
	require.Len(t, h, 2)
	assert.Equal(t, record.KindApproval, h[1].Kind)
	assert.NotEmpty(t, h[1].HMAC, "an approval under the key carries its MAC")
	assert.False(t, strings.Contains(string(f.Read(testfixture.TaskFile("contract.json"))), c[0]), "the old base is gone from the contract")
}

// policyFixture is the example task in git with a gate policy committed after its base: base →
// greeter (the work) → policy → later. The policy judges a task only from its base (SPEC §5.3
// Part B), so moving the base past it changes the rules by the policy too.
func policyFixture(t *testing.T, policy string) (*fixture, Task, string) {
	t.Helper()
	f := newFixture(t, true)
	f.Write(".geas/gate-policy.json", policy)
	at := f.Commit("policy")
	f.Write("greeter/later.go", "package main\n")
	f.Commit("later")
	return f, Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, at
}

func TestARepinApprovesTheRulesOfTheNewBasesPolicy(t *testing.T) {
	f, task, at := policyFixture(t, `{"shared_globs": ["*.md"]}`+"\n")
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	out, err := Revalidate(t.Context(), task, Revalidation{Base: at, By: "orchestration-authority", Reason: "past the policy"})
	require.NoError(t, err)
	assert.True(t, out.BaseWritten)
	_, res, _ := f.evaluate(tiers.Options{Now: testNow})
	assertPass(t, res)
	assert.Contains(t, findCheck(t, res.Checks, "rules_pinned").Evidence, "equals the pin")
}

func TestARepinWhoseRulesCannotBeApprovedLeavesTheContractAsItWas(t *testing.T) {
	f, task, at := policyFixture(t, `{"no_such_setting": true}`+"\n")
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	before := f.Read(testfixture.TaskFile("contract.json"))
	n := historyLen(t, f)
	_, err = Revalidate(t.Context(), task, Revalidation{Base: at, By: "orchestration-authority", Reason: "past the policy"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the contract left as it was")
	assert.Equal(t, string(before), string(f.Read(testfixture.TaskFile("contract.json"))))
	assert.Equal(t, n, historyLen(t, f))
	_, res, _ := f.evaluate(tiers.Options{Now: testNow})
	assert.NotContains(t, causeCodes(res.Causes), vocab.CauseRulesChanged, "the task is as it was: the old rules hold")
}

// TestARepinShowsEveryRuleItApproves: an approval approves the rules as they are, so a re-pin
// names each field it changes in the pinned rules, the base and anything an agent changed since
// the pin, for the authority to see what it approved.
func TestARepinShowsEveryRuleItApproves(t *testing.T) {
	f, task, c := revalidateFixture(t)
	_, err := Approve(t.Context(), task, Approval{By: "product-authority", Reason: "pin"})
	require.NoError(t, err)
	f.Contract(func(m map[string]any) { m["stub_cap"] = 50 })
	out, err := Revalidate(t.Context(), task, Revalidation{Base: c[1], By: "orchestration-authority", Reason: "move"})
	require.NoError(t, err)
	assert.Equal(t, []string{`base_snapshot: "` + c[0] + `" → "` + c[1] + `"`, "stub_cap: (absent) → 50"}, out.Changes)
}

// TestARepinByALookAlikeOfAnAuthorityIsRefused: --by is compared byte for byte with the
// authorities' names: a case variant, a Unicode look-alike (a hyphen, a full-width letter, a
// compatibility or combining form that normalizes to the name), white space or a control
// character around it is not an authority. The control: an authority, or an agent named after
// one, re-pins.
func TestARepinByALookAlikeOfAnAuthorityIsRefused(t *testing.T) {
	for _, by := range []string{
		"Orchestration-Authority", "ORCHESTRATION-AUTHORITY",
		"orchestration\u2010authority", "orchestration\u2011authority", // hyphen, non-breaking hyphen
		"\uff4frchestration-authority", // full-width o
		"orchestration-authority\u200b", "\u200borchestration-authority", "orchestration-authority\u00a0",
		" orchestration-authority", "orchestration-authority ", "orchestration-authority\n", "orchestration-authority\x00",
		"orchestration-authorit\u0079\u0301", "orchestration-authority_x", "orchestration-authority.x", "orchestration-authority/x",
		"", "-", "authority",
	} {
		assert.Error(t, CheckAuthority(by, "re-pin a task's base"), "%q", by)
	}
	for _, by := range []string{"orchestration-authority", "product-authority", "design-authority-review"} {
		assert.NoError(t, CheckAuthority(by, "re-pin a task's base"), by)
	}
}
