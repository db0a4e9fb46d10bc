package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
)

// digestOf returns the rules digest of a contract and a policy given as raw documents.
func digestOf(t *testing.T, contractRaw, policyRaw string) string {
	t.Helper()
	in := &Snapshot{Contract: &contract.Contract{Raw: []byte(contractRaw)}}
	if policyRaw != "" {
		in.PolicyRaw = []byte(policyRaw)
	}
	_, sum, err := rulesOf(in)
	require.NoError(t, err)
	return sum
}

func TestTheSchemaKeyIsNotARule(t *testing.T) {
	plain := digestOf(t, `{"task_id":"t1","eval_commands":["go test ./..."]}`, `{"stub_cap":{"low":1}}`)
	// Bound to a schema, or rebound elsewhere, in the contract or in the policy: the same rules,
	// and the same digest as a file that names no schema (so existing pins stay valid).
	assert.Equal(t, plain, digestOf(t, `{"$schema":"a.json","task_id":"t1","eval_commands":["go test ./..."]}`, `{"stub_cap":{"low":1}}`))
	assert.Equal(t, plain, digestOf(t, `{"$schema":"b.json","task_id":"t1","eval_commands":["go test ./..."]}`, `{"$schema":"p.json","stub_cap":{"low":1}}`))
	// Control: a change of a rule beside it is a change of the rules.
	assert.NotEqual(t, plain, digestOf(t, `{"$schema":"a.json","task_id":"t1","eval_commands":["true"]}`, `{"stub_cap":{"low":1}}`))
	assert.NotEqual(t, plain, digestOf(t, `{"task_id":"t1","eval_commands":["go test ./..."]}`, `{"$schema":"p.json","stub_cap":{"low":2}}`))
	// Only the top-level key is left out: a "$schema" below it (which the schema refuses) or a
	// case-folded "$Schema" would be a rule.
	assert.NotEqual(t, plain, digestOf(t, `{"$Schema":"a.json","task_id":"t1","eval_commands":["go test ./..."]}`, `{"stub_cap":{"low":1}}`))
	assert.NotEqual(t, plain, digestOf(t, `{"task_id":"t1","eval_commands":["go test ./..."]}`, `{"stub_cap":{"low":1,"$schema":"x"}}`))
}
