package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"time"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Grant is an authority's grant of retries to a task (geas task budget grant).
type Grant struct {
	Retries    int    // 1..record.MaxGrant
	By, Reason string // the authority, and why
}

// Granted is what GrantRetries recorded.
type Granted struct {
	Before, After int      // the retry budget left before and after the grant
	Hash          string   // the budget_grant entry's hash
	Notes         []string // what was completed first, or could not be written after the entry
}

// GrantRetries adds g.Retries to the task's retry budget: a hash-chained budget_grant entry in
// the gate history, under the task lock, so the next gate run starts from the raised budget. Only
// an authority grants, never above record.MaxBudget, and never on a history that does not verify.
// The task's state is not changed. The result is never nil: its notes stand also with an error.
func GrantRetries(ctx context.Context, t Task, g Grant) (*Granted, error) {
	out := &Granted{}
	lock, notes, err := lockAs(ctx, t, g.By, "grant retries")
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	// One snapshot of the task: the contract's budget, the record, and the rules the grant is made
	// under (SPEC §4.4).
	in := tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir)
	if in.ContractErr != nil {
		return out, in.ContractErr
	}
	if in.RecordErr != nil {
		return out, in.RecordErr
	}
	k, rec, name := in.Contract, in.Record, path.Join(t.Dir, record.RecordFile)
	now := time.Now()
	rec.Guard(lock.Held) // SPEC §7.3: nothing is written once the lock file is replaced
	if problems := HistoryProblems(t, rec); len(problems) > 0 {
		return out, errTampered(t, problems)
	}
	out.Before = record.BudgetLeft(k.RetryBudget, rec)
	out.After = out.Before + g.Retries
	if out.After > record.MaxBudget {
		return out, fmt.Errorf("task %s: a grant of %d would take the retry budget from %d to %d, above the limit of %d", t.ID, g.Retries, out.Before, out.After, record.MaxBudget)
	}
	grant := record.HistoryEntry{
		Kind: record.KindBudgetGrant, RetryBudgetBefore: &out.Before, RetryBudgetAfter: &out.After,
		StartedAt: record.Timestamp(now),
		Extra:     map[string]json.RawMessage{"by": jsonString(g.By), "reason": jsonString(g.Reason), "retries": []byte(fmt.Sprint(g.Retries))},
	}
	grant.RulesSHA256 = in.RulesSHA256 // the rules it was granted under (SPEC §4.4)
	entry, err := rec.AppendHistory(grant, now)
	if err != nil {
		return out, err
	}
	// The appended entry is the grant (SPEC §7.3); its event is derived from it, and logged by
	// the next command on the task if it cannot be logged now.
	if err := rec.Write(t.Project.Geas, name); err != nil && !rec.Recorded(entry.Hash) {
		return out, err
	}
	out.Hash = entry.Hash
	plan, err := record.PlanEntry(t.Mission, t.ID, t.Dir, entry)
	if err != nil {
		return out, err
	}
	if err := (&record.Ledger{Geas: t.Project.Geas, Held: lock.Held, Now: now}).Apply(plan, record.Found{}).Err(); err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("the grant is recorded, but its event was not logged (%v): the next command on the task logs it", err))
	}
	return out, nil
}
