package tiers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/proc"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/vocab"
)

// detect runs a criterion's detector (SPEC §5.5). Every detector fails when its input is missing;
// a detector that cannot run is an error, never a pass. It returns the criterion's check, any
// non-blocking warnings, and the run of a script detector. bound is the run's binding of the
// evidence to the criteria (nil: the judge detector binds on its own).
func detect(ctx context.Context, pass *Pass, bound *criteriaBinding, idx int, cr contract.Criterion) (Check, []Check, *EvalRun) {
	d := cr.Check
	dc := detection{
		name: "criterion:" + criterionLabel(idx, cr),
		text: fmt.Sprintf("%s %q: %s detector", criterionLabel(idx, cr), cr.Criterion, d.Type),
	}
	switch d.Type {
	case contract.DetectScript:
		c, run := detectScript(ctx, pass, idx, cr, dc)
		return c, nil, &run
	case contract.DetectFileExists:
		return detectFileExists(pass, d, dc), nil, nil
	case contract.DetectRegexMatch:
		return detectRegexMatch(pass, d, dc), nil, nil
	case contract.DetectThreshold:
		return detectThreshold(pass, d, dc), nil, nil
	case contract.DetectJudge:
		c, warns := judge(pass, bound, idx, cr, dc.name, dc.text)
		return c, warns, nil
	}
	return dc.broken(fmt.Sprintf("unknown detector type %q", d.Type)), nil, nil
}

// detection is the check a criterion's detector makes: its name and text, and the three outcomes.
type detection struct{ name, text string }

func (dc detection) pass(ev string) Check { return passCheck(2, dc.name, dc.text, ev) }
func (dc detection) fail(ev string) Check {
	return failCheck(2, dc.name, dc.text, ev, StatusFail, vocab.CauseCriterionFailed)
}
func (dc detection) broken(ev string) Check {
	return failCheck(2, dc.name, dc.text, ev, StatusError, vocab.CauseDetectorError)
}

// detectScript runs the criterion's command (in the working tree, with the policy's eval timeout
// unless the detector sets its own) and passes when it exits as expected. It returns the run too.
func detectScript(ctx context.Context, pass *Pass, idx int, cr contract.Criterion, dc detection) (Check, EvalRun) {
	d := cr.Check
	timeout := pass.in.Policy.EvalTimeout
	if d.Timeout != "" {
		if t, err := time.ParseDuration(d.Timeout); err == nil && t > 0 {
			timeout = t
		}
	}
	label := scriptLabel(d)
	spec := proc.Spec{
		Label: fmt.Sprintf("%s: %s", criterionLabel(idx, cr), label), Argv: append([]string{d.Command}, d.Args...),
		Dir: pass.workDir, Timeout: timeout, ExpectExit: d.ExpectExit, TailBytes: pass.in.Policy.OutputTailBytes,
		RunAs: pass.exec.runAs,
	}
	if pass.opts.LogRoot != nil {
		base := "criterion-" + proc.LogFileSafe(criterionLabel(idx, cr)) + ".log"
		spec.LogRoot, spec.LogFile = pass.opts.LogRoot, base
		spec.LogName = pass.opts.LogDirName + "/" + base
	}
	run := runProcess(ctx, pass.env.Start, spec, pass.opts.Progress, nil)
	switch run.Status {
	case StatusPass:
		return dc.pass(fmt.Sprintf("`%s` exited %d as expected in %s", label, d.ExpectExit, tier1Duration(run.DurationMS))), run
	case StatusError:
		return dc.broken(fmt.Sprintf("`%s` could not run: %s", label, run.Error)), run
	}
	if run.TimedOut {
		return dc.fail(fmt.Sprintf("`%s` %s", label, run.Error)), run
	}
	said := "last output: " + tier1LastOutput(run.OutputTail)
	if q := run.Failures.String(); q != "" {
		said = "failure lines: " + q
	}
	return dc.fail(fmt.Sprintf("`%s` exited %s (want %d); %s", label, exitText(run.ExitCode, run.Error), d.ExpectExit, said)), run
}

// scriptLabel is a script detector's command line as the checks show it.
func scriptLabel(d *contract.Detector) string {
	return strings.Join(append([]string{d.Command}, d.Args...), " ")
}

