package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// SARIF 2.1.0 (OASIS), the subset the gate fills: one run whose tool (with its version) has one
// rule per cause code of vocab's registry, each with a name, descriptions and help, and one result
// per check that did not pass (and per place it points at), each with a region. The schema is
// report/testdata/sarif-schema-2.1.0.json; a test validates every document against it, and another
// holds it to the rules GitHub's code scanning requires (sarif_github_test.go).
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	ShortDescription sarifMessage      `json:"shortDescription"`
	FullDescription  sarifMessage      `json:"fullDescription"`
	Help             sarifMultiformat  `json:"help"`
	HelpURI          string            `json:"helpUri"`
	Default          sarifRuleDefaults `json:"defaultConfiguration"`
}

type sarifRuleDefaults struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifMultiformat struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool           `json:"executionSuccessful"`
	ExitCode            int            `json:"exitCode"`
	Notifications       []sarifNotice  `json:"toolExecutionNotifications,omitempty"`
	Properties          map[string]any `json:"properties,omitempty"`
}

type sarifNotice struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

const (
	sarifSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifHelpURI   = "https://github.com/geas-dev/geas/blob/main/docs/verdicts-and-causes.md#cause-codes"
	// sarifUnclassified is the rule of a check that did not pass and names no cause code (a
	// status the gate does not know): it is reported, never dropped.
	sarifUnclassified = "unclassified"
	// sarifFingerprint names the partial fingerprint: the mission, task, check, cause code and
	// place, none of which changes from one run to the next while the finding stays.
	sarifFingerprint = "geasFinding/v1"
	// sarifMaxResults is the most results a run lists: GitHub code scanning's default display
	// limit per run. The rest are counted in a notification (the JSON report has every check).
	sarifMaxResults = 1000
)

// sarifDoc builds the document's results and its rules, which are the registry's cause codes in
// its order (so a rule's index does not depend on the findings) plus unclassified when used.
type sarifDoc struct {
	rules   []sarifRule
	index   map[string]int
	results []sarifResult
}

func newSARIFDoc() *sarifDoc {
	d := &sarifDoc{index: map[string]int{}}
	for _, c := range vocab.Causes() {
		desc := c.Description()
		if desc == "" {
			desc = string(c)
		}
		d.addRule(string(c), desc)
	}
	return d
}

// addRule adds the rule of a cause code: its friendly name (the code in PascalCase), the
// description as short and full description, and help that says what the code means and where
// the causes and their next steps are documented.
func (d *sarifDoc) addRule(id, desc string) {
	d.index[id] = len(d.rules)
	full := sentence(desc)
	d.rules = append(d.rules, sarifRule{
		ID: id, Name: pascalName(id), ShortDescription: sarifMessage{Text: desc}, FullDescription: sarifMessage{Text: full},
		Help: sarifMultiformat{
			Text: fmt.Sprintf("geas gate cause code %s: %s The run's next_action says what to do; every cause code and its meaning: %s", id, full, sarifHelpURI),
			Markdown: fmt.Sprintf("**geas gate cause code `%s`**: %s\n\nThe run's `next_action` says what to do; every cause code and its meaning: [verdicts and causes](%s).",
				id, mdText(full), sarifHelpURI),
		},
		HelpURI: sarifHelpURI,
		Default: sarifRuleDefaults{Level: "error"},
	})
}

