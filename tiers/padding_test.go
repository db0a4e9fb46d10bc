package tiers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// Bounds the padding tests hold a run's result to: what agents write can make a result this
// large at most, far below the record's limit (4 MiB), whatever the size of their evidence.
const (
	paddedResultBound = 512 << 10
	paddedCheckBound  = maxCheckEvidenceBytes + maxCheckTextBytes + 1024
)

// padN is how many entries a padded list gets: enough that quoting them all would take the
// result past the record's limit.
const padN = 20000

// padding is a long string an agent writes into a quoted field.
var padding = strings.Repeat("AC1 padding ", 20)

func padList(n int, f func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// paddedFields are the ways agents can make a result large: every field a check quotes, padded
// with many entries or long strings. Each leaves the tester's failing AC1 in place.
var paddedFields = map[string]func(f *fixture){
	"builder criteria_results": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["criteria_results"] = padList(padN, func(i int) any {
				return map[string]any{"criterion": "AC1", "passed": true, "details": padding}
			})
		})
	},
	"builder criteria_results naming no criterion": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["criteria_results"] = padList(padN, func(i int) any {
				return map[string]any{"criterion": fmt.Sprintf("AC%d %s", 1000+i, padding), "passed": true}
			})
		})
	},
	"tester criteria_results details": func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			rs, _ := m["criteria_results"].([]any)
			for i, r := range rs {
				r.(map[string]any)["details"] = strings.Repeat(padding, padN/max(len(rs), 1)) + fmt.Sprint(i)
			}
			m["criteria_results"] = rs
		})
	},
	"tester unmatched criteria_results": func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			rs, _ := m["criteria_results"].([]any)
			m["criteria_results"] = append(rs, padList(padN, func(i int) any {
				return map[string]any{"criterion": fmt.Sprintf("ZZ%d %s", i, padding), "passed": true}
			})...)
		})
	},
	"reviewer concerns": func(f *fixture) {
		f.evidence("design-authority.json", func(m map[string]any) {
			m["concerns"] = padList(padN, func(i int) any { return padding })
		})
	},
	"builder known_risks": func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["known_risks"] = padList(padN/4, func(i int) any { return fmt.Sprintf("risk %d %s", i, padding) })
		})
	},
	"builder risk_handling": func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["known_risks"] = []any{"stale cache"}
		})
		f.evidence("design-authority.json", func(m map[string]any) {
			m["risk_handling"] = padList(padN/4, func(i int) any {
				return map[string]any{"risk": "stale cache", "status": "mitigated", "evidence": padding, "rationale": padding}
			})
		})
	},
	"builder untested_paths": func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["untested_paths"] = padList(padN/4, func(i int) any { return fmt.Sprintf("path/%d/%s", i, padding) })
		})
	},
	"builder possible_stubs": func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["possible_stubs"] = padList(padN/4, func(i int) any { return fmt.Sprintf("greeter/x%d.go: %s", i, padding) })
		})
	},
	"builder summary": func(f *fixture) {
		f.record(func(m map[string]any) {
			m["self_check"].(map[string]any)["summary"] = strings.Repeat(padding, 10000)
		})
	},
	"builder files_changed": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["files_changed"] = padList(padN, func(i int) any { return fmt.Sprintf("elsewhere/%d/%s.go", i, padding) })
		})
	},
	"evaluator rubric rationale": func(f *fixture) {
		f.evidence("design-authority.json", func(m map[string]any) {
			m["rubric_scores"] = padList(padN/4, func(i int) any {
				return map[string]any{"dimension": "code_quality", "score": 4, "rationale": padding}
			})
		})
	},
	"builder rubric scores": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["rubric_scores"] = padList(padN/4, func(i int) any {
				return map[string]any{"dimension": fmt.Sprintf("dim %d %s", i, padding), "score": 5, "rationale": padding}
			})
		})
	},
	"builder judgments": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["judgments"] = padList(padN/4, func(i int) any {
				return map[string]any{"check": fmt.Sprintf("j%d %s", i, padding), "passed": true, "score": 5, "evidence": padding}
			})
		})
	},
	"builder metrics": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			metrics := map[string]any{}
			for i := range padN / 4 {
				metrics[fmt.Sprintf("m%d_%s", i, strings.ReplaceAll(padding, " ", "_"))] = i
			}
			m["metrics"] = metrics
		})
	},
	"evidence file names": func(f *fixture) {
		for i := range 2000 {
			f.write(taskFile(fmt.Sprintf("evidence/x%d-%s.json", i, strings.Repeat("p", 200))), "{}")
		}
	},
	"builder summary and rationale": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["summary"] = strings.Repeat(padding, padN)
			m["rationale"] = strings.Repeat(padding, padN)
		})
	},
	"stale commit": func(f *fixture) {
		f.evidence("software-engineer.json", func(m map[string]any) {
			m["commit"] = strings.Repeat("a", 4<<20)
		})
	},
}

