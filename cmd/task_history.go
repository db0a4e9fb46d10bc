package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// historyProblems is what does not verify in an opened task's gate history (tiers.HistoryProblems:
// chain, HMAC under GEAS_GATE_KEY, budget arithmetic, task_id, gate_result, events). Companion
// commands check it before they use the history: task show, budget grant, task transition.
func historyProblems(t *taskRef, rec *record.Record) []string {
	in := &tiers.Input{ProjectDir: t.p.Dir, Root: t.p.Root, Geas: t.p.Geas, Mission: t.mission, Task: t.task, TaskDir: t.dir, Record: rec}
	return tiers.HistoryProblems(in, record.SigningKey())
}

// errTampered is the refusal of a command that would build on a history that does not verify.
func errTampered(t *taskRef, problems []string) error {
	return fmt.Errorf("task %s: the gate history does not verify, so it is not built on: %s; an authority starts a new one with geas task history reset --task %s --by AUTHORITY --reason TEXT",
		t.task, strings.Join(problems, "; "), t.task)
}

type taskHistoryResetOptions struct {
	mission, task, by, reason string
	retries                   int
}

func newTaskHistoryCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("history", "Manage a task's gate history")
	var o taskHistoryResetOptions
	reset := &cobra.Command{
		Use:   "reset --task T --by AUTHORITY --reason TEXT [--retries N]",
		Short: "Start a new gate history after history_tampered (authorities only)",
		Long: `When a task's gate history does not verify (geas gate answers error history_tampered,
geas gate verify says tampered), the gate builds nothing on it: no run is recorded and no
budget is computed. An authority (orchestration-authority, product-authority or
design-authority, or an agent named after one) resets it:

  - the whole record.json as it was is kept aside, next to it, as
    record.json.reset-YYYYMMDDTHHMMSSZ (never overwritten), to be investigated;
  - gate_result is removed and gate_history starts over with one history_reset entry that
    records who reset it and why, what did not verify, the hashes of the discarded history
    (so the task's old events still cross-check), and the budget it grants: --retries N,
    0..100, default 0 (a task at 0 re-enters the gate only after geas task budget grant);
  - the entry carries the HMAC of GEAS_GATE_KEY when it is set.

A history that verifies is not reset (exit 1). The task's state is not changed.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskHistoryReset(c, g, o) },
	}
	reset.Flags().StringVar(&o.task, "task", "", "task id")
	reset.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	reset.Flags().StringVar(&o.by, "by", "", "the authority resetting it, e.g. orchestration-authority")
	reset.Flags().StringVar(&o.reason, "reason", "", "why")
	reset.Flags().IntVar(&o.retries, "retries", 0, "retries the new history starts with, 0..100")
	c.AddCommand(reset)
	return c
}

// checkAuthority refuses --by values that are not an authority (SPEC §9).
func checkAuthority(by, what string) error {
	if by == "" {
		return usagef("--by is required")
	}
	if err := project.ValidateID("agent", by); err != nil {
		return &usageError{err: err}
	}
	if t := evidence.AgentType(by, evidence.GeasAgentTypes); !slices.Contains(authorities, t) {
		return fmt.Errorf("%s may not %s: only %s can", by, what, strings.Join(authorities, ", "))
	}
	return nil
}

func runTaskHistoryReset(c *cobra.Command, g *globalOptions, o taskHistoryResetOptions) error {
	switch {
	case o.task == "":
		return usagef("--task is required")
	case o.retries < 0 || o.retries > record.MaxGrant:
		return usagef("--retries must be 0..%d, not %d", record.MaxGrant, o.retries)
	case strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required")
	}
	if err := checkAuthority(o.by, "reset a gate history"); err != nil {
		return err
	}
	t, err := g.openLockedTask(c.Context(), o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	now := time.Now()
	name, rec, err := t.loadRecord(now)
	if err != nil {
		return fmt.Errorf("task %s: record.json cannot be read, so its history cannot be reset: %w", t.task, err)
	}
	problems := historyProblems(t, rec)
	if len(problems) == 0 {
		return fmt.Errorf("task %s: the gate history verifies (%d entries); there is nothing to reset", t.task, len(rec.History()))
	}
	old, err := rec.Bytes()
	if err != nil {
		return err
	}
	aside, err := keepAside(t, name, old, now)
	if err != nil {
		return err
	}
	// The discarded history itself, beside it, as it was (a torn last line included).
	histName := t.dir + "/" + record.HistoryFile
	if data, err := fsutil.ReadLimited(t.p.Geas, histName, record.MaxHistoryBytes); err == nil {
		if _, err := keepAside(t, histName, data, now); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("task %s: keep the old history aside: %w", t.task, err)
	}

	// Every hash the discarded history and the task's events name: the task's old events must
	// still cross-check against the new chain.
	seen := map[string]bool{}
	runs := 0
	for _, e := range rec.History() {
		seen[e.Hash] = true
		if e.Kind == "" || e.Kind == record.KindGateRun {
			runs++
		}
	}
	events, err := record.TaskEventHashes(t.p.Geas, t.mission, t.task)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.task, err)
	}
	for _, ev := range events {
		seen[ev.Hash] = true
		if n, ok := strings.CutPrefix(ev.RunID, "gate-"); ok {
			if v, err := strconv.Atoi(n); err == nil && v > runs && v <= 1<<20 {
				runs = v // run ids go on after the highest one ever logged, so no log dir is reused
			}
		}
	}
	delete(seen, "")
	superseded := make([]string, 0, len(seen))
	for h := range seen {
		superseded = append(superseded, h)
	}
	slices.Sort(superseded)
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	retries := o.retries
	entry, err := rec.ResetHistory(record.HistoryEntry{
		Kind: record.KindHistoryReset, RunID: "reset", StartedAt: record.Timestamp(now), RetryBudgetAfter: &retries,
		Extra: map[string]json.RawMessage{
			"by": jsonString(o.by), "reason": jsonString(o.reason), "retries": raw(o.retries),
			"kept_aside": jsonString(".geas/" + aside), "problems": raw(problems),
			"superseded_hashes": raw(superseded), "superseded_runs": raw(runs),
		},
	}, t.task, now)
	if err != nil {
		return err
	}
	if err := rec.Write(t.p.Geas, name); err != nil {
		return err
	}
	data := fmt.Appendf(nil, `{"by":%s,"reason":%s,"retries":%d,"kept_aside":%s,"hash":%s}`,
		jsonString(o.by), jsonString(o.reason), o.retries, jsonString(".geas/"+aside), jsonString(entry.Hash))
	if err := record.AppendEvent(t.p.Geas, record.Event{EventType: record.KindHistoryReset, MissionID: t.mission, TaskID: t.task, Agent: o.by, Data: data}); err != nil {
		return fmt.Errorf("history reset, but the event was not logged: %w", err)
	}
	out := map[string]any{"mission_id": t.mission, "task_id": t.task, "by": o.by, "retries": o.retries,
		"kept_aside": ".geas/" + aside, "problems": problems, "hash": entry.Hash}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "task %s: gate history reset by %s with %d retries; the old record is kept as .geas/%s\n", t.task, o.by, o.retries, aside)
		for _, p := range problems {
			fmt.Fprintf(w, "  did not verify: %s\n", p)
		}
	})
}

// keepAside writes the old record next to record.json under a name that is never overwritten.
func keepAside(t *taskRef, name string, data []byte, now time.Time) (string, error) {
	base := name + ".reset-" + now.UTC().Format("20060102T150405Z")
	for i := 1; i <= 100; i++ {
		aside := base
		if i > 1 {
			aside = fmt.Sprintf("%s.%d", base, i)
		}
		if _, err := t.p.Geas.Lstat(aside); err == nil {
			continue
		}
		if err := fsutil.WriteFileAtomic(t.p.Geas, aside, data, 0o644); err != nil {
			return "", fmt.Errorf("keep %s aside: %w", path.Base(name), err)
		}
		return aside, nil
	}
	return "", fmt.Errorf("keep %s aside: %s.* all exist", path.Base(name), base)
}