// pascalName is a rule id as a Pascal identifier, the form SARIF viewers expect of a rule's
// name: scope_violation is ScopeViolation.
func pascalName(id string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(id, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// sentence ends s with a full stop unless it ends with one already.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}

func (d *sarifDoc) ruleIndex(id string) int {
	if _, ok := d.index[id]; !ok {
		d.addRule(id, "a check that did not pass and names no cause code the gate registers")
	}
	return d.index[id]
}

// addChecks adds a result for every check of res that did not pass: level error for fail,
// block, error and any status the gate does not know (fail closed), warning for a warning, note
// for an advisory finding of --keep-going (never counted). A check that points at files gets one
// result per place; one that does not points at the task's contract, the rules it was held to.
func (d *sarifDoc) addChecks(res *tiers.Result, extra map[string]any) {
	for _, c := range res.Checks {
		level := "error"
		switch {
		case c.Status == tiers.StatusPass || c.Status == tiers.StatusSkipped:
			continue
		case c.Advisory:
			level = "note"
		case c.Status == tiers.StatusWarn:
			level = "warning"
		}
		rule := string(c.Code)
		if rule == "" {
			rule = sarifUnclassified
		}
		where := c.Locations
		if len(where) == 0 {
			where = []tiers.Location{{Path: contractPath(res.MissionID, res.TaskID)}}
		}
		props := map[string]any{"mission_id": res.MissionID, "task_id": res.TaskID, "run_id": res.RunID,
			"check": c.Name, "tier": c.Tier, "status": string(c.Status), "verdict": string(res.Verdict)}
		if c.Advisory {
			props["advisory"] = true
		}
		for k, v := range extra {
			props[k] = v
		}
		for _, l := range where {
			l.Path = repoPath(res.ProjectPath, l.Path)
			d.add(rule, level, res.TaskID+"/"+c.Name+": "+checkSentence(c), l, props, res.MissionID, res.TaskID, c.Name)
		}
	}
}

func (d *sarifDoc) add(rule, level, msg string, l tiers.Location, props map[string]any, key ...string) {
	// Code scanning places a result by its region's startLine and requires one: a place without
	// a line (a file out of scope, the contract) is the file as a whole, shown at its first line.
	line := 1
	if l.Line > 0 {
		line = l.Line
	}
	loc := sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: sarifArtifact{URI: sarifURI(l.Path), URIBaseID: "%SRCROOT%"},
		Region:           sarifRegion{StartLine: line},
	}}
	sum := sha256.Sum256([]byte(strings.Join(append(key, rule, l.String()), "\x00")))
	d.results = append(d.results, sarifResult{
		RuleID: rule, RuleIndex: d.ruleIndex(rule), Level: level, Message: sarifMessage{Text: msg},
		Locations:           []sarifLocation{loc},
		PartialFingerprints: map[string]string{sarifFingerprint: hex.EncodeToString(sum[:])},
		Properties:          props,
	})
}

// write writes the document with one run and the given invocation. Past sarifMaxResults the
// results are cut, and a notification says how many were left out.
func (d *sarifDoc) write(w io.Writer, inv sarifInvocation) error {
	results := d.results
	if results == nil {
		results = []sarifResult{}
	}
	if n := len(results); n > sarifMaxResults {
		results = results[:sarifMaxResults]
		inv.Notifications = append(inv.Notifications, sarifNotice{Level: "warning", Message: sarifMessage{
			Text: fmt.Sprintf("%d results, %d listed (the most code scanning shows of a run); the JSON report has every check", n, sarifMaxResults)}})
	}
	doc := sarifLog{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []sarifRun{{
		Tool: sarifTool{Driver: sarifDriver{Name: "geas gate", Version: toolVersion(), InformationURI: "https://github.com/geas-dev/geas",
			Rules: d.rules}},
		Invocations: []sarifInvocation{inv},
		Results:     results,
	}}}
	if err := writeJSON(w, doc); err != nil {
		return fmt.Errorf("write sarif: %w", err)
	}
	return nil
}

// sarifURI is a project-relative path as a relative URI reference: each segment escaped (a
// space, %, # or ? in a name), and a first segment with a colon prefixed with ./ so it cannot be
// read as a scheme.
func sarifURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := strings.Join(segs, "/")
	if strings.Contains(segs[0], ":") {
		u = "./" + u
	}
	return u
}

// repoPath is a project-relative path p relative to the repository's top, for a project whose
// root is the subdirectory project of the repository ("" at the top): code scanning and GitHub's
// annotations place a file by its path in the repository. A path that leads out of the project
// root ("../other/b.txt") lands on the repository's file.
func repoPath(project, p string) string {
	if project == "" {
		return p
	}
	return path.Join(project, p)
}

