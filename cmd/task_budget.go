package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

type taskBudgetGrantOptions struct {
	mission, task, by, reason string
	retries                   int
}

// authorities are the agent types that may grant retries.
var authorities = []string{"orchestration-authority", "product-authority", "design-authority"}

func newTaskBudgetCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("budget", "Manage a task's retry budget")
	var o taskBudgetGrantOptions
	grant := &cobra.Command{
		Use:   "grant --task T --retries N --by AGENT --reason TEXT",
		Short: "Add retries to a task's budget (authorities only; recorded in the gate history)",
		Long: `Add N retries to the task's retry budget. Only an authority (orchestration-authority,
product-authority or design-authority, or an agent named after one, such as
design-authority-review) may grant, 1..100 retries at a time, and never above a budget of
1000. A history that does not verify is not built on (see geas task history reset). The grant is a hash-chained budget_grant entry in
record.json's gate_history, so the next gate run starts from the raised budget. The task's
state is not changed: move an escalated task back with geas task transition.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskBudgetGrant(c, g, o) },
	}
	grant.Flags().StringVar(&o.task, "task", "", "task id")
	grant.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	grant.Flags().IntVar(&o.retries, "retries", 0, "retries to add, 1..100")
	grant.Flags().StringVar(&o.by, "by", "", "the authority granting them, e.g. product-authority")
	grant.Flags().StringVar(&o.reason, "reason", "", "why")
	c.AddCommand(grant)
	return c
}

func runTaskBudgetGrant(c *cobra.Command, g *globalOptions, o taskBudgetGrantOptions) error {
	switch {
	case o.retries < 1 || o.retries > record.MaxGrant:
		return usagef("--retries must be 1..%d, not %d", record.MaxGrant, o.retries)
	case strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required")
	}
	if err := checkAuthority(o.by, "grant retries"); err != nil {
		return err
	}
	t, err := g.openLockedTask(c.Context(), o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	k, err := contract.Load(t.p.Geas, t.dir+"/contract.json")
	if err != nil {
		return err
	}
	now := time.Now()
	name, rec, err := t.loadRecord(now)
	if err != nil {
		return err
	}
	// A grant builds on the history: a history that does not verify gives no budget to add to.
	if problems := historyProblems(t, rec); len(problems) > 0 {
		return errTampered(t, problems)
	}
	before := record.BudgetLeft(k.RetryBudget, rec)
	after := before + o.retries
	if after > record.MaxBudget {
		return fmt.Errorf("task %s: a grant of %d would take the retry budget from %d to %d, above the limit of %d", t.task, o.retries, before, after, record.MaxBudget)
	}
	grant := record.HistoryEntry{
		Kind: record.KindBudgetGrant, RetryBudgetBefore: &before, RetryBudgetAfter: &after,
		StartedAt: record.Timestamp(now),
		Extra:     map[string]json.RawMessage{"by": jsonobj.String(o.by), "reason": jsonobj.String(o.reason), "retries": []byte(fmt.Sprint(o.retries))},
	}
	grant.RulesSHA256 = tiers.Gather(t.p, t.mission, t.task, t.dir).RulesSHA256 // the rules it was granted under (SPEC §4.4)
	entry, err := rec.AppendHistory(grant, now)
	if err != nil {
		return err
	}
	// The appended entry is the grant (SPEC §7.3); its event is derived from it, and logged by
	// the next command on the task if it cannot be logged now.
	if err := rec.Write(t.p.Geas, name); err != nil && !rec.Recorded(entry.Hash) {
		return err
	}
	ev, err := tiers.GrantEvent(t.mission, t.task, entry)
	if err != nil {
		return err
	}
	if err := record.AppendEvent(t.p.Geas, ev); err != nil {
		fmt.Fprintf(g.stderr, "geas: task %s: the grant is recorded, but its event was not logged (%v): the next command on the task logs it\n", t.task, err)
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "retries": o.retries, "by": o.by,
		"retry_budget_before": before, "retry_budget_after": after, "hash": entry.Hash}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: retry budget %d -> %d (granted by %s)\n", t.task, before, after, o.by)
	})
}
