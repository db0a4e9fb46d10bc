package tiers

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// TestAPolicyRaisesALimitAtMostFourfold (SPEC §10): every size limit may be lowered, and raised up
// to four times its default; one byte more is policy_invalid naming the value and the ceiling.
func TestAPolicyRaisesALimitAtMostFourfold(t *testing.T) {
	t.Parallel()
	defaults := map[string]int64{
		"max_evidence_bytes":       evidence.DefaultMaxBytes,
		"max_total_evidence_bytes": evidence.DefaultMaxTotalBytes,
		"max_contract_bytes":       contract.DefaultMaxBytes,
		"max_record_bytes":         record.DefaultMaxBytes,
		"max_history_bytes":        record.DefaultMaxHistoryBytes,
	}
	get := map[string]func(policy.Policy) int64{
		"max_evidence_bytes":       func(p policy.Policy) int64 { return p.MaxEvidenceBytes },
		"max_total_evidence_bytes": func(p policy.Policy) int64 { return p.MaxTotalEvidenceBytes },
		"max_contract_bytes":       func(p policy.Policy) int64 { return p.MaxContractBytes },
		"max_record_bytes":         func(p policy.Policy) int64 { return p.MaxRecordBytes },
		"max_history_bytes":        func(p policy.Policy) int64 { return p.MaxHistoryBytes },
	}
	for key, def := range defaults {
		t.Run(key, func(t *testing.T) {
			assert.Equal(t, def, get[key](policy.Default()), "the default of SPEC §10")
			for _, v := range []int64{1024, def / 2, def, 4 * def} {
				p, err := policy.Parse("gate-policy.json", fmt.Appendf(nil, `{%q: %d}`, key, v))
				require.NoError(t, err, "%s %d is allowed", key, v)
				assert.Equal(t, v, get[key](p))
			}
			for _, v := range []int64{4*def + 1, 1 << 40} {
				_, err := policy.Parse("gate-policy.json", fmt.Appendf(nil, `{%q: %d}`, key, v))
				var ve *schemas.ValidationError
				require.ErrorAs(t, err, &ve, "%s %d is above the ceiling", key, v)
				assert.Contains(t, err.Error(), fmt.Sprintf("%s %d is above its ceiling %d (4 × the default %d)", key, v, 4*def, def))
				assert.Contains(t, err.Error(), "/"+key)
			}
			_, err := policy.Parse("gate-policy.json", fmt.Appendf(nil, `{%q: 1023}`, key))
			assert.Error(t, err, "below the schema minimum")
		})
	}
}

// TestARaiseBeyondTheCeilingIsPolicyInvalid: the gate answers a policy that raises a limit too far
// with error policy_invalid, naming the value and the ceiling.
func TestARaiseBeyondTheCeilingIsPolicyInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	policyInBase(f, `{"max_evidence_bytes": 1073741824}`)
	_, res, _ := f.evaluate()
	assertNotPass(t, res, vocab.VerdictError, vocab.CausePolicyInvalid)
	c := findCheck(t, res.Checks, "policy_valid")
	assert.Contains(t, c.Evidence, "max_evidence_bytes 1073741824 is above its ceiling 67108864")
}

// TestTheContractAndRecordLimitsFollowThePolicy: a contract or a record over the effective limit
// is invalid, naming its size and the limit; the default limit is 4 MiB for each.
func TestTheContractAndRecordLimitsFollowThePolicy(t *testing.T) {
	t.Parallel()
	t.Run("contract over a lowered limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		policyInBase(f, `{"max_contract_bytes": 1024}`)
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseContractInvalid)
		size := len(f.read(taskFile("contract.json")))
		assert.Contains(t, findCheck(t, res.Checks, "contract_valid").Evidence,
			fmt.Sprintf(".geas/missions/m1/tasks/t1/contract.json: %d bytes exceeds the limit of 1024 bytes (max_contract_bytes", size))
	})
	t.Run("contract over the default limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["title"] = strings.Repeat("x", 5<<20) })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseContractInvalid)
		assert.Contains(t, findCheck(t, res.Checks, "contract_valid").Evidence, "exceeds the limit of 4194304 bytes (max_contract_bytes")
	})
	t.Run("contract within a raised limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		policyInBase(f, `{"max_contract_bytes": 8388608}`)
		f.contract(func(m map[string]any) { m["title"] = strings.Repeat("x", 5<<20) })
		in := f.gather()
		require.NoError(t, in.ContractErr)
	})
	t.Run("record over a lowered limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		policyInBase(f, `{"max_record_bytes": 1024}`)
		f.record(func(m map[string]any) {
			sc := m["self_check"].(map[string]any)
			sc["summary"] = strings.Repeat("y", 2048)
		})
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseRecordInvalid)
		assert.Contains(t, findCheck(t, res.Checks, "record_valid").Evidence, "load record: .geas/missions/m1/tasks/t1/record.json: ")
		assert.Contains(t, findCheck(t, res.Checks, "record_valid").Evidence, "exceeds the limit of 1024 bytes (max_record_bytes")
	})
}

