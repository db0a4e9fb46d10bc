package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/tiers"
)

// JUnit XML as CI systems read it (the Jenkins/Surefire dialect): one <testsuite> per tier of each
// result, one <testcase> per check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// writeJUnit writes results as one JUnit XML document: a <testsuite> per tier of each result,
// named task/tier_N, with a <testcase> per check. A fail or block check is a <failure> (its type
// is the status), an error check an <error>, a skipped check <skipped/>; a warning passes and
// carries its evidence in <system-out>, as does a passing eval command (its exit, time and test
// counts). An eval command's <system-out> also holds the tail of its output (the output_tail the
// result records), so a CI test view shows what the command printed, pass or fail. A tier that
// did not run is an empty suite whose properties say why; with dropEmpty (geas gate --all, where
// they would be most of the suites) it is left out. Characters XML cannot carry (control bytes
// from command output) become U+FFFD.
func writeJUnit(w io.Writer, results []*tiers.Result, dropEmpty bool) error {
	doc := junitSuites{Name: "geas gate"}
	var ms int64
	for _, res := range results {
		ms += res.DurationMS
		runs := checkRuns(res)
		for tier := 0; tier <= 2; tier++ {
			s := junitTierSuite(res, tier, runs)
			if dropEmpty && len(s.Cases) == 0 {
				continue
			}
			doc.Tests += s.Tests
			doc.Failures += s.Failures
			doc.Errors += s.Errors
			doc.Skipped += s.Skipped
			doc.Suites = append(doc.Suites, s)
		}
	}
	doc.Time = junitSeconds(ms)
	return writeJUnitDoc(w, doc)
}

