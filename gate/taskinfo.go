package gate

import (
	"errors"
	"io/fs"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// TaskStatus is what geas task show prints (and the MCP tool geas_task_status returns): a task's
// state, retry budget left, consecutive errors and last verdict.
type TaskStatus struct {
	MissionID             string   `json:"mission_id"`
	TaskID                string   `json:"task_id"`
	Title                 string   `json:"title"`
	Status                string   `json:"status"`
	GateProfile           string   `json:"gate_profile"`
	RiskLevel             string   `json:"risk_level"`
	RetryBudget           int      `json:"retry_budget"`
	BudgetLeft            *int     `json:"budget_left"` // null when the history does not verify
	ConsecutiveErrors     int      `json:"consecutive_errors"`
	ConsecutiveErrorCause string   `json:"consecutive_error_cause,omitempty"`
	LastVerdict           string   `json:"last_verdict"`
	GateRuns              int      `json:"gate_runs"`
	RecordSections        []string `json:"record_sections"`
	Evidence              []string `json:"evidence"`
	InvalidEvidence       []string `json:"invalid_evidence,omitempty"`
	HistoryProblems       []string `json:"history_problems,omitempty"`
	// ClaimsContradicted counts, per agent, the claims of its evidence that the gate's own
	// measurements contradicted over the task's history (SPEC §5.2a.7).
	ClaimsContradicted record.ClaimTally `json:"claims_contradicted,omitempty"`
}

// LoadTaskStatus reads the task's status. It only reads.
func LoadTaskStatus(t Task) (TaskStatus, error) {
	c, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	if err != nil {
		return TaskStatus{}, err
	}
	st := TaskStatus{
		MissionID: t.Mission, TaskID: t.ID, Title: c.Title, Status: string(c.Status),
		GateProfile: string(c.GateProfile), RiskLevel: string(c.RiskLevel), RetryBudget: c.RetryBudget,
		BudgetLeft: &c.RetryBudget, RecordSections: []string{}, Evidence: []string{},
	}
	rec, err := record.Load(t.Project.Geas, t.Dir+"/"+record.RecordFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No record: the task's events must still not name gate runs (a deleted record).
		st.HistoryProblems = HistoryProblems(t, record.New(t.ID, time.Now()))
		if len(st.HistoryProblems) > 0 {
			st.BudgetLeft = nil
		}
	case err != nil:
		return TaskStatus{}, err
	default:
		left := record.BudgetLeft(c.RetryBudget, rec)
		st.BudgetLeft = &left
		if st.HistoryProblems = HistoryProblems(t, rec); len(st.HistoryProblems) > 0 {
			st.BudgetLeft = nil
		}
		st.ConsecutiveErrors, st.ConsecutiveErrorCause = record.ConsecutiveErrors(rec)
		st.LastVerdict = record.LastVerdict(rec)
		st.GateRuns = len(rec.History())
		st.RecordSections = rec.Sections()
		st.ClaimsContradicted = record.ContradictedClaims(rec.History())
	}
	ok, bad, err := evidence.LoadAll(t.Project.Geas, t.Dir+"/evidence", 0)
	if err != nil {
		return TaskStatus{}, err
	}
	for _, e := range ok {
		st.Evidence = append(st.Evidence, e.Name)
	}
	for _, e := range bad {
		st.InvalidEvidence = append(st.InvalidEvidence, e.Error())
	}
	return st, nil
}

// TaskState is the state the task's contract names, for completions and listings; an error when
// the contract cannot be read.
func TaskState(t Task) (vocab.State, error) {
	c, err := contract.Load(t.Project.Geas, t.Dir+"/"+record.ContractFile)
	if err != nil {
		return "", err
	}
	return c.Status, nil
}
