package tiers

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// The tests in this file are named after the invariants of SPEC §2, one each.

// TestAModelCannotCertifyItsOwnCompletion (SPEC §2.1): evidence written by the implementer — its
// criteria_results, rubric scores, accepted risks, judgments, metrics — never satisfies a check on
// its own, however much of it there is. The independent reviewers are present but silent.
func TestAModelCannotCertifyItsOwnCompletion(t *testing.T) {
	t.Parallel()
	silenceQA := func(f *fixture) {
		f.evidence("qa-engineer.json", func(m map[string]any) {
			m["criteria_results"] = []any{}
			delete(m, "rubric_scores")
		})
	}
	claims := map[string]func(f *fixture){
		"criteria_results": func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": true, "details": "works on my machine"}}
			})
		},
		"rubric scores": func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["rubric_scores"] = []any{map[string]any{"dimension": "core_interaction", "score": 5}, map[string]any{"dimension": "code_quality", "score": 5}}
			})
		},
		"accepted risks": func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "stale cache", "status": "accepted", "rationale": "it is fine"}}
			})
		},
		"judgments": func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any),
					map[string]any{"id": "help", "criterion": "the help is clear", "check": map[string]any{"type": "judge", "standard": "clear", "min_score": 3}})
			})
			f.evidence("software-engineer.json", func(m map[string]any) {
				m["judgments"] = []any{map[string]any{"check": "help", "passed": true, "score": 5}}
			})
		},
		"metrics": func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any),
					map[string]any{"id": "cov", "criterion": "coverage", "check": map[string]any{"type": "threshold", "metric": "coverage", "op": "gte", "value": 80}})
			})
			f.evidence("software-engineer.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 99} })
		},
		"a primary worker posing as a reviewer": func(f *fixture) {
			f.writeEvidence("software-engineer-review.json", map[string]any{
				"version": "1.0", "agent": "software-engineer-review", "task_id": "t1", "role": "reviewer", "summary": "lgtm",
				"verdict": "approved", "concerns": []string{}, "provider_id": "provider-z",
				"criteria_results": []any{map[string]any{"criterion": "AC1", "passed": true}},
				"rubric_scores":    []any{map[string]any{"dimension": "core_interaction", "score": 5}},
			})
		},
	}
	tests := []struct {
		name    string
		claims  []string
		verdict vocab.Verdict
		codes   []vocab.CauseCode
	}{
		{"criteria_results", []string{"criteria_results"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseCriterionUnverified}},
		{"rubric scores", []string{"rubric scores"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseScoreMissing}},
		{"accepted risks", []string{"accepted risks"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseRiskUnhandled}},
		{"judgments", []string{"judgments"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseCriterionFailed}},
		{"metrics", []string{"metrics"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseCriterionFailed}},
		{"a primary worker posing as a reviewer", []string{"a primary worker posing as a reviewer"}, vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseCriterionUnverified, vocab.CauseScoreMissing}},
		{"everything at once", []string{"criteria_results", "rubric scores", "accepted risks", "judgments", "metrics", "a primary worker posing as a reviewer"},
			vocab.VerdictBlock, []vocab.CauseCode{vocab.CauseCriterionUnverified, vocab.CauseScoreMissing, vocab.CauseRiskUnhandled, vocab.CauseCriterionFailed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			silenceQA(f)
			for _, c := range tc.claims {
				claims[c](f)
			}
			// --keep-going: the stages after a failing part A run too (as advisory), so every
			// claim is shown to be refused, not only the first stage's.
			_, res, _ := f.evaluate(Options{DryRun: true, Now: testNow, KeepGoing: true})
			assert.False(t, res.Verdict.IsPass(), "the implementer certified its own work: %v", checkNames(res.Checks))
			assert.Equal(t, tc.verdict, res.Verdict)
			for _, code := range tc.codes {
				assert.Contains(t, append(causeCodes(res.Causes), causeCodes(res.AdvisoryCauses)...), code)
			}
			for _, c := range res.Checks {
				fromGit := c.Name == "scope" && strings.Contains(c.Evidence, "(from git diff --name-only ") ||
					c.Name == "stubs" && strings.Contains(c.Evidence, "added lines") // the gate's own scan of the diff
				if c.Passed && c.Tier == 2 && c.Name != "criterion:readme" && c.Name != "rubric:code_quality" && !fromGit {
					t.Errorf("%s passed on the implementer's word: %s", c.Name, c.Evidence)
				}
			}
		})
	}

	// The control: the same task passes once an independent reviewer says what the implementer said.
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		claims["criteria_results"](f)
		claims["rubric scores"](f)
		_, res, _ := f.evaluate()
		assertPass(t, res)
		ac1 := findCheck(t, res.Checks, "criterion:AC1")
		assert.Contains(t, ac1.Evidence, "the implementer's own claim is not counted: software-engineer.json passed")
	})
}

