package schemas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withKey returns the minimal valid fixture of kind k with key set to value at the top level, and
// the shape of a reader of that fixture (its top-level keys, as a struct would read them).
func withKey(t *testing.T, k Kind, key string, value any) ([]byte, *Shape) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(readFixture(t, k, "valid-minimal.json"), &doc))
	fields := map[string]*Shape{}
	for name := range doc {
		fields[name] = nil
	}
	doc[key] = value
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b, Object(fields)
}

// decodeUser reads data as geas reads a file of kind k: the case-folding check, then the schema.
func decodeUser(k Kind, data []byte, s *Shape) error {
	doc, err := DecodeShaped(k, "f.json", data, s)
	if err != nil {
		return err
	}
	return ValidateValue(k, "f.json", doc)
}

func TestAUserWrittenFileMayNameItsSchema(t *testing.T) {
	for _, k := range UserWritten() {
		t.Run(string(k), func(t *testing.T) {
			data, s := withKey(t, k, SchemaKey, "./"+string(k)+".schema.json")
			assert.NoError(t, decodeUser(k, data, s))
			data, s = withKey(t, k, SchemaKey, strings.Repeat("x", 2048))
			assert.NoError(t, decodeUser(k, data, s), "2048 characters is the bound")
		})
	}
}

func TestOnlyTheExactSchemaKeyIsAccepted(t *testing.T) {
	for _, k := range UserWritten() {
		t.Run(string(k), func(t *testing.T) {
			// A key that is "$schema" only under case folding (Unicode's long s folds to s) is
			// refused as a near miss, open object (evidence) or closed.
			for _, key := range []string{"$Schema", "$SCHEMA", "$ſchema"} {
				data, s := withKey(t, k, key, "x.json")
				err := decodeUser(k, data, s)
				require.Error(t, err, key)
				assert.Contains(t, err.Error(), `differs from the field "$schema" only by letter case`, key)
			}
			data, s := withKey(t, k, SchemaKey, 42)
			err := decodeUser(k, data, s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/$schema: expected string")
			data, s = withKey(t, k, SchemaKey, strings.Repeat("x", 2049))
			err = decodeUser(k, data, s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/$schema: ")
			if k == Evidence {
				return // an open object: other keys are its own business
			}
			data, s = withKey(t, k, "$schema ", "x.json")
			err = decodeUser(k, data, s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `unknown field "$schema " (not in the schema; a file names its schema with "$schema" exactly)`)
			// Read by the schema alone (geas validate of a gate policy, a decision, a debt
			// register), "$Schema" is an unknown field that says which key was meant.
			data, _ = withKey(t, k, "$Schema", "x.json")
			err = Validate(k, "f.json", data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `/$Schema: unknown field "$Schema" (not in the schema; a file names its schema with "$schema" exactly)`)
		})
	}
}

func TestGeasOwnFilesDoNotTakeASchemaKey(t *testing.T) {
	for _, k := range []Kind{Record, Event} {
		t.Run(string(k), func(t *testing.T) {
			assert.NotContains(t, UserWritten(), k)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(readFixture(t, k, "valid-minimal.json"), &doc))
			require.NoError(t, ValidateValue(k, "f.json", doc), "control: the fixture is valid")
			doc[SchemaKey] = "x.json"
			err := ValidateValue(k, "f.json", doc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `unknown field "$schema"`)
		})
	}
}

func TestTheSchemaKeyLeavesTheReaderShapeAlone(t *testing.T) {
	s := Object(map[string]*Shape{"a": nil})
	ws := withSchemaKey(Contract, s)
	assert.Contains(t, ws.Fields, SchemaKey)
	assert.NotContains(t, s.Fields, SchemaKey, "the caller's shape is not changed")
	assert.Same(t, s, withSchemaKey(Record, s), "record takes no $schema")
	assert.Same(t, s, withSchemaKey("", s), "a file read without a schema takes none")
}