// detectFileExists passes when the path exists in the working tree (and, with non_empty, is a
// non-empty file or directory).
func detectFileExists(pass *Pass, d *contract.Detector, dc detection) Check {
	fi, err := pass.workRoot.Stat(d.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dc.fail(fmt.Sprintf("%s is absent", d.Path))
	case err != nil:
		return dc.broken(fmt.Sprintf("cannot check %s: %v", d.Path, err))
	case d.NonEmpty && fi.Mode().IsRegular() && fi.Size() == 0:
		return dc.fail(fmt.Sprintf("%s exists but is empty (non_empty required)", d.Path))
	case d.NonEmpty && fi.IsDir():
		empty, err := emptyDir(pass.workRoot, d.Path)
		switch {
		case err != nil:
			return dc.broken(fmt.Sprintf("cannot list %s: %v", d.Path, err))
		case empty:
			return dc.fail(fmt.Sprintf("%s is an empty directory (non_empty required)", d.Path))
		}
		return dc.pass(fmt.Sprintf("%s exists (a non-empty directory)", d.Path))
	case fi.IsDir():
		return dc.pass(fmt.Sprintf("%s exists (a directory)", d.Path))
	}
	return dc.pass(fmt.Sprintf("%s exists (%d bytes)", d.Path, fi.Size()))
}

// detectRegexMatch passes when the pattern matches the artifact in the working tree.
func detectRegexMatch(pass *Pass, d *contract.Detector, dc detection) Check {
	re, err := regexp.Compile(d.Pattern)
	if err != nil {
		return dc.broken(fmt.Sprintf("bad regex %q: %v", d.Pattern, err))
	}
	data, err := fsutil.ReadLimited(pass.workRoot, d.Artifact, pass.in.Policy.MaxEvidenceBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dc.fail(fmt.Sprintf("artifact %s is absent", d.Artifact))
	case err != nil:
		return dc.broken(fmt.Sprintf("cannot read artifact %s: %v", d.Artifact, err))
	}
	loc := re.FindIndex(data)
	if loc == nil {
		return dc.fail(fmt.Sprintf("pattern /%s/ does not match %s (%d bytes)", d.Pattern, d.Artifact, len(data)))
	}
	line := bytes.Count(data[:loc[0]], []byte("\n")) + 1
	return dc.pass(fmt.Sprintf("pattern /%s/ matches %s at line %d", d.Pattern, d.Artifact, line))
}

// detectThreshold passes when every reported value of the metric satisfies the threshold.
func detectThreshold(pass *Pass, d *contract.Detector, dc detection) Check {
	reports := metricReports(pass, d.Metric)
	if len(reports) == 0 {
		return dc.fail(fmt.Sprintf("metric %s was not reported (not captured by an eval command, not in independent evidence)", d.Metric))
	}
	// Independent evidence that reports the metric more than once, with different values,
	// counts only if every value satisfies the threshold (SPEC §5.5): no first file wins.
	var bad []string
	for _, rep := range reports {
		ok, err := compare(rep.value, d.Op, d.Value)
		if err != nil {
			return dc.broken(err.Error())
		}
		if !ok {
			bad = append(bad, fmtNum(rep.value)+" ("+rep.source+")")
		}
	}
	ev := fmt.Sprintf("%s = %s (%s) %s %s", d.Metric, fmtNum(reports[0].value), reports[0].source, opSymbol(d.Op), fmtNum(d.Value))
	if len(reports) > 1 {
		all := make([]string, len(reports))
		for i, rep := range reports {
			all[i] = fmtNum(rep.value) + " (" + rep.source + ")"
		}
		ev = fmt.Sprintf("%s reported %d times with different values: %s; each must satisfy %s %s", d.Metric, len(reports), limitedList(all, 10), opSymbol(d.Op), fmtNum(d.Value))
		if len(bad) > 0 {
			return dc.fail(ev + "; does not hold for " + limitedList(bad, 10))
		}
		return dc.pass(ev + "; holds for every value")
	}
	if len(bad) > 0 {
		return dc.fail(ev + " does not hold")
	}
	return dc.pass(ev + " holds")
}