// TestOnlyTheGateBuildsAPass (SPEC §2.2): a passing verdict is constructed in exactly one function,
// decide, and gate_result cannot be written by anything but the gate.
func TestOnlyTheGateBuildsAPass(t *testing.T) {
	t.Parallel()
	moduleRoot, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(moduleRoot, "go.mod"))
	require.NoError(t, err)

	type site struct{ file, fn string }
	var passConversions, otherConversions, passLiterals []site
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != moduleRoot && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(moduleRoot, p)
		rel = filepath.ToSlash(rel)
		inTiers := f.Name.Name == "tiers" && strings.HasPrefix(rel, "tiers/")
		inVocab := f.Name.Name == "vocab" && strings.HasPrefix(rel, "vocab/")
		// inspect records the Verdict conversions and "pass" literals of node, which belongs to owner:
		// "func decide", "method IsPass", "const StatusPass", ...
		inspect := func(node ast.Node, owner string) {
			ast.Inspect(node, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if !isVerdictType(n.Fun, inVocab) || len(n.Args) != 1 {
						return true
					}
					if isPassLiteral(n.Args[0]) {
						passConversions = append(passConversions, site{rel, owner})
					} else if _, lit := n.Args[0].(*ast.BasicLit); !lit {
						otherConversions = append(otherConversions, site{rel, owner})
					}
				case *ast.ValueSpec: // const x Verdict = "pass"
					if n.Type != nil && isVerdictType(n.Type, inVocab) {
						for _, v := range n.Values {
							if isPassLiteral(v) {
								passConversions = append(passConversions, site{rel, owner})
							}
						}
					}
				case *ast.BasicLit:
					if (inTiers || inVocab) && isPassLiteral(n) {
						passLiterals = append(passLiterals, site{rel, owner})
					}
				}
				return true
			})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				kind := "func "
				if d.Recv != nil {
					kind = "method "
				}
				inspect(d, kind+d.Name.Name)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					owner := d.Tok.String()
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for i, id := range vs.Names {
							sep := ","
							if i == 0 {
								sep = " "
							}
							owner += sep + id.Name
						}
					}
					inspect(spec, owner)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 20, "the module's sources were found")

	assert.Equal(t, []site{{"tiers/verdict.go", "func decide"}}, passConversions,
		"Verdict(\"pass\") is built exactly once, in decide")
	assert.Empty(t, otherConversions, "a Verdict converted from a non-literal could smuggle in a pass")
	for _, s := range passLiterals {
		switch s {
		case site{"tiers/verdict.go", "func decide"}, site{"vocab/verdict.go", "method IsPass"}, site{"tiers/check.go", "const StatusPass"}:
		default:
			t.Errorf("%s: %s contains the string literal \"pass\"; only decide builds a passing verdict", s.file, s.fn)
		}
	}

	// gate_result and gate_history are refused to every writer but the gate.
	rec := unitRecord(t, map[string]any{"self_check": selfCheck(4, nil)})
	before, err := rec.Bytes()
	require.NoError(t, err)
	for _, section := range []string{"gate_result", "gate_history"} {
		forged := json.RawMessage(`{"verdict": "pass"}`)
		if section == "gate_history" {
			forged = json.RawMessage(`[{"verdict": "pass", "prev_hash": "", "hash": "x"}]`)
		}
		err := rec.SetSection(section, forged, testNow)
		require.ErrorIs(t, err, record.ErrGateOnlySection, section)
		after, err := rec.Bytes()
		require.NoError(t, err)
		assert.Equal(t, before, after, "a refused write changes nothing")
	}
	_, ok := rec.GateResult()
	assert.False(t, ok)
}

