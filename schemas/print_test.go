package schemas

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryRefTargetIsPrintable: geas schema prints every schema another one refers to, _defs
// included (task-contract's "_defs.schema.json#/$defs/agentType" must be readable by a user).
func TestEveryRefTargetIsPrintable(t *testing.T) {
	targets, err := RefTargets()
	require.NoError(t, err)
	require.Contains(t, targets, "_defs.schema.json", "the schemas refer to _defs")
	for _, file := range targets {
		k, ok := ParsePrintable(file)
		require.True(t, ok, "$ref target %s is not printable", file)
		assert.Contains(t, Printable(), k)
		src, err := Source(k)
		require.NoError(t, err)
		var doc struct {
			ID string `json:"$id"`
		}
		require.NoError(t, json.Unmarshal(src, &doc))
		assert.Equal(t, file, doc.ID, "the schema printed for %s is that file", file)
	}
}

func TestParsePrintable(t *testing.T) {
	for _, name := range []string{"_defs", "defs", "_defs.schema.json", "_defs.json"} {
		k, ok := ParsePrintable(name)
		assert.True(t, ok, name)
		assert.Equal(t, Defs, k, name)
	}
	for _, name := range []string{"_Defs", "__defs", "_defs.schema.json.bak", "../_defs", ""} {
		_, ok := ParsePrintable(name)
		assert.False(t, ok, name)
	}
	k, ok := ParsePrintable("contract")
	assert.True(t, ok)
	assert.Equal(t, Contract, k)
	assert.NotContains(t, Kinds(), Defs, "no file is validated against _defs")
}

// TestFormatVersion reads the geas v1.0 format version from the schemas themselves.
func TestFormatVersion(t *testing.T) {
	for _, k := range []Kind{Contract, Record, Evidence, DebtRegister, Decision} {
		assert.Equal(t, "1.0", FormatVersion(k), k)
	}
	assert.Empty(t, FormatVersion(GatePolicy), "the gate policy has no version field")
	assert.Empty(t, FormatVersion(Kind("nope")))
}
