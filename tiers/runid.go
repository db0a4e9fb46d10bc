package tiers

import (
	"encoding/json"
	"fmt"

	"github.com/geas-dev/geas/record"
)

// NextRunID is the id of the next run of a task: gate-N, N one more than the runs so far. After a
// history reset the numbering goes on from the runs of the discarded history (the reset entry's
// superseded_runs), so a run id, and its log directory, is never used twice.
func NextRunID(rec *record.Record) string {
	n := 0
	if rec != nil {
		for i, e := range rec.History() {
			if e.IsGateRun() {
				n++
			}
			if i == 0 && e.Kind == record.KindHistoryReset {
				var prior int
				if raw, ok := e.Extra["superseded_runs"]; ok && json.Unmarshal(raw, &prior) == nil && prior > 0 {
					n += prior
				}
			}
		}
	}
	return fmt.Sprintf("gate-%d", n+1)
}