// isVerdictType reports whether an expression names the type Verdict: vocab.Verdict, or Verdict
// inside package vocab.
func isVerdictType(e ast.Expr, inVocab bool) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return inVocab && e.Name == "Verdict"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "vocab" && e.Sel.Name == "Verdict"
	case *ast.ParenExpr:
		return isVerdictType(e.X, inVocab)
	}
	return false
}

func isPassLiteral(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && s == "pass"
}

// TestSilenceIsNotSuccess (SPEC §2.3): a run in which no blocking check executed is never a pass,
// and every detector fails when its input is missing.
func TestSilenceIsNotSuccess(t *testing.T) {
	t.Parallel()
	t.Run("decide", func(t *testing.T) {
		for _, checks := range [][]Check{
			nil,
			{skippedCheck(1, "eval_commands", "t", "no eval_commands configured"), skippedCheck(2, "known_risks", "t", "none")},
			{warnCheck(0, "base_pinned", "t", "e", "base_unpinned"), skippedCheck(2, "scope", "t", "no changed files")},
		} {
			v, causes := decide(checks)
			assert.Equal(t, vocab.VerdictBlock, v)
			assert.Equal(t, []vocab.CauseCode{vocab.CauseNothingToSatisfy}, causeCodes(causes))
		}
	})

	// Through Evaluate every run has at least the blocking tier-0 checks, so the gate cannot be
	// reached with nothing at all to satisfy; what it can be given is a task whose work is silent.
	// Each row leaves one input missing; none of them is a pass.
	tests := []struct {
		name    string
		setup   func(f *fixture)
		verdict vocab.Verdict
		code    vocab.CauseCode
	}{
		{"no independent criteria result", func(f *fixture) {
			f.evidence("qa-engineer.json", func(m map[string]any) { m["criteria_results"] = []any{} })
		}, vocab.VerdictBlock, vocab.CauseCriterionUnverified},
		{"missing file", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "file_exists", "path": "docs/verbose.md"})
		}, vocab.VerdictFail, vocab.CauseCriterionFailed},
		{"missing artifact", func(f *fixture) { f.remove("README.md"); f.commit("no readme") }, vocab.VerdictFail, vocab.CauseCriterionFailed},
		{"missing metric", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "threshold", "metric": "coverage", "op": "lte", "value": 100})
		}, vocab.VerdictFail, vocab.CauseCriterionFailed},
		{"missing judgment", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "judge", "standard": "clear"})
		}, vocab.VerdictFail, vocab.CauseCriterionFailed},
		{"missing score", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) { delete(m, "rubric_scores") })
		}, vocab.VerdictBlock, vocab.CauseScoreMissing},
		{"missing review", func(f *fixture) { f.remove(taskFile("evidence/qa-engineer.json")) }, vocab.VerdictBlock, vocab.CauseMissingReview},
		{"missing record", func(f *fixture) { f.remove(taskFile("record.json")) }, vocab.VerdictBlock, vocab.CauseMissingSelfCheck},
		{"no evidence at all", func(f *fixture) {
			for _, n := range []string{"qa-engineer.json", "design-authority.json", "software-engineer.json"} {
				f.remove(taskFile("evidence/" + n))
			}
		}, vocab.VerdictBlock, vocab.CauseMissingReview},
		{"closure_ready with nothing said", func(f *fixture) {
			f.contract(func(m map[string]any) { m["gate_profile"] = "closure_ready"; m["eval_commands"] = []any{} })
			f.evidence("qa-engineer.json", func(m map[string]any) { m["criteria_results"] = []any{} })
			f.remove("README.md")
			f.commit("no readme")
		}, vocab.VerdictBlock, vocab.CauseCriterionUnverified},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.setup(f)
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.verdict, tc.code)
		})
	}
}