// failingTasks are honest failures the padding is tried against, one per stage a fail can come
// from: AC1 failed by the tester (part A of tier 2: the later parts do not run), the same with
// --keep-going (they run, advisory), and a rubric score under its threshold (part D: every part
// before it runs and quotes what it reads).
var failingTasks = map[string]struct {
	fail      func(f *fixture)
	keepGoing bool
}{
	"AC1 fails": {fail: func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
		})
	}},
	"AC1 fails, keep going": {keepGoing: true, fail: func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
		})
	}},
	"rubric fails": {fail: func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["rubric_scores"] = []any{map[string]any{"dimension": "core_interaction", "score": 1, "rationale": "does not work"}}
		})
	}},
}

// TestPaddedEvidenceNeverTurnsAFailIntoAnError: an honest task fails; an agent then pads a field
// the checks quote with tens of thousands of entries or megabytes of text, under the evidence
// and record limits. The verdict is never result_too_large nor any error: every quoted field is
// bounded, and checks agents can multiply are summed past a bound, so the result stays small
// and the fail still spends its retry. The control is each failing task unpadded (a fail with
// its cause); padding may add causes of its own (a padded known risk is unhandled), never take
// the control's away.
func TestPaddedEvidenceNeverTurnsAFailIntoAnError(t *testing.T) {
	for task, tc := range failingTasks {
		t.Run(task, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.fail(f)
			_, control, _ := f.evaluate(Options{DryRun: true, Now: testNow, KeepGoing: tc.keepGoing})
			require.Equal(t, vocab.VerdictFail, control.Verdict, "control: the unpadded task fails: %v", control.Causes)
			controlCodes := causeCodeSet(control.Causes)

			for name, pad := range paddedFields {
				t.Run(name, func(t *testing.T) {
					f := newFixture(t, true)
					tc.fail(f)
					pad(f)
					in, res, escalate := f.evaluate(Options{DryRun: false, Now: testNow, KeepGoing: tc.keepGoing})
					raw, err := res.JSON()
					require.NoError(t, err)
					t.Logf("verdict %s, %d checks, result %d bytes, causes %v", res.Verdict, len(res.Checks), len(raw), causeCodeSet(res.Causes))
					assertBoundedResult(t, res)
					require.NoError(t, Apply(in, res, escalate, nil, testNow))
					assert.NotContains(t, causeCodeSet(res.Causes), vocab.CauseResultTooLarge)
					assert.NotEqual(t, vocab.VerdictError, res.Verdict, "%v", res.Causes)
					assert.NotEqual(t, vocab.Verdict("pass"), res.Verdict)
					if res.Verdict == vocab.VerdictFail {
						// (a tier-0 block, such as padding that makes a file invalid or stale,
						// stops the run before the control's check: the agent's own doing)
						for code := range controlCodes {
							assert.Contains(t, causeCodeSet(res.Causes), code, "the control's cause stays")
						}
						require.NotNil(t, res.RetryBudgetAfter)
						assert.Equal(t, *res.RetryBudgetBefore-1, *res.RetryBudgetAfter, "the fail spends a retry")
					}
				})
			}
		})
	}
}

// assertBoundedResult checks that res (as recorded) and each of its checks stay within the
// padding bounds.
func assertBoundedResult(t *testing.T, res *Result) {
	t.Helper()
	raw, err := res.JSON()
	require.NoError(t, err)
	assert.LessOrEqual(t, len(raw), paddedResultBound, "the result is %d bytes", len(raw))
	for _, c := range res.Checks {
		n := len(c.Text) + len(c.Evidence) + len(c.Name)
		for _, l := range c.Locations {
			n += len(l.Path)
		}
		assert.LessOrEqual(t, n, paddedCheckBound, "check %.80s quotes %d bytes", c.Name, n)
	}
	assert.LessOrEqual(t, len(res.Checks), maxChecksPerFamily*64, "the number of checks")
}

func causeCodeSet(causes []Cause) map[vocab.CauseCode]bool {
	m := map[vocab.CauseCode]bool{}
	for _, c := range causes {
		m[c.Code] = true
	}
	return m
}
