package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Authorities are the agent types that may grant retries, reset a history and approve rules.
var Authorities = []string{"orchestration-authority", "product-authority", "design-authority"}

// CheckAuthority refuses an agent that is not an authority (SPEC §9): by must be a valid agent id
// whose type is one of Authorities (an agent named after one, such as design-authority-review,
// is of its type). what says what was refused, e.g. "grant retries".
func CheckAuthority(by, what string) error {
	if t := evidence.AgentType(by, evidence.GeasAgentTypes); !slices.Contains(Authorities, t) {
		return fmt.Errorf("%s may not %s: only %s can", by, what, strings.Join(Authorities, ", "))
	}
	return nil
}

// HistoryProblems is what does not verify in a task's gate history (tiers.HistoryProblems: chain,
// HMAC under GEAS_GATE_KEY, budget arithmetic, task_id, gate_result, events). Commands check it
// before they use the history: task show, budget grant, task transition, history reset.
func HistoryProblems(t Task, rec *record.Record) []string {
	p := t.Project
	in := &tiers.Snapshot{ProjectDir: p.Dir, Root: p.Root, Geas: p.Geas, Mission: t.Mission, Task: t.ID, TaskDir: t.Dir, Record: rec}
	return tiers.HistoryProblems(in, record.SigningKey())
}

// errTampered is the refusal of a command that would build on a history that does not verify.
func errTampered(t Task, problems []string) error {
	return fmt.Errorf("task %s: the gate history does not verify, so it is not built on: %s; an authority starts a new one with geas task history reset --task %s --by AUTHORITY --reason TEXT",
		t.ID, strings.Join(problems, "; "), t.ID)
}

// LoadRecord reads the task's record.json, or starts a new one when the task has none yet. It
// returns the record's name relative to .geas.
func LoadRecord(t Task, now time.Time) (string, *record.Record, error) {
	name := t.Dir + "/" + record.RecordFile
	rec, err := record.Load(t.Project.Geas, name)
	if errors.Is(err, fs.ErrNotExist) {
		return name, record.New(t.ID, now), nil
	}
	return name, rec, err
}

// lockAs is Lock for a command only an authority may run: by is checked (CheckAuthority, for what)
// before the task is locked and completed.
func lockAs(ctx context.Context, t Task, by, what string) (*fsutil.Lock, []string, error) {
	if err := CheckAuthority(by, what); err != nil {
		return nil, nil, err
	}
	return Lock(ctx, t)
}