// addCriterion appends an acceptance criterion checked by detector to the contract.
func addCriterion(f *fixture, detector map[string]any) {
	f.contract(func(m map[string]any) {
		m["acceptance_criteria"] = append(m["acceptance_criteria"].([]any),
			map[string]any{"id": "extra", "criterion": "an extra criterion", "check": detector})
	})
}

// TestFailClosed (SPEC §2.4): a check that could not run is an error, and malformed input of any
// kind is never a pass.
func TestFailClosed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(f *fixture)
		verdict vocab.Verdict
		code    vocab.CauseCode
	}{
		{"contract is not JSON", func(f *fixture) { f.write(taskFile("contract.json"), "{\"task_id\": ") }, vocab.VerdictError, vocab.CauseContractInvalid},
		{"contract is empty", func(f *fixture) { f.write(taskFile("contract.json"), "") }, vocab.VerdictError, vocab.CauseContractInvalid},
		{"contract is missing", func(f *fixture) { f.remove(taskFile("contract.json")) }, vocab.VerdictError, vocab.CauseContractInvalid},
		{"contract has a typo", func(f *fixture) {
			f.contract(func(m map[string]any) { m["eval_command"] = m["eval_commands"]; delete(m, "eval_commands") })
		}, vocab.VerdictError, vocab.CauseContractInvalid},
		{"contract path escapes the project", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "file_exists", "path": "../../etc/passwd"})
		}, vocab.VerdictError, vocab.CauseContractInvalid},
		{"record is not JSON", func(f *fixture) { f.write(taskFile("record.json"), "[") }, vocab.VerdictError, vocab.CauseRecordInvalid},
		{"record has a malformed history", func(f *fixture) {
			f.record(func(m map[string]any) { m["gate_history"] = "all passed" })
		}, vocab.VerdictError, vocab.CauseRecordInvalid},
		{"record has a malformed stub location", func(f *fixture) {
			f.record(func(m map[string]any) {
				m["self_check"].(map[string]any)["possible_stubs"] = []any{map[string]any{"line": 3}}
			})
		}, vocab.VerdictError, vocab.CauseRecordInvalid},
		{"evidence is not JSON", func(f *fixture) { f.write(taskFile("evidence/qa-engineer.json"), "{") }, vocab.VerdictBlock, vocab.CauseEvidenceInvalid},
		{"evidence score out of range", func(f *fixture) {
			f.evidence("qa-engineer.json", func(m map[string]any) {
				m["rubric_scores"] = []any{map[string]any{"dimension": "core_interaction", "score": 50}}
			})
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid},
		{"evidence with a misspelt risk field", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "R1", "status": "accepted", "rational": "typo"}}
			})
		}, vocab.VerdictBlock, vocab.CauseEvidenceInvalid},
		{"policy is malformed", func(f *fixture) { f.write(".geas/gate-policy.json", `{"judge_independence": "lenient"}`) }, vocab.VerdictError, vocab.CausePolicyInvalid},
		{"eval command cannot start", func(f *fixture) {
			f.contract(func(m map[string]any) {
				m["eval_commands"] = []any{map[string]any{"run": "true", "workdir": "missing"}}
			})
		}, vocab.VerdictError, vocab.CauseEvalUnstartable},
		{"script detector cannot start", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "script", "command": "./missing-checker"})
		}, vocab.VerdictError, vocab.CauseDetectorError},
		{"regex does not compile", func(f *fixture) {
			addCriterion(f, map[string]any{"type": "regex_match", "artifact": "README.md", "pattern": "(unclosed"})
		}, vocab.VerdictError, vocab.CauseDetectorError},
		{"file check through a symlink out of the project", func(f *fixture) {
			require.NoError(f.t, os.Symlink(f.t.TempDir(), f.path("linked")))
			f.write(".git/info/exclude", "linked\n") // an ignored file: the working tree is still the head
			addCriterion(f, map[string]any{"type": "file_exists", "path": "linked"})
		}, vocab.VerdictError, vocab.CauseDetectorError},
		{"debt register is malformed", func(f *fixture) {
			f.write(".geas/missions/m1/evolution/debt-register.json", `{"items": 3}`)
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
			f.evidence("design-authority.json", func(m map[string]any) {
				m["risk_handling"] = []any{map[string]any{"risk": "stale cache", "status": "deferred", "debt_id": "d-1"}}
			})
		}, vocab.VerdictError, vocab.CauseRiskUnhandled},
		// (A possible stub outside the project is the builder's own claim, which the gate does not
		// confirm: not an error, which would spend no retry; TestPartDStubs.)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.setup(f)
			_, res, _ := f.evaluate()
			assertNotPass(t, res, tc.verdict, tc.code)
		})
	}
}

