package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/vocab"
)

// criterion is acceptance criterion "c1" checked by d.
func criterion(d contract.Detector) contract.Criterion {
	return contract.Criterion{ID: "c1", Criterion: "the thing works", Check: &d}
}

func TestDetectScript(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	u.write("check.sh", "#!/bin/sh\ntest -f marker\n")
	require.NoError(t, os.Chmod(filepath.Join(u.dir, "check.sh"), 0o755))
	u.write("marker", "")

	tests := []struct {
		name     string
		d        contract.Detector
		status   Status
		code     vocab.CauseCode
		evidence string
	}{
		{"exit matches", contract.Detector{Type: "script", Command: "true"}, StatusPass, "", "`true` exited 0 as expected"},
		{"expected non-zero exit", contract.Detector{Type: "script", Command: "sh", Args: []string{"-c", "exit 3"}, ExpectExit: 3}, StatusPass, "", "exited 3 as expected"},
		{"runs in the project root", contract.Detector{Type: "script", Command: "./check.sh"}, StatusPass, "", "exited 0"},
		{"args are argv, not a shell line", contract.Detector{Type: "script", Command: "test", Args: []string{"x", "=", "y; exit 0"}}, StatusFail, vocab.CauseCriterionFailed, "exited 1 (want 0)"},
		{"exit mismatch", contract.Detector{Type: "script", Command: "sh", Args: []string{"-c", "echo broken; exit 2"}}, StatusFail, vocab.CauseCriterionFailed, "exited 2 (want 0); last output: broken"},
		{"a failing test is quoted by its runner's lines", contract.Detector{Type: "script", Command: "sh", Args: []string{"-c", "echo 'not ok 1 - greets'; echo '# fail 1'; exit 1"}}, StatusFail, vocab.CauseCriterionFailed, "exited 1 (want 0); failure lines: not ok 1 - greets"},
		{"zero exit when another is expected", contract.Detector{Type: "script", Command: "true", ExpectExit: 1}, StatusFail, vocab.CauseCriterionFailed, "exited 0 (want 1)"},
		{"timeout", contract.Detector{Type: "script", Command: "sleep", Args: []string{"1"}, Timeout: "100ms"}, StatusFail, vocab.CauseCriterionFailed, "timed out after 100ms"},
		{"cannot start", contract.Detector{Type: "script", Command: "./no-such-program"}, StatusError, vocab.CauseDetectorError, "could not run"},
		{"not on PATH", contract.Detector{Type: "script", Command: "geas-no-such-program-on-path"}, StatusError, vocab.CauseDetectorError, "could not run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := u.run(unitContract(), nil)
			c, warns, run := detect(t.Context(), r, nil, 1, criterion(tc.d))
			assert.Empty(t, warns)
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Equal(t, tc.status == StatusPass, c.Passed)
			assert.True(t, c.Blocking)
			assert.Equal(t, 2, c.Tier)
			assert.Equal(t, "criterion:c1", c.Name)
			assert.Equal(t, tc.code, c.Code)
			assert.Contains(t, c.Evidence, tc.evidence)
			require.NotNil(t, run, "a script run is recorded with the eval runs")
			assert.Equal(t, tc.status == StatusError, run.Status == StatusError)
		})
	}
}

