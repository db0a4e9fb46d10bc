package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// sarifSchema compiles the OASIS SARIF 2.1.0 schema of testdata (its source is named in
// testdata/sarif-schema-2.1.0.source.txt), with formats asserted: a uri that is not one fails.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, c.AddResource("sarif-schema-2.1.0.json", f))
	s, err := c.Compile("sarif-schema-2.1.0.json")
	require.NoError(t, err)
	return s
}

func validateSARIF(t *testing.T, s *jsonschema.Schema, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(doc, &v))
	require.NoError(t, s.Validate(v), "SARIF output does not match the SARIF 2.1.0 schema:\n%s", doc)
	return v
}

// TestSARIFMatchesTheSchema validates what geas gate, gate --all and gate verify write with
// --format sarif against the SARIF 2.1.0 JSON schema, and checks that the schema is not a check
// that cannot fail: a document with a level SARIF does not have is refused.
func TestSARIFMatchesTheSchema(t *testing.T) {
	s := sarifSchema(t)
	r := For(SARIF)
	require.NotNil(t, r)
	docs := map[string]*bytes.Buffer{"gate": {}, "all": {}, "verify": {}, "empty": {}}
	require.NoError(t, r.Gate(docs["gate"], recordedResults(t)))
	require.NoError(t, r.All(docs["all"], nil, recordedAll(t)))
	require.NoError(t, r.Verify(docs["verify"], recordedVerify(t)))
	require.NoError(t, r.Gate(docs["empty"], nil))
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) { validateSARIF(t, s, doc.Bytes()) })
	}

	bad := strings.Replace(docs["gate"].String(), `"level": "error"`, `"level": "fatal"`, 1)
	var v any
	require.NoError(t, json.Unmarshal([]byte(bad), &v))
	assert.Error(t, s.Validate(v), "the schema refuses a level SARIF does not define")
	bad = strings.Replace(docs["gate"].String(), `"version": "2.1.0"`, `"version": "2.0.0"`, 1)
	require.NoError(t, json.Unmarshal([]byte(bad), &v))
	assert.Error(t, s.Validate(v), "the schema refuses another version")
}