// TestTheGateCanTakeDoneBack (SPEC §2.5): evaluation keeps no memory of earlier runs. A task that
// passed stops passing when a required artifact is deleted, in a dry run as in a real one, and a
// re-run recomputes everything from the inputs of the moment.
func TestTheGateCanTakeDoneBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	qaEvidence := f.read(taskFile("evidence/qa-engineer.json"))

	_, res, _ := f.evaluate()
	assertPass(t, res)

	f.remove(taskFile("evidence/qa-engineer.json"))
	for _, dry := range []bool{true, false} {
		_, res, _ := f.evaluate(Options{DryRun: dry, Now: testNow})
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseMissingReview)
	}

	// A real pass: the task is verified and the record holds the pass.
	f.write(taskFile("evidence/qa-engineer.json"), string(qaEvidence))
	res = f.gate()
	assertPass(t, res)
	assert.Equal(t, "verified", f.status())
	passDigest := res.InputsSHA256

	// Delete the artifact again: the stored pass does not hold the verified task up.
	f.remove(taskFile("evidence/qa-engineer.json"))
	_, res, _ = f.evaluate()
	assert.False(t, res.Verdict.IsPass())
	assert.Contains(t, causeCodes(res.Causes), vocab.CauseMissingReview, "the deleted review is named")
	assert.NotEqual(t, passDigest, res.InputsSHA256, "the inputs digest sees the deletion")

	// Back to integrated (a legal edge), with fresh evidence that fails: the run recomputes from
	// scratch, whatever the previous gate_result said.
	f.contract(func(m map[string]any) { m["status"] = "integrated" })
	f.write(taskFile("evidence/qa-engineer.json"), string(qaEvidence))
	f.evidence("qa-engineer.json", func(m map[string]any) {
		m["criteria_results"] = []any{map[string]any{"criterion": "AC1", "passed": false, "details": "prints nothing"}}
	})
	res = f.gate()
	assert.Equal(t, vocab.VerdictFail, res.Verdict)
	assert.Equal(t, intp(3), res.RetryBudgetBefore)
	assert.Equal(t, intp(2), res.RetryBudgetAfter)
	assert.Equal(t, "integrated", f.status())

	// A forged pass in gate_result is no pass either: it is seen as tampering (SPEC §5.1), and
	// undoing the forgery lets the gate go on from the recorded fail.
	f.record(func(m map[string]any) { m["gate_result"].(map[string]any)["verdict"] = "pass" })
	_, res, _ = f.evaluate()
	assertNotPass(t, res, vocab.VerdictError, vocab.CauseHistoryTampered)
	f.record(func(m map[string]any) { m["gate_result"].(map[string]any)["verdict"] = "fail" })

	// Fixed evidence: a pass again, with the budget the fail left.
	f.write(taskFile("evidence/qa-engineer.json"), string(qaEvidence))
	res = f.gate()
	assertPass(t, res)
	assert.Equal(t, intp(2), res.RetryBudgetBefore)
	assert.Equal(t, "verified", f.status())

	rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
	require.NoError(t, err)
	hist := rec.History()
	require.Len(t, hist, 3)
	assert.Equal(t, []string{"pass", "fail", "pass"}, []string{hist[0].Verdict, hist[1].Verdict, hist[2].Verdict})
	require.NoError(t, record.VerifyChain(hist))
}