func TestDetectFileExists(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644))
	u.write("docs/guide.md", "# guide\n")
	u.write("empty.txt", "")
	require.NoError(t, os.MkdirAll(filepath.Join(u.dir, "emptydir"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(u.dir, "out-file")))
	require.NoError(t, os.Symlink(outside, filepath.Join(u.dir, "out-dir")))
	require.NoError(t, os.Symlink("docs/guide.md", filepath.Join(u.dir, "in-link")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(u.dir, "dangling")))

	tests := []struct {
		name     string
		path     string
		nonEmpty bool
		status   Status
		evidence string
	}{
		{"present", "docs/guide.md", false, StatusPass, "docs/guide.md exists (8 bytes)"},
		{"present and non-empty", "docs/guide.md", true, StatusPass, "exists (8 bytes)"},
		{"directory", "docs", false, StatusPass, "docs exists (a directory)"},
		{"non-empty directory", "docs", true, StatusPass, "a non-empty directory"},
		{"symlink inside the project", "in-link", true, StatusPass, "exists"},
		{"absent", "docs/missing.md", false, StatusFail, "docs/missing.md is absent"},
		{"dangling symlink is absent", "dangling", false, StatusFail, "is absent"},
		{"empty file with non_empty", "empty.txt", true, StatusFail, "exists but is empty (non_empty required)"},
		{"empty file without non_empty", "empty.txt", false, StatusPass, "exists (0 bytes)"},
		{"empty directory with non_empty", "emptydir", true, StatusFail, "empty directory (non_empty required)"},
		{"symlink to a file outside the project", "out-file", false, StatusError, "cannot check out-file"},
		{"symlink to a directory outside the project", "out-dir/secret", false, StatusError, "cannot check out-dir/secret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := u.run(unitContract(), nil)
			c, _, _ := detect(t.Context(), r, nil, 1, criterion(contract.Detector{Type: "file_exists", Path: tc.path, NonEmpty: tc.nonEmpty}))
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, tc.evidence)
			switch tc.status {
			case StatusFail:
				assert.Equal(t, vocab.CauseCriterionFailed, c.Code)
			case StatusError:
				assert.Equal(t, vocab.CauseDetectorError, c.Code)
				assert.False(t, c.Passed, "a path that leaves the project never passes")
			}
		})
	}
}

func TestDetectRegexMatch(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	u.write("README.md", "# greeter\n\nusage:\n  greeter --verbose\n")
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "notes"), []byte("--verbose\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "notes"), filepath.Join(u.dir, "notes")))

	tests := []struct {
		name, artifact, pattern string
		status                  Status
		code                    vocab.CauseCode
		evidence                string
	}{
		{"match with its line", "README.md", `--verbose`, StatusPass, "", "pattern /--verbose/ matches README.md at line 4"},
		{"match on the first line", "README.md", `^# greeter`, StatusPass, "", "at line 1"},
		{"multi-line flag", "README.md", `(?m)^usage:$`, StatusPass, "", "at line 3"},
		{"no match", "README.md", `--quiet`, StatusFail, vocab.CauseCriterionFailed, "pattern /--quiet/ does not match README.md (38 bytes)"},
		{"absent artifact", "CHANGELOG.md", `--verbose`, StatusFail, vocab.CauseCriterionFailed, "artifact CHANGELOG.md is absent"},
		{"bad regex", "README.md", `(--verbose`, StatusError, vocab.CauseDetectorError, "bad regex"},
		{"bad regex on an absent artifact", "CHANGELOG.md", `[`, StatusError, vocab.CauseDetectorError, "bad regex"},
		{"artifact outside the project", "notes", `--verbose`, StatusError, vocab.CauseDetectorError, "cannot read artifact notes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := u.run(unitContract(), nil)
			c, _, _ := detect(t.Context(), r, nil, 1, criterion(contract.Detector{Type: "regex_match", Artifact: tc.artifact, Pattern: tc.pattern}))
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Equal(t, tc.code, c.Code)
			assert.Contains(t, c.Evidence, tc.evidence)
		})
	}
}

