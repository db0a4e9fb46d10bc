package gate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// DecisionWritten is what WriteDecision wrote.
type DecisionWritten struct {
	ID   string // the decision's artifact_id
	File string // the file written, relative to .geas
}

// WriteDecision writes a decision record of the mission (geas decision write): version,
// artifact_type and created_at are filled in when absent, artifact_id is generated when absent,
// and the record is validated against the decision schema. An existing decision of the same id is
// never overwritten. fields is the record as PayloadObject decoded it.
func WriteDecision(p *project.Project, mission string, fields map[string]json.RawMessage) (*DecisionWritten, error) {
	now := time.Now()
	defaults := map[string]any{
		"version":       "1.0",
		"artifact_type": "decision_record",
		"created_at":    record.Timestamp(now),
		"artifact_id":   newDecisionID(now),
	}
	for k, v := range defaults {
		if _, ok := fields[k]; !ok {
			fields[k], _ = json.Marshal(v)
		}
	}
	b, err := marshalOrdered(fields, []string{"version", "artifact_type", "artifact_id", "producer_type"})
	if err != nil {
		return nil, err
	}
	name, err := record.WriteDecision(p.Geas, mission, b)
	if err != nil {
		return nil, err
	}
	out := &DecisionWritten{File: name}
	_ = json.Unmarshal(fields["artifact_id"], &out.ID)
	return out, nil
}

func newDecisionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "dec-" + now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