// TestJudgeOnTheBuildersProviderIsRefused (SPEC §2.1, §5.4): a judgment, score or risk acceptance
// from the builder's provider is refused; unknown providers warn under enforce and are refused
// under strict.
func TestJudgeOnTheBuildersProviderIsRefused(t *testing.T) {
	t.Parallel()
	judged := func(f *fixture, judgment map[string]any) {
		addCriterion(f, map[string]any{"type": "judge", "standard": "the help text is clear", "min_score": 3})
		f.evidence("qa-engineer.json", func(m map[string]any) { m["judgments"] = []any{judgment} })
	}
	tests := []struct {
		name     string
		setup    func(f *fixture)
		check    string
		status   Status
		evidence string
	}{
		{"judgment on the builder's provider", func(f *fixture) {
			judged(f, map[string]any{"check": "extra", "passed": true, "score": 5, "provider_id": "provider-a"})
		}, "criterion:extra", StatusBlock, "judgment refused: judge and builder both ran on provider-a (qa-engineer.json)"},
		{"judge file on the builder's provider", func(f *fixture) {
			judged(f, map[string]any{"check": "extra", "passed": true, "score": 5})
			f.evidence("qa-engineer.json", func(m map[string]any) { m["provider_id"] = "provider-a" })
		}, "criterion:extra", StatusBlock, "judgment refused: judge and builder both ran on provider-a"},
		{"rubric score on the builder's provider", func(f *fixture) {
			f.evidence("design-authority.json", func(m map[string]any) { m["provider_id"] = "provider-a" })
		}, "rubric:code_quality", StatusBlock, "judgment refused: judge and builder both ran on provider-a (design-authority.json)"},
		{"risk acceptance on the builder's provider", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["known_risks"] = []string{"stale cache"} })
			f.evidence("design-authority.json", func(m map[string]any) {
				m["provider_id"] = "provider-a"
				m["rubric_scores"] = []any{}
				m["risk_handling"] = []any{map[string]any{"risk": "stale cache", "status": "accepted", "rationale": "ok"}}
			})
			f.contract(func(m map[string]any) {
				m["rubric"] = map[string]any{"dimensions": []any{map[string]any{"name": "core_interaction", "threshold": 3}}}
			})
		}, "risk:R1", StatusBlock, "refused: judgment refused: judge and builder both ran on provider-a"},
		{"unknown provider under strict", func(f *fixture) {
			judged(f, map[string]any{"check": "extra", "passed": true, "score": 5})
			f.evidence("qa-engineer.json", func(m map[string]any) { delete(m, "provider_id") })
			f.contract(func(m map[string]any) { m["judge_independence"] = "strict" })
		}, "criterion:extra", StatusBlock, "judgment refused under judge_independence strict: the judge's provider is unknown"},
		{"unknown builder provider under strict", func(f *fixture) {
			f.evidence("software-engineer.json", func(m map[string]any) { delete(m, "provider_id") })
			f.contract(func(m map[string]any) { m["judge_independence"] = "strict" })
		}, "rubric:code_quality", StatusBlock, "the builder's provider is unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.setup(f)
			_, res, _ := f.evaluate()
			c := findCheck(t, res.Checks, tc.check)
			assert.Equal(t, tc.status, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, tc.evidence)
			assert.False(t, res.Verdict.IsPass())
			if tc.status == StatusBlock {
				assert.Equal(t, vocab.CauseJudgeNotIndependent, c.Code)
				assert.Contains(t, causeCodes(res.Causes), vocab.CauseJudgeNotIndependent)
			}
		})
	}

	t.Run("off does not compare providers", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		judged(f, map[string]any{"check": "extra", "passed": true, "score": 5, "provider_id": "provider-a"})
		f.contract(func(m map[string]any) { m["judge_independence"] = "off" })
		_, res, _ := f.evaluate()
		assertPass(t, res)
	})
	t.Run("another provider is independent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		judged(f, map[string]any{"check": "extra", "passed": true, "score": 4})
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Contains(t, findCheck(t, res.Checks, "criterion:extra").Evidence, "mean score 4 of 1 judgment, min_score 3")
	})
}