func TestDetectThreshold(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)

	// Each op against value 70, for metrics 60, 70 and 80.
	ops := []struct {
		op   string
		want [3]bool
	}{
		{"gt", [3]bool{false, false, true}},
		{"gte", [3]bool{false, true, true}},
		{"lt", [3]bool{true, false, false}},
		{"lte", [3]bool{true, true, false}},
		{"eq", [3]bool{false, true, false}},
	}
	for _, tc := range ops {
		for i, metric := range []float64{60, 70, 80} {
			t.Run(tc.op+"/"+fmtNum(metric), func(t *testing.T) {
				r := u.run(unitContract(), nil)
				r.metrics["coverage"] = metric
				c, _, _ := detect(t.Context(), r, nil, 1, criterion(contract.Detector{Type: "threshold", Metric: "coverage", Op: tc.op, Value: 70}))
				want, verb := StatusFail, "does not hold"
				if tc.want[i] {
					want, verb = StatusPass, "holds"
				}
				assert.Equal(t, want, c.Status, c.Evidence)
				assert.Equal(t, "coverage = "+fmtNum(metric)+" (measured by an eval command) "+opSymbol(tc.op)+" 70 "+verb, c.Evidence)
			})
		}
	}

	withMetric := func(e *evidence.Evidence, v float64) *evidence.Evidence {
		e.Metrics = map[string]float64{"coverage": v}
		return e
	}
	tests := []struct {
		name     string
		measured map[string]float64
		ev       []*evidence.Evidence
		op       string
		status   Status
		evidence string
	}{
		{"measured is preferred over evidence", map[string]float64{"coverage": 60}, []*evidence.Evidence{withMetric(qa(), 95)}, "gte",
			StatusFail, "coverage = 60 (measured by an eval command) >= 80 does not hold"},
		{"independent evidence when not measured", nil, []*evidence.Evidence{withMetric(qa(), 95)}, "gte",
			StatusPass, "coverage = 95 (reported in qa-engineer.json) >= 80 holds"},
		{"the implementer's metrics are ignored", nil, []*evidence.Evidence{withMetric(builder(), 95)}, "gte",
			StatusFail, "metric coverage was not reported"},
		{"missing metric fails", nil, []*evidence.Evidence{qa()}, "gte",
			StatusFail, "metric coverage was not reported (not captured by an eval command, not in independent evidence)"},
		{"missing metric fails even for lt", nil, nil, "lt",
			StatusFail, "metric coverage was not reported"},
		{"unknown op is an error", map[string]float64{"coverage": 90}, nil, "approx",
			StatusError, `unknown comparison "approx"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := u.run(unitContract(), nil, append([]*evidence.Evidence{builder()}, tc.ev...)...)
			for k, v := range tc.measured {
				r.metrics[k] = v
			}
			c, _, _ := detect(t.Context(), r, nil, 1, criterion(contract.Detector{Type: "threshold", Metric: "coverage", Op: tc.op, Value: 80}))
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, tc.evidence)
		})
	}
}

// judgment is a judgment of criterion check by an evidence file.
func judgment(check string, passed *bool, score *float64, provider string) evidence.Judgment {
	return evidence.Judgment{Check: check, Passed: passed, Score: score, ProviderID: provider}
}

func withJudgments(e *evidence.Evidence, js ...evidence.Judgment) *evidence.Evidence {
	e.Judgments = js
	return e
}

func TestDetectJudge(t *testing.T) {
	t.Parallel()
	u := newUnitProject(t)
	yes, no := boolp(true), boolp(false)
	judge := contract.Detector{Type: "judge", Standard: "the help text is clear"}
	judgeMin := func(min float64) contract.Detector { d := judge; d.MinScore = floatp(min); return d }
	da := design()

	tests := []struct {
		name     string
		d        contract.Detector
		mode     string // judge_independence
		ev       []*evidence.Evidence
		status   Status
		code     vocab.CauseCode
		evidence string
		warns    int
	}{
		{"mean reaches min_score", judgeMin(3.5), "", []*evidence.Evidence{
			withJudgments(qa(), judgment("c1", nil, floatp(4), "")), withJudgments(design(), judgment("c1", nil, floatp(3), ""))},
			StatusPass, "", "mean score 3.5 of 2 judgments, min_score 3.5", 0},
		{"mean below min_score", judgeMin(4), "", []*evidence.Evidence{
			withJudgments(qa(), judgment("c1", yes, floatp(5), "")), withJudgments(design(), judgment("c1", yes, floatp(2), ""))},
			StatusFail, vocab.CauseCriterionFailed, "mean score 3.5 of 2 judgments, min_score 4", 0},
		{"min_score but no scores", judgeMin(3), "", []*evidence.Evidence{withJudgments(qa(), judgment("c1", yes, nil, ""))},
			StatusFail, vocab.CauseCriterionFailed, "1 judgment but none has a score (min_score 3)", 0},
		{"all passed", judge, "", []*evidence.Evidence{
			withJudgments(qa(), judgment("c1", yes, nil, "")), withJudgments(design(), judgment("AC1", yes, nil, ""))},
			StatusPass, "", "all 2 independent judgments passed", 0},
		{"one not passed", judge, "", []*evidence.Evidence{
			withJudgments(qa(), judgment("c1", yes, nil, "")), withJudgments(design(), judgment("c1", no, nil, ""))},
			StatusFail, vocab.CauseCriterionFailed, "not every one of 2 independent judgments passed", 0},
		{"a judgment without passed does not pass", judge, "", []*evidence.Evidence{withJudgments(qa(), judgment("c1", nil, floatp(5), ""))},
			StatusFail, vocab.CauseCriterionFailed, "not every one of 1 independent judgments passed", 0},
		{"no judgment", judge, "", []*evidence.Evidence{qa()},
			StatusFail, vocab.CauseCriterionFailed, "no independent judgment recorded for c1", 0},
		{"judgments of another check do not count", judge, "", []*evidence.Evidence{withJudgments(qa(), judgment("c2", yes, nil, ""), judgment("AC2", yes, nil, ""))},
			StatusFail, vocab.CauseCriterionFailed, "no independent judgment recorded", 0},
		{"the builder's own judgment is not counted", judge, "", []*evidence.Evidence{withJudgments(builder(), judgment("c1", yes, floatp(5), ""))},
			StatusFail, vocab.CauseCriterionFailed, "software-engineer.json (the builder's own judgment, not counted)", 0},
		{"the builder's judgment does not lift a failing mean", judgeMin(3), "", []*evidence.Evidence{
			withJudgments(builder(), judgment("c1", nil, floatp(5), "")), withJudgments(qa(), judgment("c1", nil, floatp(2), ""))},
			StatusFail, vocab.CauseCriterionFailed, "mean score 2 of 1 judgment", 0},
		{"refused on the builder's provider", judge, "", []*evidence.Evidence{withJudgments(ev("qa-engineer.json", "qa-engineer", vocab.Tester, "provider-a"), judgment("c1", yes, nil, ""))},
			StatusBlock, vocab.CauseJudgeNotIndependent, "judgment refused: judge and builder both ran on provider-a (qa-engineer.json)", 0},
		{"the judgment's own provider counts over its file's", judge, "", []*evidence.Evidence{withJudgments(qa(), judgment("c1", yes, nil, "provider-a"))},
			StatusBlock, vocab.CauseJudgeNotIndependent, "both ran on provider-a", 0},
		{"one refused judgment blocks despite others", judge, "", []*evidence.Evidence{
			withJudgments(qa(), judgment("c1", yes, nil, "")), withJudgments(da, judgment("c1", yes, nil, "provider-a"))},
			StatusBlock, vocab.CauseJudgeNotIndependent, "both ran on provider-a", 0},
		{"unknown judge provider warns under enforce", judge, "", []*evidence.Evidence{withJudgments(ev("qa-engineer.json", "qa-engineer", vocab.Tester, ""), judgment("c1", yes, nil, ""))},
			StatusPass, "", "all 1 independent judgments passed", 1},
		{"unknown judge provider is refused under strict", judge, contract.Strict, []*evidence.Evidence{withJudgments(ev("qa-engineer.json", "qa-engineer", vocab.Tester, ""), judgment("c1", yes, nil, ""))},
			StatusBlock, vocab.CauseJudgeNotIndependent, "judgment refused under judge_independence strict: the judge's provider is unknown", 0},
		{"off does not compare providers", judge, contract.Off, []*evidence.Evidence{withJudgments(qa(), judgment("c1", yes, nil, "provider-a"))},
			StatusPass, "", "all 1 independent judgments passed", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := unitContract()
			c.JudgeIndependence = tc.mode
			// Judgments bind to the contract's criteria (SPEC §5.3 A), so the criterion is the contract's.
			c.AcceptanceCriteria = []contract.Criterion{criterion(tc.d)}
			r := u.run(c, nil, append([]*evidence.Evidence{builder()}, tc.ev...)...)
			got, warns, _ := detect(t.Context(), r, nil, 1, criterion(tc.d))
			assert.Equal(t, tc.status, got.Status, got.Evidence)
			assert.Equal(t, tc.code, got.Code)
			assert.Contains(t, got.Evidence, tc.evidence)
			assert.Len(t, warns, tc.warns)
			for _, w := range warns {
				assert.Equal(t, StatusWarn, w.Status)
				assert.False(t, w.Blocking)
				assert.Equal(t, vocab.CauseCode("provider_unknown"), w.Code)
			}
		})
	}
}

func TestDetectUnknownTypeIsAnError(t *testing.T) {
	t.Parallel()
	r := newUnitProject(t).run(unitContract(), nil)
	c, _, _ := detect(t.Context(), r, nil, 1, criterion(contract.Detector{Type: "vibes"}))
	assert.Equal(t, StatusError, c.Status)
	assert.Equal(t, vocab.CauseDetectorError, c.Code)
	assert.Contains(t, c.Evidence, `unknown detector type "vibes"`)
}
