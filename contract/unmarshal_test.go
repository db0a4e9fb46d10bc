package contract

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// oldCriterion and oldEvalCommand decode as Criterion and EvalCommand did before they skipped
// the string attempt for objects: the reference the new ones must equal.
type oldCriterion Criterion

func (c *oldCriterion) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = oldCriterion{Criterion: s}
		return nil
	}
	type plain Criterion
	return json.Unmarshal(b, (*plain)(c))
}

type oldEvalCommand EvalCommand

func (e *oldEvalCommand) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = oldEvalCommand{Run: s}
		return nil
	}
	type plain EvalCommand
	return json.Unmarshal(b, (*plain)(e))
}

// TestItemFormsDecodeAsBefore: each form of a criterion and an eval command item (string, object,
// null, and the wrong types) decodes to what it did before, error or value.
func TestItemFormsDecodeAsBefore(t *testing.T) {
	for _, doc := range []string{
		`["runs"]`, `[{"criterion": "runs", "id": "c1"}]`, `[ { "criterion" : "x" } ]`, `[null]`, `[""]`,
		`[1]`, `[true]`, `[["x"]]`, `[{"criterion": 1}]`, `[{"check": {"type": "script"}, "criterion": "y"}]`,
		`[{"run": "go test", "timeout": "1m"}]`, `["go vet"]`, `[{"run": ["x"]}]`, `["\u00e9\n"]`,
	} {
		var newC []Criterion
		var oldC []oldCriterion
		errNew, errOld := json.Unmarshal([]byte(doc), &newC), json.Unmarshal([]byte(doc), &oldC)
		assert.Equal(t, errOld == nil, errNew == nil, "criterion %s: %v / %v", doc, errOld, errNew)
		if errOld == nil {
			assert.Len(t, newC, len(oldC), doc)
			for i := range oldC {
				assert.Equal(t, Criterion(oldC[i]), newC[i], doc)
			}
		} else {
			assert.Equal(t, errOld.Error(), errNew.Error(), doc)
		}
		var newE []EvalCommand
		var oldE []oldEvalCommand
		errNew, errOld = json.Unmarshal([]byte(doc), &newE), json.Unmarshal([]byte(doc), &oldE)
		assert.Equal(t, errOld == nil, errNew == nil, "eval command %s: %v / %v", doc, errOld, errNew)
		if errOld == nil {
			assert.Len(t, newE, len(oldE), doc)
			for i := range oldE {
				assert.Equal(t, EvalCommand(oldE[i]), newE[i], doc)
			}
		} else {
			assert.Equal(t, errOld.Error(), errNew.Error(), doc)
		}
	}
}