// TestMissingMetricFailsRatherThanPasses (SPEC §2.3, §5.5): a threshold whose metric was not
// reported fails, whatever the comparison — a missing value is not a zero that is "less than".
func TestMissingMetricFailsRatherThanPasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op    string
		value float64
	}{{"lt", 50}, {"lte", 0}, {"eq", 0}, {"gt", -1}, {"gte", 0}} {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			addCriterion(f, map[string]any{"type": "threshold", "metric": "coverage", "op": tc.op, "value": tc.value})
			f.contract(func(m map[string]any) {
				// A capture is configured, but the command never prints the metric.
				m["eval_commands"] = []any{map[string]any{"run": "echo no numbers here", "metrics": map[string]any{"coverage": `coverage: ([0-9.]+)%`}}}
			})
			f.evidence("software-engineer.json", func(m map[string]any) { m["metrics"] = map[string]any{"coverage": 0} })
			_, res, _ := f.evaluate()
			c := findCheck(t, res.Checks, "criterion:extra")
			assert.Equal(t, StatusFail, c.Status, c.Evidence)
			assert.Contains(t, c.Evidence, "metric coverage was not reported")
			assertNotPass(t, res, vocab.VerdictFail, vocab.CauseCriterionFailed)
		})
	}
	t.Run("control: a measured metric passes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		addCriterion(f, map[string]any{"type": "threshold", "metric": "coverage", "op": "gte", "value": 80})
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{map[string]any{"run": "echo coverage: 91.5%", "metrics": map[string]any{"coverage": `coverage: ([0-9.]+)%`}}}
		})
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Contains(t, findCheck(t, res.Checks, "criterion:extra").Evidence, "coverage = 91.5 (measured by an eval command) >= 80 holds")
	})
}

// TestNonBlockingWarningsDoNotHoldTheGate (SPEC §6): warnings — an unpinned base, a change to a
// shared file, an undeclared change, an unknown provider, a stub under the cap — leave a pass a pass.
func TestNonBlockingWarningsDoNotHoldTheGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.write("greeter/flags.go", "package main\n\n// TODO: a -q flag later\nvar verbose bool\n")
	f.write("greeter/extra.go", "package main\n")
	f.write("go.mod", "module greeter\n")
	f.commit("verbose")
	f.contract(func(m map[string]any) { m["base_snapshot"] = "main~1" })
	f.evidence("software-engineer.json", func(m map[string]any) { m["files_changed"] = []string{"greeter/flags.go", "go.mod"} })
	f.evidence("qa-engineer.json", func(m map[string]any) { delete(m, "provider_id") })

	_, res, _ := f.evaluate()
	assertPass(t, res)
	assert.Empty(t, res.Causes)
	warns := map[vocab.CauseCode]string{}
	for _, c := range res.Checks {
		if c.Status == StatusWarn {
			assert.False(t, c.Blocking, c.Name)
			assert.False(t, c.Passed, c.Name)
			warns[c.Code] = c.Name
		}
	}
	assert.Equal(t, map[vocab.CauseCode]string{
		"base_unpinned":     "base_pinned",
		"scope_shared":      "scope:shared",
		"undeclared_change": "scope:declared",
		"provider_unknown":  "rubric:core_interaction:independence",
		"stub_confirmed":    "stubs",
	}, warns)
	assert.Equal(t, 1, res.StubCount)
	assert.Equal(t, StatusPass, res.TierResults["tier_0"].Status)
	assert.Contains(t, res.TierResults["tier_0"].Details, "1 warning")
	assert.Equal(t, StatusPass, res.TierResults["tier_2"].Status)
	assert.Contains(t, res.TierResults["tier_2"].Details, "4 warnings")
	assert.Equal(t, NextProceed, res.NextAction)
}

