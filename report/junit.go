package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

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
// carries its evidence in <system-out>. A tier that did not run is an empty suite whose properties
// say why. Characters XML cannot carry (control bytes from command output) become U+FFFD.
func writeJUnit(w io.Writer, results []*tiers.Result) error {
	doc := junitSuites{Name: "geas gate"}
	var ms int64
	for _, res := range results {
		ms += res.DurationMS
		for tier := 0; tier <= 2; tier++ {
			s := junitTierSuite(res, tier)
			doc.Tests += s.Tests
			doc.Failures += s.Failures
			doc.Errors += s.Errors
			doc.Skipped += s.Skipped
			doc.Suites = append(doc.Suites, s)
		}
	}
	doc.Time = junitSeconds(ms)
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

func junitTierSuite(res *tiers.Result, tier int) junitSuite {
	key := fmt.Sprintf("tier_%d", tier)
	name := res.TaskID + "/" + key
	tr := res.TierResults[key]
	took := checkDurations(res)
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
		tc := junitCase{Name: c.Name, Classname: name, Time: junitSeconds(took[i])}
		ms += took[i]
		switch {
		case c.Advisory && c.Status != tiers.StatusPass && c.Status != tiers.StatusSkipped:
			// --keep-going: a stage the run did not reach; listed, never counted (SPEC §5).
			tc.SystemOut = "advisory (not counted): " + string(c.Status) + ": " + checkSentence(c)
			s.Cases = append(s.Cases, tc)
			continue
		}
		switch c.Status {
		case tiers.StatusPass:
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
		s.Cases = append(s.Cases, tc)
		s.Tests++
	}
	s.Time = junitSeconds(ms)
	return s
}

// checkDurations maps the index of each check that ran a process to the process's duration:
// eval_command_N is the Nth eval run when that run is its command (tier 1 appends one run per
// command it starts, in order, and the detectors' runs after them), and a criterion whose script
// detector ran is the run labelled with its criterion. The other checks are not timed one by one
// (they read files and git objects, together a small part of the run): their time is 0, and the
// run's whole duration is on <testsuites>.
func checkDurations(res *tiers.Result) map[int]int64 {
	took := map[int]int64{}
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
			took[i], used[n-1] = run.DurationMS, true
		}
	}
	for i, c := range res.Checks {
		if c.Tier != 2 || c.Status == tiers.StatusSkipped || !strings.HasPrefix(c.Name, "criterion:") {
			continue
		}
		label := strings.TrimPrefix(c.Name, "criterion:") + ": "
		for j, run := range res.EvalRuns {
			if !used[j] && strings.HasPrefix(run.Command, label) {
				took[i], used[j] = run.DurationMS, true
				break
			}
		}
	}
	return took
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

// junitFormat writes JUnit XML; geas gate verify has no junit document.
type junitFormat struct{}

// Gate writes the results as one JUnit document.
func (junitFormat) Gate(w io.Writer, results []*tiers.Result) error { return writeJUnit(w, results) }

// All writes the results of the tasks that have one as one JUnit document; stdout holds nothing
// else, so the tasks that were not gated and the overall line go to diag.
func (junitFormat) All(w, diag io.Writer, a *All) error {
	if err := writeJUnit(w, a.Results()); err != nil {
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

// Verify refuses: the junit format is only for the results of gate runs.
func (junitFormat) Verify(io.Writer, *Verify) error {
	return errNoVerify(JUnit)
}
