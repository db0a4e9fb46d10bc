package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

// ledgerEvents are every event the ledger logs, each naming history entry hash: a run's (with its
// transition and escalation), an authority's entries, and a revocation with its transition.
func ledgerEvents(t *testing.T, m, task, hash string) []Event {
	t.Helper()
	run, err := runEvents(PlanInput{Mission: m, Task: task}, RunOutcome{RunID: "gate-1", Verdict: "fail", Hash: hash,
		Transition: &Move{From: vocab.Integrated, To: vocab.Verified}, Escalation: "decisions/d.json"})
	require.NoError(t, err)
	events := run
	for _, kind := range []string{KindBudgetGrant, KindHistoryReset, KindApproval} {
		ev, err := EntryEvent(m, task, HistoryEntry{Kind: kind, Hash: hash, Extra: map[string]json.RawMessage{"by": json.RawMessage(`"lead"`)}})
		require.NoError(t, err, kind)
		events = append(events, ev)
	}
	rev, err := RevocationEvent(m, task, HistoryEntry{Kind: KindRevocation, RunID: "gate-2", Hash: hash}, "verified")
	require.NoError(t, err)
	move, err := RevocationTransitionEvent(m, task, "gate-2", vocab.Verified, vocab.Integrated, hash)
	require.NoError(t, err)
	return append(events, rev, move)
}

// TestEveryEventGeasLogsIsCrossCheckedWithTheHistory: every event the ledger logs names its
// history entry and is read by the history cross-check (a forged one naming an entry the history
// does not hold is seen), and every type among them but task_transition is one only geas logs,
// which an agent is refused; an agent's own events, hash or not, are not taken for the gate's.
func TestEveryEventGeasLogsIsCrossCheckedWithTheHistory(t *testing.T) {
	root, _ := openRoot(t)
	events := ledgerEvents(t, "m1", "t1", "forgedhash")
	var types []string
	for _, ev := range events {
		require.NoError(t, AppendEvent(root, ev))
		if !slices.Contains(types, ev.EventType) {
			types = append(types, ev.EventType)
		}
	}
	for _, typ := range types {
		if typ != EventTaskTransition {
			require.Contains(t, GateEventTypes(), typ, "an event type the ledger logs is one an agent is refused")
		}
	}
	honest := []Event{
		{EventType: EventTaskTransition, MissionID: "m1", TaskID: "t1", Agent: "implementer", Data: json.RawMessage(`{"to":"reviewed","hash":"mine"}`)},
		{EventType: "note", MissionID: "m1", TaskID: "t1", Agent: "implementer", Data: json.RawMessage(`{"hash":"mine"}`)},
	}
	for _, ev := range honest {
		require.NoError(t, AppendEvent(root, ev))
	}
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			fastEvents = fast
			t.Cleanup(func() { fastEvents = true })
			got, err := TaskEventHashes(root, "m1", "t1")
			require.NoError(t, err)
			require.Len(t, got, len(events), "every event of the ledger, and no agent's own: %+v", got)
			for i, h := range got {
				require.Equal(t, events[i].EventType, h.EventType)
				require.Equal(t, "forgedhash", h.Hash)
			}
		})
	}
}