// TestNothingIsLost (SPEC §2.6): the gate writes through validated, atomic writes. An Apply whose
// result does not validate writes nothing at all, and runs in sequence never lose a budget
// decrement. (Concurrent runs are serialized by the caller's task lock: see cmd.)
func TestNothingIsLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func(res *Result)
	}{
		{"unknown next action", func(res *Result) { res.NextAction = "celebrate" }},
		{"unknown verdict", func(res *Result) { res.Verdict = "maybe" }},
		{"negative budget", func(res *Result) { res.RetryBudgetAfter = intp(-1) }},
		{"unknown tier status", func(res *Result) { res.TierResults["tier_1"] = TierResult{Status: StatusWarn} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.contract(func(m map[string]any) { m["retry_budget"] = 1; m["eval_commands"] = []any{"false"} })
			before := snapshotTree(t, f.dir)
			in, res, escalate := f.evaluate(Options{DryRun: false, Now: testNow})
			require.True(t, escalate, "the run would escalate: every write is at stake")
			recBefore, err := in.Record.Bytes()
			require.NoError(t, err)

			tc.spoil(res)
			err = Apply(in, res, escalate, nil, testNow)
			var ve *schemas.ValidationError
			require.ErrorAs(t, err, &ve, "the record refuses a result that does not match its schema")
			assert.Equal(t, before, snapshotTree(t, f.dir), "a failed Apply leaves every file byte-identical")
			recAfter, err := in.Record.Bytes()
			require.NoError(t, err)
			assert.True(t, bytes.Equal(recBefore, recAfter), "and the in-memory record unchanged")
		})
	}

	t.Run("a malformed record is not overwritten", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.write(taskFile("record.json"), `{"version": "1.0", "task_id": "t1", "self_check": 7}`)
		rec := f.read(taskFile("record.json"))
		res := f.gate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseRecordInvalid)
		assert.Equal(t, rec, f.read(taskFile("record.json")), "the gate does not replace what it cannot read")
		assert.Contains(t, res.Notes, "record.json is invalid, so this run could not be recorded in it")
		assert.Equal(t, "integrated", f.status())
		assert.Equal(t, []string{"gate_result"}, f.events(), "the run is still logged")
	})

	t.Run("every decrement is recorded", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"false"} })
		for i, want := range []int{2, 1, 0} {
			// each run a new attempt (SPEC §7.1: an unchanged one is repeated and spends nothing)
			f.evidence("qa-engineer.json", func(m map[string]any) { m["summary"] = "attempt " + strconv.Itoa(i) })
			res := f.gate()
			require.Equal(t, vocab.VerdictFail, res.Verdict)
			assert.Equal(t, intp(want+1), res.RetryBudgetBefore, "run %d", i+1)
			assert.Equal(t, intp(want), res.RetryBudgetAfter, "run %d", i+1)
			if want > 0 {
				f.contract(func(m map[string]any) { m["status"] = "integrated" })
			}
		}
		assert.Equal(t, "escalated", f.status())
		rec, err := record.Load(f.open().Geas, testTaskDir+"/record.json")
		require.NoError(t, err)
		hist := rec.History()
		require.Len(t, hist, 3)
		require.NoError(t, record.VerifyChain(hist))
		for i, e := range hist {
			assert.Equal(t, "gate-"+strconv.Itoa(i+1), e.RunID)
			assert.Equal(t, 3-i, *e.RetryBudgetBefore)
			assert.Equal(t, 2-i, *e.RetryBudgetAfter)
		}
		assert.Equal(t, []string{"gate_result", "gate_result", "gate_result", "task_transition", "escalation"}, f.events())
	})
}
