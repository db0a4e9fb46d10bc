package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

func newTaskCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("task", "Show a task, move it through its states, and write its record")
	recordCmd := groupCmd("record", "Write sections of a task's record.json")
	recordCmd.AddCommand(newTaskRecordAddCmd(g))
	c.AddCommand(newTaskNewCmd(g), newTaskShowCmd(g), newTaskTransitionCmd(g), recordCmd, newTaskBudgetCmd(g), newTaskApproveCmd(g), newTaskHistoryCmd(g), newTaskIntegrateCmd(g), newTaskCurrentCmd(g), newTaskRevalidateCmd(g))
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

// taskStatus is what geas task show prints and the MCP tool geas_task_status returns.
type taskStatus = gate.TaskStatus

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
	return gate.LoadTaskStatus(t.ref())
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