// writeJUnitDoc writes doc as an indented XML document.
func writeJUnitDoc(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitTierSuite is the suite of one tier of res; runs is checkRuns(res).
func junitTierSuite(res *tiers.Result, tier int, runs map[int]int) junitSuite {
	key := fmt.Sprintf("tier_%d", tier)
	name := res.TaskID + "/" + key
	tr := res.TierResults[key]
	var ms int64
	s := junitSuite{
		Name:      name,
		Timestamp: res.StartedAt,
		Properties: []junitProperty{
			{"mission_id", res.MissionID},
			{"run_id", res.RunID},
			{"gate_profile", string(res.GateProfile)},
			{"verdict", string(res.Verdict)},
			{"tier_status", string(tr.Status)},
			{"tier_details", tr.Details},
		},
	}
	for i, c := range res.Checks {
		if c.Tier != tier {
			continue
		}
		var took int64
		run, ran := runs[i]
		if ran {
			took = res.EvalRuns[run].DurationMS
		}
		tc := junitCase{Name: c.Name, Classname: name, Time: junitSeconds(took)}
		ms += took
		switch {
		case c.Advisory && c.Status != tiers.StatusPass && c.Status != tiers.StatusSkipped:
			// --keep-going: a stage the run did not reach; listed, never counted (SPEC §5).
			tc.SystemOut = "advisory (not counted): " + string(c.Status) + ": " + checkSentence(c)
			s.Cases = append(s.Cases, tc)
			continue
		}
		switch c.Status {
		case tiers.StatusPass:
			if c.Tier == 1 && strings.HasPrefix(c.Name, "eval_command_") {
				// Its exit and time, and the counts of the tests its declared results list.
				tc.SystemOut = c.Evidence
			}
		case tiers.StatusWarn:
			tc.SystemOut = "warning: " + checkSentence(c)
		case tiers.StatusSkipped:
			tc.Skipped = &junitSkipped{Message: c.Evidence}
			s.Skipped++
		case tiers.StatusFail, tiers.StatusBlock:
			tc.Failure = &junitProblem{Message: junitMessage(c), Type: string(c.Status), Body: junitBody(c)}
			s.Failures++
		default: // error, or a status the gate does not know: fail closed
			tc.Error = &junitProblem{Message: junitMessage(c), Type: string(tiers.StatusError), Body: junitBody(c)}
			s.Errors++
		}
		if ran && c.Status != tiers.StatusSkipped {
			tc.SystemOut = junitOutput(tc.SystemOut, res.EvalRuns[run])
		}
		s.Cases = append(s.Cases, tc)
		s.Tests++
	}
	s.Time = junitSeconds(ms)
	return s
}

// junitOutput appends an eval run's output tail to a testcase's <system-out>, under a line that
// says how much of the output it is.
func junitOutput(out string, run tiers.EvalRun) string {
	tail := strings.TrimRight(run.OutputTail, "\n")
	if tail == "" {
		return out
	}
	head := "output:"
	if run.OutputBytes > int64(len(run.OutputTail)) {
		head = fmt.Sprintf("output (the last %d of %d bytes):", len(run.OutputTail), run.OutputBytes)
	}
	if out != "" {
		out += "\n\n"
	}
	return out + head + "\n" + tail
}

// checkRuns maps the index of each check that ran a process to the index of its run in
// res.EvalRuns: eval_command_N is the Nth eval run when that run is its command (tier 1 appends
// one run per command it starts, in order, and the detectors' runs after them), and a criterion
// whose script detector ran is the run labelled with its criterion. The other checks are not
// timed one by one (they read files and git objects, together a small part of the run): their
// time is 0, and the run's whole duration is on <testsuites>.
func checkRuns(res *tiers.Result) map[int]int {
	runs := map[int]int{}
	used := map[int]bool{} // the runs of eval commands, which no criterion can claim
	for i, c := range res.Checks {
		if c.Tier != 1 || c.Status == tiers.StatusSkipped || !strings.HasPrefix(c.Name, "eval_command_") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(c.Name, "eval_command_"))
		if err != nil || n < 1 || n > len(res.EvalRuns) {
			continue
		}
		if run := res.EvalRuns[n-1]; strings.Contains(c.Text, "`"+run.Command+"`") {
			runs[i], used[n-1] = n-1, true
		}
	}
	for i, c := range res.Checks {
		if c.Tier != 2 || c.Status == tiers.StatusSkipped || !strings.HasPrefix(c.Name, "criterion:") {
			continue
		}
		label := strings.TrimPrefix(c.Name, "criterion:") + ": "
		for j, run := range res.EvalRuns {
			if !used[j] && strings.HasPrefix(run.Command, label) {
				runs[i], used[j] = j, true
				break
			}
		}
	}
	return runs
}

// junitMessage is the one-line summary CI systems show next to a failed test.
func junitMessage(c tiers.Check) string {
	msg := c.Text
	if c.Code != "" {
		msg = string(c.Code) + ": " + msg
	}
	return msg
}

// junitBody is the evidence, then the places the check points at.
func junitBody(c tiers.Check) string {
	var b strings.Builder
	b.WriteString(c.Evidence)
	for _, l := range c.Locations {
		b.WriteString("\nat " + l.String())
	}
	return b.String()
}

// checkSentence is a check's text and evidence on one line.
func checkSentence(c tiers.Check) string {
	switch {
	case c.Evidence == "":
		return c.Text
	case c.Text == "":
		return c.Evidence
	}
	return c.Text + ": " + c.Evidence
}

