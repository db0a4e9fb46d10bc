package gate

import (
	"encoding/json"
	"fmt"

	"github.com/geas-dev/geas/record"
)

// EventAgentStop is the event a stop hook logs when the hook input names the agent that stops: a
// geas v1 event (event_type, mission_id, task_id, agent, data) beside the gate's own, which
// names no history entry (no data.hash), so histories written before it verify as they did.
const EventAgentStop = "agent_stop"

// StopAgent is the agent a Stop or SubagentStop hook input names (CallerAgent says which inputs
// carry agent_type and agent_id); the zero value names none (the main session).
type StopAgent struct {
	Event string // hook_event_name: Stop, SubagentStop
	Type  string // agent_type as given ("geas:software-engineer")
	ID    string // agent_id
}

// logAgentStop appends an agent_stop event for the stop h answered, when a names an agent: who
// stopped, and the gate's answer (the run and its verdict, or the state that ended the work
// without a run). The record is attributed, not authenticated, as every event is; the hook's
// answer does not depend on it, so a log that cannot be written is a note of the run, not an
// error.
func logAgentStop(t Task, a StopAgent, h *HookCheck) {
	if a.Type == "" && a.ID == "" {
		return
	}
	data := map[string]string{"hook_event_name": a.Event, "agent_type": a.Type, "agent_id": a.ID, "state": string(h.State)}
	if h.Result != nil {
		data["run_id"], data["verdict"] = h.Result.RunID, string(h.Result.Verdict)
	}
	for k, v := range data {
		if v == "" {
			delete(data, k)
		}
	}
	b, _ := json.Marshal(data)
	agent := a.Type
	if agent == "" {
		agent = a.ID
	}
	err := record.AppendEvent(t.Project.Geas, record.Event{EventType: EventAgentStop, MissionID: t.Mission, TaskID: t.ID, Agent: agent, Data: b})
	if err != nil && h.Result != nil {
		h.Result.Notes = append(h.Result.Notes, fmt.Sprintf("the %s event naming %s was not logged: %v", EventAgentStop, agent, err))
	}
}
