package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// githubRulesetErrors holds a SARIF document to what GitHub code scanning requires of an upload:
// the rules the SARIF SDK's validator runs as errors under its GitHub policy (GH1001, GH1003,
// GH1004, GH1005, GH1011, GH1013-GH1018, GH2012) and the tool's version, each problem named by
// the rule and the JSON path it is at. It reads the document as generic JSON, not through the
// writer's types, so a field the writer never fills is seen missing.
func githubRulesetErrors(doc []byte) []string {
	var errs []string
	bad := func(rule, at, format string, args ...any) {
		errs = append(errs, rule+" "+at+": "+fmt.Sprintf(format, args...))
	}
	var log map[string]any
	if err := json.Unmarshal(doc, &log); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	schema, _ := log["$schema"].(string)
	if !strings.HasSuffix(schema, "2.1.0") && !strings.HasSuffix(schema, "2.1.0.json") &&
		!strings.HasSuffix(schema, "2.1.0-rtm.6") && !strings.HasSuffix(schema, "2.1.0-rtm.6.json") {
		bad("GH1011", "$schema", "%q is not the final SARIF 2.1.0 schema", schema)
	}
	if log["version"] != "2.1.0" {
		bad("GH1013", "version", "%v, not 2.1.0", log["version"])
	}
	runs, ok := log["runs"].([]any)
	if !ok {
		bad("GH1013", "runs", "no runs array")
	}
	if len(runs) > 5 {
		bad("GH1004", "runs", "%d runs, over 5", len(runs))
	}
	text := func(v any, key string) string {
		m, _ := v.(map[string]any)
		sub, _ := m[key].(map[string]any)
		s, _ := sub["text"].(string)
		return strings.TrimSpace(s)
	}
	for i, r := range runs {
		run, _ := r.(map[string]any)
		at := fmt.Sprintf("runs[%d]", i)
		tool, ok := run["tool"].(map[string]any)
		if !ok {
			bad("GH1014", at, "no tool")
		}
		driver, ok := tool["driver"].(map[string]any)
		if !ok {
			bad("GH1018", at+".tool", "no driver")
		}
		if name, _ := driver["name"].(string); strings.TrimSpace(name) == "" {
			bad("GH1018", at+".tool.driver", "no name")
		}
		if v, _ := driver["version"].(string); strings.TrimSpace(v) == "" {
			bad("version", at+".tool.driver", "no version")
		}
		rules, ok := driver["rules"].([]any)
		if !ok {
			bad("GH1018", at+".tool.driver", "no rules array")
		}
		if len(rules) > 1000 {
			bad("GH1004", at+".tool.driver.rules", "%d rules, over 1000", len(rules))
		}
		ids := map[string]int{}
		for j, x := range rules {
			rule, _ := x.(map[string]any)
			rat := fmt.Sprintf("%s.tool.driver.rules[%d]", at, j)
			id, _ := rule["id"].(string)
			if strings.TrimSpace(id) == "" {
				bad("GH2012", rat, "no id")
			}
			ids[id] = j
			if text(rule, "shortDescription") == "" {
				bad("GH2012", rat, "%s: no shortDescription", id)
			}
			if text(rule, "fullDescription") == "" {
				bad("GH2012", rat, "%s: no fullDescription", id)
			}
			if _, ok := rule["help"].(map[string]any); !ok {
				bad("GH2012", rat, "%s: no help", id)
			} else if text(rule, "help") == "" {
				bad("GH2012", rat, "%s: help has no text", id)
			}
		}
		results, ok := run["results"].([]any)
		if !ok {
			bad("GH1014", at, "no results array")
		}
		if len(results) > 1000 {
			bad("GH1004", at+".results", "%d results, over 1000", len(results))
		}
		for j, x := range results {
			res, _ := x.(map[string]any)
			rat := fmt.Sprintf("%s.results[%d]", at, j)
			id, _ := res["ruleId"].(string)
			if k, ok := ids[id]; !ok {
				bad("ruleId", rat, "ruleId %q names no rule", id)
			} else if idx, ok := res["ruleIndex"].(float64); ok && int(idx) != k {
				bad("ruleId", rat, "ruleIndex %v is not rule %s's (%d)", idx, id, k)
			}
			if text(res, "message") == "" && res["message"] != nil {
				bad("GH1015", rat+".message", "no text")
			} else if res["message"] == nil {
				bad("GH1015", rat, "no message")
			}
			if _, ok := res["partialFingerprints"].(map[string]any); !ok {
				bad("GH1015", rat, "no partialFingerprints")
			}
			locs, ok := res["locations"].([]any)
			if !ok || len(locs) == 0 {
				bad("GH1015", rat, "no locations")
			}
			if len(locs) > 10 {
				bad("GH1004", rat+".locations", "%d locations, over 10", len(locs))
			}
			for k, y := range locs {
				loc, _ := y.(map[string]any)
				lat := fmt.Sprintf("%s.locations[%d]", rat, k)
				phys, ok := loc["physicalLocation"].(map[string]any)
				if !ok {
					bad("GH1016", lat, "no physicalLocation")
					continue
				}
				art, ok := phys["artifactLocation"].(map[string]any)
				uri, _ := art["uri"].(string)
				if !ok || uri == "" {
					bad("GH1017", lat+".physicalLocation", "no artifactLocation.uri")
				} else if u, err := url.Parse(uri); err != nil {
					bad("GH1005", lat, "uri %q does not parse: %v", uri, err)
				} else if u.IsAbs() && u.Scheme != "file" {
					bad("GH1005", lat, "uri %q is not a file path", uri)
				}
				region, ok := phys["region"].(map[string]any)
				if !ok {
					bad("GH1003", lat+".physicalLocation", "no region")
				} else if line, _ := region["startLine"].(float64); line < 1 {
					bad("GH1003", lat+".physicalLocation.region", "no startLine")
				}
			}
		}
	}
	return errs
}