// emptyDir reports whether the directory name (opened through root) has no entries.
func emptyDir(root *os.Root, name string) (bool, error) {
	f, err := fsutil.OpenDir(root, name) // a named pipe is refused, not waited on
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// metricReport is one reported value of a metric and where it came from.
type metricReport struct {
	value  float64
	source string
}

// metricReports finds a metric: what the gate measured in tier 1 if it did (one value), else every
// distinct value independent evidence reports, in file order. The implementer's metrics never count.
func metricReports(pass *Pass, name string) []metricReport {
	if v, ok := pass.metrics[name]; ok {
		// Every value the output printed must satisfy the threshold: the eval command's own code
		// (which the agents wrote) may print the metric's line after the tool does.
		if sp, ok := pass.metricSpread[name]; ok && sp[0] != sp[1] {
			return []metricReport{
				{sp[0], "the lowest value an eval command printed for it"},
				{sp[1], "the highest value an eval command printed for it"},
			}
		}
		return []metricReport{{v, "measured by an eval command"}}
	}
	var out []metricReport
	for _, e := range pass.independent {
		v, ok := e.Metrics[name]
		if !ok {
			continue
		}
		dup := false
		for i := range out {
			if out[i].value == v {
				out[i].source += ", " + e.Name
				dup = true
			}
		}
		if !dup {
			out = append(out, metricReport{v, "reported in " + e.Name})
		}
	}
	return out
}

// judge applies the judge detector: independent judgments for this criterion; any judgment whose
// provider equals the builder's is refused outright (one self-judgment poisons the check).
func judge(pass *Pass, binding *criteriaBinding, idx int, cr contract.Criterion, name, text string) (Check, []Check) {
	var warns []Check
	var refused, notes []string
	var scores []float64
	var passedAll = true
	pool := 0
	if binding == nil {
		b := bindCriteria(pass) // a detector run on its own; partA reports the ambiguity warnings
		binding = &b
	}
	var bound []boundJudgment
	if idx-1 < len(binding.judgments) {
		bound = binding.judgments[idx-1]
	}
	for _, bj := range bound {
		e, j := bj.e, bj.j
		if pass.builder[e] {
			notes = append(notes, e.Name+" (the builder's own judgment, not counted)")
			continue
		}
		provider := j.ProviderID
		if provider == "" {
			provider = e.ProviderID
		}
		ind := judgeIndependence(pass, provider, e.Name)
		if ind.refused {
			refused = append(refused, ind.detail)
			continue
		}
		if ind.warn != "" {
			warns = append(warns, warnCheck(2, name+":independence", "judge and builder ran on different providers", ind.warn, vocab.CauseProviderUnknown))
		}
		pool++
		if j.Score != nil {
			scores = append(scores, *j.Score)
		}
		if j.Passed == nil || !*j.Passed {
			passedAll = false
		}
	}
	if len(refused) > 0 {
		return failCheck(2, name, text, strings.Join(refused, "; "), StatusBlock, vocab.CauseJudgeNotIndependent), warns
	}
	suffix := ""
	if len(notes) > 0 {
		suffix = "; " + strings.Join(notes, ", ")
	}
	if pool == 0 {
		return failCheck(2, name, text, fmt.Sprintf("no independent judgment recorded for %s%s", criterionLabel(idx, cr), suffix), StatusFail, vocab.CauseCriterionFailed), warns
	}
	if ms := cr.Check.MinScore; ms != nil {
		if len(scores) == 0 {
			return failCheck(2, name, text, fmt.Sprintf("%s but none has a score (min_score %s)%s", txt.Counted(pool, "judgment", "judgments"), fmtNum(*ms), suffix), StatusFail, vocab.CauseCriterionFailed), warns
		}
		mean := 0.0
		for _, s := range scores {
			mean += s
		}
		mean /= float64(len(scores))
		ev := fmt.Sprintf("mean score %s of %s, min_score %s%s", fmtNum(mean), txt.Counted(len(scores), "judgment", "judgments"), fmtNum(*ms), suffix)
		if mean < *ms {
			return failCheck(2, name, text, ev, StatusFail, vocab.CauseCriterionFailed), warns
		}
		return passCheck(2, name, text, ev), warns
	}
	if !passedAll {
		return failCheck(2, name, text, fmt.Sprintf("not every one of %d independent judgments passed%s", pool, suffix), StatusFail, vocab.CauseCriterionFailed), warns
	}
	return passCheck(2, name, text, fmt.Sprintf("all %d independent judgments passed%s", pool, suffix)), warns
}

func compare(v float64, op string, want float64) (bool, error) {
	switch op {
	case "gt":
		return v > want, nil
	case "gte":
		return v >= want, nil
	case "lt":
		return v < want, nil
	case "lte":
		return v <= want, nil
	case "eq":
		return v == want, nil
	}
	return false, fmt.Errorf("unknown comparison %q", op)
}

func opSymbol(op string) string {
	return map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "eq": "=="}[op]
}

func fmtNum(f float64) string { return fmt.Sprintf("%g", f) }
