package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/record"
)

func newTaskCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("task", "Show a task, move it through its states, and write its record")
	recordCmd := groupCmd("record", "Write sections of a task's record.json")
	recordCmd.AddCommand(newTaskRecordAddCmd(g))
	c.AddCommand(newTaskNewCmd(g), newTaskShowCmd(g), newTaskTransitionCmd(g), recordCmd, newTaskBudgetCmd(g), newTaskApproveCmd(g), newTaskHistoryCmd(g), newTaskIntegrateCmd(g))
	return c
}

type taskShowOptions struct {
	mission, task string
}

func newTaskShowCmd(g *globalOptions) *cobra.Command {
	var o taskShowOptions
	c := &cobra.Command{
		Use:   "show --task T [--mission M]",
		Short: "Show a task's state, retry budget left, consecutive errors and last verdict",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runTaskShow(g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	return c
}

type taskStatus struct {
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

func runTaskShow(g *globalOptions, o taskShowOptions) error {
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	st, err := loadTaskStatus(t)
	if err != nil {
		return err
	}
	return g.output(st, func(w io.Writer) {
		fmt.Fprintf(w, "task %s (mission %s): %s\n", st.TaskID, st.MissionID, st.Title)
		fmt.Fprintf(w, "  state:        %s\n", st.Status)
		fmt.Fprintf(w, "  profile:      %s, risk %s\n", st.GateProfile, st.RiskLevel)
		if st.BudgetLeft == nil {
			fmt.Fprintf(w, "  retry budget: not computed: the gate history does not verify (contract retry_budget %d)\n", st.RetryBudget)
		} else {
			fmt.Fprintf(w, "  retry budget: %d left (contract retry_budget %d)\n", *st.BudgetLeft, st.RetryBudget)
		}
		for _, p := range st.HistoryProblems {
			fmt.Fprintf(w, "  tampered:     %s\n", p)
		}
		last := st.LastVerdict
		if last == "" {
			last = "never gated"
		}
		fmt.Fprintf(w, "  last verdict: %s (%d gate runs)\n", last, st.GateRuns)
		if st.ConsecutiveErrors > 0 {
			fmt.Fprintf(w, "  errors:       %d in a row (%s)\n", st.ConsecutiveErrors, st.ConsecutiveErrorCause)
		}
		if len(st.ClaimsContradicted) > 0 {
			fmt.Fprintf(w, "  contradicted: %s\n", st.ClaimsContradicted)
		}
		fmt.Fprintf(w, "  record:       %s\n", orNone(st.RecordSections))
		fmt.Fprintf(w, "  evidence:     %s\n", orNone(st.Evidence))
		for _, e := range st.InvalidEvidence {
			fmt.Fprintf(w, "  invalid:      %s\n", e)
		}
	})
}

// loadTaskStatus reads what geas task show prints (and the MCP tool geas_task_status returns)
// for an opened task. It only reads.
func loadTaskStatus(t *taskRef) (taskStatus, error) {
	c, err := contract.Load(t.p.Geas, t.dir+"/contract.json")
	if err != nil {
		return taskStatus{}, err
	}
	st := taskStatus{
		MissionID: t.mission, TaskID: t.task, Title: c.Title, Status: string(c.Status),
		GateProfile: string(c.GateProfile), RiskLevel: string(c.RiskLevel), RetryBudget: c.RetryBudget,
		BudgetLeft: &c.RetryBudget, RecordSections: []string{}, Evidence: []string{},
	}
	rec, err := record.Load(t.p.Geas, t.dir+"/record.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No record: the task's events must still not name gate runs (a deleted record).
		st.HistoryProblems = gate.HistoryProblems(t.ref(), record.New(t.task, time.Now()))
		if len(st.HistoryProblems) > 0 {
			st.BudgetLeft = nil
		}
	case err != nil:
		return taskStatus{}, err
	default:
		left := record.BudgetLeft(c.RetryBudget, rec)
		st.BudgetLeft = &left
		if st.HistoryProblems = gate.HistoryProblems(t.ref(), rec); len(st.HistoryProblems) > 0 {
			st.BudgetLeft = nil
		}
		st.ConsecutiveErrors, st.ConsecutiveErrorCause = record.ConsecutiveErrors(rec)
		st.LastVerdict = record.LastVerdict(rec)
		st.GateRuns = len(rec.History())
		st.RecordSections = rec.Sections()
		st.ClaimsContradicted = record.ContradictedClaims(rec.History())
	}
	ok, bad, err := evidence.LoadAll(t.p.Geas, t.dir+"/evidence", 0)
	if err != nil {
		return taskStatus{}, err
	}
	for _, e := range ok {
		st.Evidence = append(st.Evidence, e.Name)
	}
	for _, e := range bad {
		st.InvalidEvidence = append(st.InvalidEvidence, e.Error())
	}
	return st, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