// TestACompactResultFitsTheRecord: with max_record_bytes lowered, a run whose result does not fit
// is recorded as an error (result_too_large) in compact form, within the limit; the next run reads
// the record, and an error spends no retry. (What agents write cannot make a result this large:
// their checks are bounded, SPEC §7.1; the limit here is lowered below what bounded checks of a
// large contract take.)
func TestACompactResultFitsTheRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	policyInBase(f, `{"max_record_bytes": 12288}`)
	f.contract(func(m map[string]any) {
		criteria := make([]any, 2000)
		for i := range criteria {
			criteria[i] = fmt.Sprintf("criterion %d holds %s", i, strings.Repeat("z", 40))
		}
		m["acceptance_criteria"] = criteria
	})
	for run := 1; run <= 2; run++ {
		res := f.gate()
		assertNotPass(t, res, vocab.VerdictError, vocab.CauseResultTooLarge)
		assert.Equal(t, vocab.CauseResultTooLarge, res.Causes[0].Code)
		assert.Equal(t, res.RetryBudgetBefore, res.RetryBudgetAfter, "an error spends nothing")
		assert.LessOrEqual(t, len(res.Checks), 101)
		assert.Contains(t, res.Causes[0].Detail, "over its limit of 12288 bytes (max_record_bytes)")
		fi, err := os.Stat(f.path(taskFile("record.json")))
		require.NoError(t, err)
		// The history is still kept in record.json here; it has its own limit.
		rec := f.gather()
		require.NoError(t, rec.RecordErr, "run %d: the record reads back", run)
		assert.LessOrEqual(t, fi.Size()-historySectionBytes(rec.Facts), int64(12288))
		assert.Equal(t, "pass", string(findCheck(t, f.evaluateChecks(), "record_valid").Status))
	}
}

func (f *fixture) evaluateChecks() []Check {
	_, res, _ := f.evaluate()
	return res.Checks
}

// TestATransitionNeverTakesTheContractPastItsLimit: a contract exactly at max_contract_bytes that
// a pass would move to verified (adding updated_at) is not written over the limit; the refusal
// comes before anything of the run is written, so record.json is untouched.
func TestATransitionNeverTakesTheContractPastItsLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	policyInBase(f, `{"max_contract_bytes": 4096}`)
	f.contract(func(m map[string]any) { m["title"] = "t" })
	size := len(f.read(taskFile("contract.json")))
	require.Less(t, size, 4096)
	f.contract(func(m map[string]any) { m["title"] = "t" + strings.Repeat("x", 4096-size) })
	require.Len(t, f.read(taskFile("contract.json")), 4096, "the contract is exactly at its limit")
	recordBefore := f.read(taskFile("record.json"))

	in, res, escalate := f.evaluate(Options{DryRun: false, Now: testNow})
	require.True(t, res.Verdict.IsPass(), "causes %+v", res.Causes)
	require.NotNil(t, res.Transition)
	err := Apply(in, res, escalate, nil, testNow)
	require.Error(t, err)
	assert.Regexp(t, `contract\.json: \d+ bytes would exceed the limit of 4096 bytes that the gate reads back \(max_contract_bytes\): nothing of this run was written`, err.Error())
	assert.Equal(t, string(recordBefore), string(f.read(taskFile("record.json"))), "record.json is untouched")
	assert.Len(t, f.read(taskFile("contract.json")), 4096, "contract.json is untouched")
}