// contractPath is the task's contract, relative to the project root.
func contractPath(mission, task string) string {
	return ".geas/" + project.TaskDir(mission, task) + "/" + record.ContractFile
}

// gateInvocation says whether the gate could decide (no result is an error) and its exit code
// (geas gate's: a re-check that does not hold exits 1, whatever its verdict).
func gateInvocation(results []*tiers.Result) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: true}
	for _, res := range results {
		code := gate.ExitCode(res)
		if code > inv.ExitCode {
			inv.ExitCode = code
		}
		if res.Verdict == vocab.VerdictError {
			inv.ExecutionSuccessful = false
		}
	}
	return inv
}

func writeSARIF(w io.Writer, results []*tiers.Result) error {
	d := newSARIFDoc()
	for _, res := range results {
		d.addChecks(res, nil)
	}
	return d.write(w, gateInvocation(results))
}

// sarifFormat writes SARIF 2.1.0 for code scanning (GitHub's upload-sarif, IDE viewers).
type sarifFormat struct{}

// Gate writes the results as one SARIF log.
func (sarifFormat) Gate(w io.Writer, results []*tiers.Result) error { return writeSARIF(w, results) }

// All writes the results of the tasks that have one; the tasks that were not gated and the
// overall outcome are notifications of the invocation, whose exit code is the mission's.
func (sarifFormat) All(w, _ io.Writer, a *All) error {
	d := newSARIFDoc()
	results := a.Results()
	for _, res := range results {
		d.addChecks(res, nil)
	}
	inv := gateInvocation(results)
	if a.Mission != nil {
		inv.ExitCode = a.Overall.ExitCode
		for _, t := range a.Tasks {
			if t.Result == nil {
				inv.Notifications = append(inv.Notifications, sarifNotice{Level: "warning", Message: sarifMessage{Text: fmt.Sprintf("%s %s: %s", t.TaskID, t.Outcome, t.Reason)}})
			}
		}
		level := "note"
		if !a.Overall.Success {
			level = "error"
		}
		inv.Notifications = append(inv.Notifications, sarifNotice{Level: level, Message: sarifMessage{Text: overallLine(a.Overall)}})
		inv.Properties = map[string]any{"mission_id": a.ID, "success": a.Overall.Success}
	}
	return d.write(w, inv)
}

// Verify writes what geas gate verify found: a history_tampered result (at the task's history)
// for each problem of a tampered task, and the checks of each fresh evaluation that did not pass,
// marked with the task's verify status. The exit code is 1 when anything is revoked or tampered.
func (sarifFormat) Verify(w io.Writer, v *Verify) error {
	d := newSARIFDoc()
	inv := sarifInvocation{ExecutionSuccessful: true, Properties: map[string]any{"mission_id": v.ID}}
	if v.Verification == nil {
		return d.write(w, inv)
	}
	for _, t := range v.Tasks {
		if t.VerifyReport == nil {
			continue
		}
		extra := map[string]any{"verify_status": string(t.Status)}
		for _, p := range t.Problems {
			props := map[string]any{"mission_id": t.MissionID, "task_id": t.TaskID, "verify_status": string(t.Status), "state": t.State}
			hist := ".geas/" + project.TaskDir(t.MissionID, t.TaskID) + "/gate-history.jsonl"
			d.add(string(vocab.CauseHistoryTampered), "error", t.TaskID+": tampered: "+p, tiers.Location{Path: hist}, props, t.MissionID, t.TaskID, p)
		}
		if t.Result != nil && t.Status != gate.VerifyTampered {
			d.addChecks(t.Result, extra)
		}
	}
	if v.Revoked+v.Tampered > 0 {
		inv.ExitCode = 1
	}
	for _, s := range v.Skipped {
		inv.Notifications = append(inv.Notifications, sarifNotice{Level: "note", Message: sarifMessage{Text: fmt.Sprintf("skipped %s: %s", s.TaskID, s.Reason)}})
	}
	return d.write(w, inv)
}