func junitSeconds(ms int64) string {
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// junitFormat writes JUnit XML.
type junitFormat struct{}

// Gate writes the results as one JUnit document.
func (junitFormat) Gate(w io.Writer, results []*tiers.Result) error {
	return writeJUnit(w, results, false)
}

// All writes the results of the tasks that have one as one JUnit document, without the suites
// of tiers that did not run; stdout holds nothing else, so the tasks that were not gated and the
// overall line go to diag.
func (junitFormat) All(w, diag io.Writer, a *All) error {
	if err := writeJUnit(w, a.Results(), true); err != nil {
		return err
	}
	for _, t := range a.Tasks {
		if t.Result == nil {
			fmt.Fprintf(diag, "%s %s: %s\n", t.TaskID, t.Outcome, t.Reason)
		}
	}
	fmt.Fprintln(diag, overallLine(a.Overall))
	return nil
}

// Verify writes what geas gate verify found as one JUnit document (verifyJUnit).
func (junitFormat) Verify(w io.Writer, v *Verify) error { return writeJUnitDoc(w, verifyJUnit(v)) }

// verifyJUnit is a <testsuite> per task named task/verify with two testcases: history (the
// records verify: a <failure type="tampered"> listing the problems otherwise) and pass_holds (a
// fresh dry-run evaluation still passes: a <failure type="revoked"> with its causes otherwise,
// timed by that evaluation). A tampered task's pass_holds is skipped (its records say nothing
// that can be trusted); a skipped task is a suite with one skipped testcase.
func verifyJUnit(v *Verify) junitSuites {
	doc := junitSuites{Name: "geas gate verify"}
	var ms int64
	add := func(s junitSuite) {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if v.Verification == nil {
		doc.Time = junitSeconds(0)
		return doc
	}
	for _, t := range v.Tasks {
		if t.VerifyReport == nil {
			continue
		}
		name := t.TaskID + "/verify"
		s := junitSuite{Name: name, Properties: []junitProperty{{"mission_id", t.MissionID}, {"state", t.State}, {"status", string(t.Status)}}}
		history := junitCase{Name: "history", Classname: name, Time: junitSeconds(0)}
		holds := junitCase{Name: "pass_holds", Classname: name, Time: junitSeconds(0)}
		var took int64
		if t.Result != nil {
			took = t.Result.DurationMS
			s.Timestamp = t.Result.StartedAt
			holds.Time = junitSeconds(took)
			ms += took
			s.Properties = append(s.Properties, junitProperty{"run_id", t.Result.RunID})
		}
		switch t.Status {
		case gate.VerifyTampered:
			history.Failure = &junitProblem{Message: "history_tampered: the gate history and gate_result verify", Type: "tampered", Body: strings.Join(t.Problems, "\n")}
			holds.Skipped = &junitSkipped{Message: "not re-evaluated: the records do not verify"}
			s.Failures++
			s.Skipped++
		case gate.VerifyRevoked:
			holds.Failure = &junitProblem{Message: "the pass no longer holds: " + strings.Join(causeCodes(t.Causes), ", "), Type: "revoked", Body: verifyCausesBody(t.Causes)}
			s.Failures++
		case gate.VerifyIntact:
		default: // a status verify does not know: fail closed
			holds.Failure = &junitProblem{Message: "verify status " + string(t.Status), Type: string(t.Status)}
			s.Failures++
		}
		if a := t.Applied; a != nil && a.Note != "" {
			holds.SystemOut = "applied: " + a.Note
		}
		s.Cases = []junitCase{history, holds}
		s.Tests = 2
		s.Time = junitSeconds(took)
		add(s)
	}
	for _, sk := range v.Skipped {
		name := sk.TaskID + "/verify"
		add(junitSuite{Name: name, Tests: 1, Skipped: 1, Time: junitSeconds(0), Properties: []junitProperty{{"mission_id", v.ID}, {"status", "skipped"}},
			Cases: []junitCase{{Name: "pass_holds", Classname: name, Time: junitSeconds(0), Skipped: &junitSkipped{Message: sk.Reason}}}})
	}
	doc.Time = junitSeconds(ms)
	return doc
}

// verifyCausesBody is one cause a line: code (check): detail.
func verifyCausesBody(causes []tiers.Cause) string {
	lines := make([]string, len(causes))
	for i, c := range causes {
		lines[i] = fmt.Sprintf("%s (%s): %s", c.Code, c.Check, c.Detail)
	}
	return strings.Join(lines, "\n")
}
