package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
)

// Reset is an authority's reset of a gate history that does not verify (geas task history reset).
type Reset struct {
	By, Reason string // the authority, and why
	Retries    int    // the budget the new history starts with, 0..record.MaxGrant
}

// ResetDone is what ResetHistory recorded.
type ResetDone struct {
	KeptAside string   // the old record.json, kept aside, relative to .geas
	Problems  []string // what did not verify
	Hash      string   // the history_reset entry's hash
	Notes     []string // what was completed first
}

// ResetHistory starts a new gate history for a task whose history does not verify, under the
// task lock: the whole record.json as it was (and the history file) is kept aside, never
// overwritten; gate_result is removed and the history starts over with one history_reset entry
// that records who reset it and why, what did not verify, the hashes of the discarded history (so
// the task's old events still cross-check) and the budget r grants. A history that verifies is
// not reset. The task's state is not changed. The result is never nil: its notes stand also with
// an error.
func ResetHistory(ctx context.Context, t Task, r Reset) (*ResetDone, error) {
	out := &ResetDone{}
	lock, notes, err := lockAs(ctx, t, r.By, "reset a gate history")
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	now := time.Now()
	name, rec, err := LoadRecord(t, now)
	if err != nil {
		return out, fmt.Errorf("task %s: record.json cannot be read, so its history cannot be reset: %w", t.ID, err)
	}
	rec.Guard(lock.Held) // SPEC §7.3: nothing is written once the lock file is replaced
	if out.Problems = HistoryProblems(t, rec); len(out.Problems) == 0 {
		entries := fmt.Sprintf("%d entries", len(rec.History()))
		if len(rec.History()) == 1 {
			entries = "1 entry"
		}
		return out, fmt.Errorf("task %s: the gate history verifies (%s); there is nothing to reset", t.ID, entries)
	}
	aside, err := keepOldHistory(t, name, rec, now)
	if err != nil {
		return out, err
	}
	out.KeptAside = ".geas/" + aside
	superseded, runs, err := supersededHistory(t, rec)
	if err != nil {
		return out, err
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	retries := r.Retries
	entry, err := rec.ResetHistory(record.HistoryEntry{
		Kind: record.KindHistoryReset, RunID: "reset", StartedAt: record.Timestamp(now), RetryBudgetAfter: &retries,
		Extra: map[string]json.RawMessage{
			"by": jsonString(r.By), "reason": jsonString(r.Reason), "retries": raw(r.Retries),
			"kept_aside": jsonString(out.KeptAside), "problems": raw(out.Problems),
			"superseded_hashes": raw(superseded), "superseded_runs": raw(runs),
		},
	}, t.ID, now)
	if err != nil {
		return out, err
	}
	if err := rec.Write(t.Project.Geas, name); err != nil {
		return out, err
	}
	out.Hash = entry.Hash
	plan, err := record.PlanEntry(t.Mission, t.ID, t.Dir, entry) // what the next command would complete
	if err != nil {
		return out, err
	}
	if err := (&record.Ledger{Geas: t.Project.Geas, Held: lock.Held, Now: now}).Apply(plan, record.Found{}).Err(); err != nil {
		return out, fmt.Errorf("history reset, but the event was not logged: %w", err)
	}
	return out, nil
}

// keepOldHistory keeps the old record.json aside, and the discarded history file beside it as it
// was (a torn last line included). It returns the name the record was kept under.
func keepOldHistory(t Task, name string, rec *record.Record, now time.Time) (string, error) {
	old, err := rec.Bytes()
	if err != nil {
		return "", err
	}
	aside, err := keepAside(t, name, old, now)
	if err != nil {
		return "", err
	}
	histName := t.Dir + "/" + record.HistoryFile
	if data, err := fsutil.ReadLimited(t.Project.Geas, histName, record.MaxHistoryBytes); err == nil {
		if _, err := keepAside(t, histName, data, now); err != nil {
			return "", err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("task %s: keep the old history aside: %w", t.ID, err)
	}
	return aside, nil
}

// supersededHistory is every hash the discarded history and the task's events name (the task's
// old events must still cross-check against the new chain), sorted, and the number of the last
// run ever logged, so that run ids go on after it and no log directory is reused.
func supersededHistory(t Task, rec *record.Record) ([]string, int, error) {
	seen := map[string]bool{}
	runs := 0
	for _, e := range rec.History() {
		seen[e.Hash] = true
		if e.IsGateRun() {
			runs++
		}
	}
	events, err := record.TaskEventHashes(t.Project.Geas, t.Mission, t.ID)
	if err != nil {
		return nil, 0, fmt.Errorf("task %s: %w", t.ID, err)
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
	return superseded, runs, nil
}

// asideSuffix starts the suffix of a file keepAside kept, which OwnedFile knows as geas's own.
const asideSuffix = ".reset-"

// keepAside writes data next to name under a name that is never overwritten.
func keepAside(t Task, name string, data []byte, now time.Time) (string, error) {
	base := name + asideSuffix + now.UTC().Format("20060102T150405Z")
	for i := 1; i <= 100; i++ {
		aside := base
		if i > 1 {
			aside = fmt.Sprintf("%s.%d", base, i)
		}
		if _, err := t.Project.Geas.Lstat(aside); err == nil {
			continue
		}
		if err := fsutil.WriteFileAtomic(t.Project.Geas, aside, data, 0o644); err != nil {
			return "", fmt.Errorf("keep %s aside: %w", path.Base(name), err)
		}
		return aside, nil
	}
	return "", fmt.Errorf("keep %s aside: %s.* all exist", path.Base(name), base)
}