// sarifResults decodes the results of a SARIF document's one run.
type sarifDecoded struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful bool `json:"executionSuccessful"`
			ExitCode            int  `json:"exitCode"`
			Notifications       []struct {
				Level   string       `json:"level"`
				Message sarifMessage `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   sarifMessage
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation sarifArtifact `json:"artifactLocation"`
					Region           *sarifRegion  `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Properties          map[string]any    `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

func decodeSARIF(t *testing.T, b []byte) sarifDecoded {
	t.Helper()
	var d sarifDecoded
	require.NoError(t, json.Unmarshal(b, &d))
	require.Len(t, d.Runs, 1)
	return d
}

// TestSARIFHasARulePerCauseCode: the rules are the cause code registry, in its order, each with
// its description; every result's ruleIndex points at its rule.
func TestSARIFHasARulePerCauseCode(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeSARIF(&out, recordedResults(t)))
	d := decodeSARIF(t, out.Bytes())
	rules := d.Runs[0].Tool.Driver.Rules
	require.Len(t, rules, len(vocab.Causes()))
	for i, c := range vocab.Causes() {
		assert.Equal(t, string(c), rules[i].ID)
		assert.Equal(t, c.Description(), rules[i].ShortDescription.Text)
	}
	require.NotEmpty(t, d.Runs[0].Results)
	for _, r := range d.Runs[0].Results {
		assert.Equal(t, r.RuleID, rules[r.RuleIndex].ID)
	}
}

// TestSARIFResultsFollowTheChecks: one result per check that did not pass and per place it points
// at; scope violations carry the file, stubs the file and line; the level follows the status
// (warnings warn, advisory findings are notes, everything else that did not pass is an error);
// a check without a place points at the task's contract; a status nobody knows is an error of
// the unclassified rule, never dropped.
func TestSARIFResultsFollowTheChecks(t *testing.T) {
	results := recordedResults(t)
	odd := &tiers.Result{MissionID: "m1", TaskID: "t9", Verdict: vocab.VerdictError, Checks: []tiers.Check{
		{Name: "strange", Tier: 2, Status: tiers.Status("maybe"), Blocking: true, Evidence: "status nobody knows"},
		{Name: "later", Tier: 2, Status: tiers.StatusFail, Advisory: true, Code: vocab.CauseRiskUnhandled, Evidence: "r1"},
		{Name: "sp", Tier: 2, Status: tiers.StatusFail, Code: vocab.CauseScopeViolation, Locations: []tiers.Location{{Path: "a b/c%d#e?.go"}, {Path: "x:y.go"}}},
	}}
	results = append(results, odd)
	var out bytes.Buffer
	require.NoError(t, writeSARIF(&out, results))
	d := decodeSARIF(t, out.Bytes())

	want := 0
	for _, res := range results {
		for _, c := range res.Checks {
			if c.Status != tiers.StatusPass && c.Status != tiers.StatusSkipped {
				want += max(1, len(c.Locations))
			}
		}
	}
	got := d.Runs[0].Results
	assert.Len(t, got, want)
	found := map[string]bool{}
	for _, r := range got {
		loc := r.Locations[0].PhysicalLocation
		key := r.Properties["task_id"].(string) + "/" + r.Properties["check"].(string)
		switch {
		case key == "t4/stubs":
			assert.Equal(t, "error", r.Level)
			assert.Equal(t, "stub_cap_exceeded", r.RuleID)
			assert.Equal(t, "greeter/main.go", loc.ArtifactLocation.URI)
			require.NotNil(t, loc.Region)
			assert.Equal(t, 3, loc.Region.StartLine)
			found["stub"] = true
		case key == "t1/scope":
			assert.Equal(t, "scope_violation", r.RuleID)
			assert.Equal(t, "extra.txt", loc.ArtifactLocation.URI)
			require.NotNil(t, loc.Region, "code scanning requires a region")
			assert.Equal(t, 1, loc.Region.StartLine, "a file without a line is shown at its first line")
			found["scope"] = true
		case key == "t1/scope:shared":
			assert.Equal(t, "warning", r.Level)
			found["warn"] = true
		case key == "t3/state_eligible":
			assert.Equal(t, "state_ineligible", r.RuleID)
			assert.Equal(t, ".geas/missions/m1/tasks/t3/contract.json", loc.ArtifactLocation.URI)
			found["contract"] = true
		case key == "t9/strange":
			assert.Equal(t, "error", r.Level)
			assert.Equal(t, sarifUnclassified, r.RuleID)
			found["unknown"] = true
		case key == "t9/later":
			assert.Equal(t, "note", r.Level)
			assert.Equal(t, true, r.Properties["advisory"])
			found["advisory"] = true
		case key == "t9/sp":
			found[loc.ArtifactLocation.URI] = true
		}
		assert.Equal(t, "%SRCROOT%", loc.ArtifactLocation.URIBaseID)
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), r.PartialFingerprints[sarifFingerprint])
	}
	assert.Len(t, found, 8, "found %v", found)
	assert.True(t, found["a%20b/c%25d%23e%3F.go"], "a path is escaped as a URI reference")
	assert.True(t, found["./x:y.go"], "a colon in the first segment is not a scheme")
	inv := d.Runs[0].Invocations[0]
	assert.False(t, inv.ExecutionSuccessful, "an error verdict: the gate could not decide")
	assert.Equal(t, 3, inv.ExitCode)

	// A re-check that does not hold exits 1 whatever its verdict, as geas gate does.
	block := recordedResults(t)[3]
	block.Recheck = true
	out.Reset()
	require.NoError(t, writeSARIF(&out, []*tiers.Result{block}))
	inv = decodeSARIF(t, out.Bytes()).Runs[0].Invocations[0]
	assert.Equal(t, 1, inv.ExitCode)
	assert.True(t, inv.ExecutionSuccessful)
}

// TestSARIFFingerprintsAreStableAcrossRuns: a finding keeps its fingerprint when the run id, the
// times and the evidence's numbers change, and two findings never share one.
func TestSARIFFingerprintsAreStableAcrossRuns(t *testing.T) {
	fingerprints := func(results []*tiers.Result) []string {
		var out bytes.Buffer
		require.NoError(t, writeSARIF(&out, results))
		var fps []string
		for _, r := range decodeSARIF(t, out.Bytes()).Runs[0].Results {
			fps = append(fps, r.PartialFingerprints[sarifFingerprint])
		}
		return fps
	}
	first := fingerprints(recordedResults(t))
	later := recordedResults(t)
	for _, res := range later {
		res.RunID += "0"
		res.StartedAt, res.DurationMS = "2026-12-01T00:00:00Z", 99
		for i := range res.Checks {
			res.Checks[i].Evidence += " (in 12ms)"
		}
	}
	assert.Equal(t, first, fingerprints(later))
	seen := map[string]bool{}
	for _, fp := range first {
		assert.False(t, seen[fp], "fingerprint %s is shared", fp)
		seen[fp] = true
	}
}

// TestSARIFVerifyNamesTamperingAndRevocation: a tampered task's problems are history_tampered
// errors at its gate history; a revoked task's fresh checks are results marked revoked; the exit
// code is verify's.
func TestSARIFVerifyNamesTamperingAndRevocation(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, For(SARIF).Verify(&out, recordedVerify(t)))
	d := decodeSARIF(t, out.Bytes())
	var tampered, revoked int
	for _, r := range d.Runs[0].Results {
		switch r.Properties["verify_status"] {
		case string(gate.VerifyTampered):
			tampered++
			assert.Equal(t, "history_tampered", r.RuleID)
			assert.Equal(t, ".geas/missions/m1/tasks/t3/gate-history.jsonl", r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
		case string(gate.VerifyRevoked):
			revoked++
			assert.Equal(t, "t1", r.Properties["task_id"])
		}
	}
	assert.Equal(t, 2, tampered)
	assert.Positive(t, revoked)
	inv := d.Runs[0].Invocations[0]
	assert.Equal(t, 1, inv.ExitCode)
	require.Len(t, inv.Notifications, 1)
	assert.Contains(t, inv.Notifications[0].Message.Text, "skipped t9")
}

// TestCauseDescriptionsMatchTheDocs: each cause code's description is the meaning the docs'
// table gives it (without Markdown), so the SARIF rules and the docs say the same thing.
func TestCauseDescriptionsMatchTheDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "verdicts-and-causes.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\|(?: [^|]* \\|)? (.*) \\|$")
	link := regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
	docs := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			text := link.ReplaceAllString(m[2], "$1")
			text = regexp.MustCompile(` \([a-z]+\.md\)`).ReplaceAllString(text, "")
			docs[m[1]] = strings.NewReplacer("`", "", `\|`, "|").Replace(text)
		}
	}
	for _, c := range vocab.Causes() {
		assert.Equal(t, docs[string(c)], c.Description(), "%s: docs/verdicts-and-causes.md and vocab differ", c)
	}
}
