package contract

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestANumberTooLargeIsReportedAsBefore: a contract whose number cannot be held (a retry_budget of
// 1e400, a stub_cap of 2^64) is invalid, and the evidence names the field as geas always named it,
// with no type name of the decoder's in it: what a user reads does not change with the code's
// shape. The control: the example contract parses.
func TestANumberTooLargeIsReportedAsBefore(t *testing.T) {
	_, err := Parse("example.json", readFixture(t, "example.json"))
	require.NoError(t, err, "control")
	for field, value := range map[string]string{"retry_budget": "1e400", "stub_cap": "18446744073709551616"} {
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(readFixture(t, "example.json"), &doc))
		doc[field] = json.RawMessage(value)
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		_, err = Parse("contract.json", data)
		require.Error(t, err, field)
		assert.Contains(t, err.Error(), "into Go struct field .Contract."+field+" of type int", field)
	}
}
