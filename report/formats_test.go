package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/vocab"

	"github.com/geas-dev/geas/tiers"
)

// junitDoc is the part of a JUnit document the count test reads.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Type string `xml:"type,attr"`
				Body string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Body string `xml:",chardata"`
			} `xml:"error"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestJUnitCountsEqualCheckStatuses parses the JUnit output with encoding/xml: every check is a
// testcase of its task's tier suite, and the failure, error and skipped counts of each suite and
// of the document equal the statuses of the checks (fail and block are failures, error and unknown
// statuses errors, warnings pass).
func TestJUnitCountsEqualCheckStatuses(t *testing.T) {
	results := recordedResults(t)

	// A run of the example, failing in tier 1, and a result holding what XML cannot carry.
	fresh := recordedResult(t, "example-tier1-fail.json")
	require.Equal(t, vocab.VerdictFail, fresh.Verdict)
	fresh.TaskID = "fresh" // the recorded runs have a t1 too
	results = append(results, fresh)
	odd := &tiers.Result{TaskID: "t9", TierResults: map[string]tiers.TierResult{}, Checks: []tiers.Check{
		{Name: "ctl\x00\x1b[31m", Tier: 1, Status: tiers.StatusFail, Blocking: true, Evidence: "bell \a, nul \x00, bad utf-8 \xff, ]]> <x/>"},
		{Name: "strange", Tier: 2, Status: tiers.Status("maybe"), Blocking: true, Evidence: "status nobody knows"},
	}}
	results = append(results, odd)

	var out bytes.Buffer
	require.NoError(t, writeJUnit(&out, results, false))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc), "junit output is well-formed XML:\n%s", out.String())

	type counts struct{ tests, failures, errors, skipped int }
	want := map[string]*counts{}
	var total counts
	for _, res := range results {
		for tier := range 3 {
			want[res.TaskID+"/tier_"+string(rune('0'+tier))] = &counts{}
		}
		for _, c := range res.Checks {
			n := want[res.TaskID+"/tier_"+string(rune('0'+c.Tier))]
			n.tests++
			total.tests++
			switch c.Status {
			case tiers.StatusFail, tiers.StatusBlock:
				n.failures++
				total.failures++
			case tiers.StatusSkipped:
				n.skipped++
				total.skipped++
			case tiers.StatusPass, tiers.StatusWarn:
			default:
				n.errors++
				total.errors++
			}
		}
	}
	assert.Equal(t, total, counts{doc.Tests, doc.Failures, doc.Errors, doc.Skipped}, "testsuites counts")
	require.Len(t, doc.Suites, 3*len(results), "a suite per tier per result")
	for _, s := range doc.Suites {
		w := want[s.Name]
		require.NotNil(t, w, "suite %s", s.Name)
		assert.Equal(t, *w, counts{s.Tests, s.Failures, s.Errors, s.Skipped}, "attributes of suite %s", s.Name)
		var got counts
		for _, c := range s.Cases {
			assert.Equal(t, s.Name, c.Classname)
			got.tests++
			switch {
			case c.Failure != nil:
				got.failures++
			case c.Error != nil:
				got.errors++
			case c.Skipped != nil:
				got.skipped++
			}
		}
		assert.Equal(t, *w, got, "elements of suite %s", s.Name)
	}
	assert.Greater(t, total.failures, 0)
	assert.Greater(t, total.errors, 0)
	assert.Greater(t, total.skipped, 0)
}

// TestJUnitMarksBlockAndKeepsWarnings: a block is a failure of type block, and a warning is a
// passing testcase whose system-out holds the warning.
func TestJUnitMarksBlockAndKeepsWarnings(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeJUnit(&out, recordedResults(t), false))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc))
	found := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case s.Name == "t4/tier_2" && c.Name == "stubs":
				require.NotNil(t, c.Failure)
				assert.Equal(t, "block", c.Failure.Type)
				assert.Contains(t, c.Failure.Body, "at greeter/main.go:3")
				found["block"] = true
			case s.Name == "t1/tier_2" && c.Name == "scope:shared":
				assert.Nil(t, c.Failure)
				assert.Contains(t, c.SystemOut, "shared files changed: go.mod")
				found["warn"] = true
			case s.Name == "t3/tier_0" && c.Name == "review:qa-engineer":
				require.NotNil(t, c.Failure)
				assert.Equal(t, "no evidence file of agent qa-engineer\n(evidence files: <technical-writer.json> & none else)", c.Failure.Body)
				found["escaped"] = true
			}
		}
	}
	assert.Len(t, found, 3)
}

// TestGitHubCommandsCannotBeInjected: evidence and paths are escaped as the runner expects, so a
// newline in evidence cannot start a command of its own and a comma or colon in a path cannot end
// a property.
func TestGitHubCommandsCannotBeInjected(t *testing.T) {
	res := &tiers.Result{MissionID: "m1", TaskID: "t1", Verdict: vocab.VerdictFail, Checks: []tiers.Check{
		{Name: "scope", Status: tiers.StatusFail, Blocking: true, Code: vocab.CauseScopeViolation,
			Text: "in scope", Evidence: "50% off\r\n::add-mask::secret",
			Locations: []tiers.Location{{Path: "a,b:c%.go", Line: 7}, {Path: "d.go"}}},
		{Name: "ok", Status: tiers.StatusPass, Blocking: true},
		{Name: "later", Status: tiers.StatusSkipped},
		{Name: "shared", Status: tiers.StatusWarn, Evidence: "go.mod"},
	}}
	var out bytes.Buffer
	require.NoError(t, writeGitHub(&out, []*tiers.Result{res}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, []string{
		"::error title=t1/scope%3A fail (scope_violation),file=a%2Cb%3Ac%25.go,line=7::in scope: 50%25 off%0D%0A::add-mask::secret",
		"::error title=t1/scope%3A fail (scope_violation),file=d.go::in scope: 50%25 off%0D%0A::add-mask::secret",
		"::warning title=t1/shared%3A warn::go.mod",
		"::notice title=geas gate m1/t1::verdict FAIL; retry budget none -> none; next: ",
	}, lines)
}

// TestGitHubAllAnnotationsCannotBeInjected: the --all lines of tasks that were not gated and the
// overall line are escaped as the others are; a reason (an agent's transition reason can be one)
// with CR, LF and % starts no command of its own, and a mission id cannot end the title property.
func TestGitHubAllAnnotationsCannotBeInjected(t *testing.T) {
	a := &All{ID: "m1:x,y", Mission: &gate.Mission{
		Tasks:   []*gate.MissionTask{{TaskID: "t1", Outcome: "cancelled", Reason: "by me\r\n::add-mask::secret 100%"}},
		Overall: gate.Overall{Counts: map[string]int{}, ExitCode: 2, Reason: "no task\n::stop-commands::x"},
	}}
	var out bytes.Buffer
	require.NoError(t, For(GitHub).All(&out, nil, a))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, []string{
		"::warning title=t1/cancelled::by me%0D%0A::add-mask::secret 100%25",
		"::error title=geas gate --all m1%3Ax%2Cy::overall: FAILURE: no task%0A::stop-commands::x (exit 2)",
	}, lines)
}

// TestJUnitTimesComeFromTheRuns: an eval command's testcase takes its run's duration, a criterion
// its script detector's, a tier suite the sum of its cases, and <testsuites> the runs' whole
// durations; a check whose run cannot be told apart (no run, another command's run) takes 0.
func TestJUnitTimesComeFromTheRuns(t *testing.T) {
	res := &tiers.Result{TaskID: "t1", DurationMS: 4321, TierResults: map[string]tiers.TierResult{},
		Checks: []tiers.Check{
			{Name: "eval_command_1", Tier: 1, Text: "eval command 1: `make` exits 0", Status: tiers.StatusPass},
			{Name: "eval_command_2", Tier: 1, Text: "eval command 2: `make test` exits 0", Status: tiers.StatusFail},
			{Name: "eval_command_3", Tier: 1, Text: "eval command 3: `make lint` exits 0", Status: tiers.StatusSkipped},
			{Name: "criterion:AC1", Tier: 2, Status: tiers.StatusPass},
			{Name: "criterion:AC2", Tier: 2, Status: tiers.StatusPass},
			{Name: "scope", Tier: 2, Status: tiers.StatusPass},
		},
		EvalRuns: []tiers.EvalRun{
			{Command: "make", DurationMS: 1500},
			{Command: "make tests", DurationMS: 700}, // not eval command 2's command: not its time
			{Command: "AC1: go test ./x", DurationMS: 250},
		}}
	var out bytes.Buffer
	require.NoError(t, writeJUnit(&out, []*tiers.Result{res}, false))
	var doc struct {
		Time   string `xml:"time,attr"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Time  string `xml:"time,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
				Time string `xml:"time,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, "4.321", doc.Time)
	got := map[string]string{}
	for _, s := range doc.Suites {
		got[s.Name] = s.Time
		for _, c := range s.Cases {
			got[c.Name] = c.Time
		}
	}
	assert.Equal(t, map[string]string{
		"t1/tier_0": "0.000", "t1/tier_1": "1.500", "t1/tier_2": "0.250",
		"eval_command_1": "1.500", "eval_command_2": "0.000", "eval_command_3": "0.000",
		"criterion:AC1": "0.250", "criterion:AC2": "0.000", "scope": "0.000",
	}, got)
}

// TestJUnitVerifyFailsEveryRevokedOrTamperedTask: the verify document parses, has a failure for
// each revoked or tampered task (and a status verify does not know), and none for an intact one.
func TestJUnitVerifyFailsEveryRevokedOrTamperedTask(t *testing.T) {
	v := recordedVerify(t)
	v.Tasks = append(v.Tasks, gate.Verified{VerifyReport: &gate.VerifyReport{MissionID: "m1", TaskID: "t8", Status: gate.VerifyStatus("unsure")}})
	var out bytes.Buffer
	require.NoError(t, For(JUnit).Verify(&out, v))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(out.Bytes(), &doc), "well-formed:\n%s", out.String())
	failed := map[string]bool{}
	for _, s := range doc.Suites {
		if s.Failures > 0 {
			failed[s.Name] = true
		}
	}
	assert.Equal(t, map[string]bool{"t1/verify": true, "t3/verify": true, "t8/verify": true}, failed)
	assert.Equal(t, 3, doc.Failures)
	assert.Equal(t, 9, doc.Tests)
}