// sarifDocuments are the SARIF documents geas writes for the recorded results: geas gate, gate
// --all, gate verify, a run with nothing to report, and results at odd places (a space, a %, a
// colon in a path; a status nobody knows; an advisory finding).
func sarifDocuments(t *testing.T) map[string][]byte {
	t.Helper()
	r := For(SARIF)
	odd := &tiers.Result{MissionID: "m1", TaskID: "t9", Verdict: vocab.VerdictError, Checks: []tiers.Check{
		{Name: "strange", Tier: 2, Status: tiers.Status("maybe"), Blocking: true, Evidence: "status nobody knows"},
		{Name: "later", Tier: 2, Status: tiers.StatusFail, Advisory: true, Code: vocab.CauseRiskUnhandled, Evidence: "r1"},
		{Name: "sp", Tier: 2, Status: tiers.StatusFail, Code: vocab.CauseScopeViolation, Locations: []tiers.Location{{Path: "a b/c%d#e?.go"}, {Path: "x:y.go", Line: 7}}},
	}}
	bufs := map[string]*bytes.Buffer{"gate": {}, "all": {}, "verify": {}, "empty": {}, "odd": {}}
	require.NoError(t, r.Gate(bufs["gate"], recordedResults(t)))
	require.NoError(t, r.All(bufs["all"], nil, recordedAll(t)))
	require.NoError(t, r.Verify(bufs["verify"], recordedVerify(t)))
	require.NoError(t, r.Gate(bufs["empty"], nil))
	require.NoError(t, r.Gate(bufs["odd"], []*tiers.Result{odd}))
	docs := map[string][]byte{}
	for name, b := range bufs {
		docs[name] = b.Bytes()
	}
	return docs
}

// TestSARIFMeetsGitHubCodeScanningRules: every SARIF document geas writes passes the rules GitHub
// code scanning holds an upload to (no error under the SARIF validator's GitHub policy), and the
// checker is not one that cannot fail: each field those rules require, taken out of a document,
// is named.
func TestSARIFMeetsGitHubCodeScanningRules(t *testing.T) {
	docs := sarifDocuments(t)
	schema := sarifSchema(t)
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, githubRulesetErrors(doc))
			validateSARIF(t, schema, doc)
		})
	}

	// Each removal is caught, by the rule that requires the field.
	var gate map[string]any
	require.NoError(t, json.Unmarshal(docs["gate"], &gate))
	run := func(d map[string]any) map[string]any { return d["runs"].([]any)[0].(map[string]any) }
	driver := func(d map[string]any) map[string]any {
		return run(d)["tool"].(map[string]any)["driver"].(map[string]any)
	}
	rule0 := func(d map[string]any) map[string]any { return driver(d)["rules"].([]any)[0].(map[string]any) }
	phys0 := func(d map[string]any) map[string]any {
		res := run(d)["results"].([]any)[0].(map[string]any)
		return res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	}
	for _, tc := range []struct {
		name, rule string
		cut        func(d map[string]any)
	}{
		{"a rule without fullDescription", "GH2012", func(d map[string]any) { delete(rule0(d), "fullDescription") }},
		{"a rule without help", "GH2012", func(d map[string]any) { delete(rule0(d), "help") }},
		{"a tool without a version", "version", func(d map[string]any) { delete(driver(d), "version") }},
		{"a location without a region", "GH1003", func(d map[string]any) { delete(phys0(d), "region") }},
		{"an http location", "GH1005", func(d map[string]any) {
			phys0(d)["artifactLocation"].(map[string]any)["uri"] = "https://example.com/a.go"
		}},
		{"a result without a fingerprint", "GH1015", func(d map[string]any) {
			delete(run(d)["results"].([]any)[0].(map[string]any), "partialFingerprints")
		}},
		{"another schema", "GH1011", func(d map[string]any) { d["$schema"] = "https://example.com/sarif-2.0.0.json" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			require.NoError(t, json.Unmarshal(docs["gate"], &d))
			tc.cut(d)
			b, err := json.Marshal(d)
			require.NoError(t, err)
			errs := githubRulesetErrors(b)
			require.NotEmpty(t, errs)
			assert.True(t, strings.HasPrefix(errs[0], tc.rule+" "), "%v", errs)
		})
	}
}

// TestSARIFRulesDescribeEveryCause: each rule has a Pascal friendly name, a full description that
// is the cause's description as a sentence, and help (text and Markdown) that names the code and
// points at the docs; the tool names its version.
func TestSARIFRulesDescribeEveryCause(t *testing.T) {
	var d struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Version string      `json:"version"`
					Rules   []sarifRule `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(sarifDocuments(t)["gate"], &d))
	driver := d.Runs[0].Tool.Driver
	assert.Equal(t, toolVersion(), driver.Version)
	assert.NotEmpty(t, driver.Version)
	require.Len(t, driver.Rules, len(vocab.Causes()))
	for i, c := range vocab.Causes() {
		r := driver.Rules[i]
		assert.Regexp(t, `^([A-Z][a-z0-9]+)+$`, r.Name, "%s", c)
		assert.Equal(t, strings.TrimSuffix(r.FullDescription.Text, "."), strings.TrimSuffix(c.Description(), "."), "%s", c)
		assert.True(t, strings.HasSuffix(r.FullDescription.Text, "."), "%s: a sentence", c)
		for _, help := range []string{r.Help.Text, r.Help.Markdown} {
			assert.Contains(t, help, string(c))
			assert.Contains(t, help, sarifHelpURI)
		}
	}
	assert.Equal(t, "ScopeViolation", pascalName("scope_violation"))
	assert.Equal(t, "JudgeNotIndependent", pascalName("judge_not_independent"))
}

// TestSARIFListsAtMostWhatCodeScanningShows: a run with more results than code scanning shows
// lists the first sarifMaxResults and says in a notification how many there were; one at the
// limit lists them all and says nothing.
func TestSARIFListsAtMostWhatCodeScanningShows(t *testing.T) {
	many := func(n int) []byte {
		locs := make([]tiers.Location, n)
		for i := range locs {
			locs[i] = tiers.Location{Path: fmt.Sprintf("f%05d.go", i)}
		}
		res := &tiers.Result{MissionID: "m1", TaskID: "t1", Verdict: vocab.VerdictFail, Checks: []tiers.Check{
			{Name: "scope", Tier: 2, Status: tiers.StatusFail, Code: vocab.CauseScopeViolation, Locations: locs}}}
		var out bytes.Buffer
		require.NoError(t, writeSARIF(&out, []*tiers.Result{res}))
		return out.Bytes()
	}
	over := decodeSARIF(t, many(sarifMaxResults+5))
	assert.Len(t, over.Runs[0].Results, sarifMaxResults)
	notes := over.Runs[0].Invocations[0].Notifications
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].Message.Text, fmt.Sprintf("%d results, %d listed", sarifMaxResults+5, sarifMaxResults))
	assert.Empty(t, githubRulesetErrors(many(sarifMaxResults+5)))

	at := decodeSARIF(t, many(sarifMaxResults))
	assert.Len(t, at.Runs[0].Results, sarifMaxResults)
	assert.Empty(t, at.Runs[0].Invocations[0].Notifications)
}
