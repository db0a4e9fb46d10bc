package gate

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Approval is an authority's approval of a task's rules (geas task approve).
type Approval struct {
	By, Reason string // the authority, and why the rules are (re)pinned
}

// Approved is what Approve recorded.
type Approved struct {
	RulesSHA256 string // the digest of the rules pinned
	Pinned      string // the pinned copy, relative to .geas
	Hash        string // the approval entry's hash
	// HadPin says that the approval replaced a pin: Previous is its digest, PreviousBy its approver.
	HadPin               bool
	Previous, PreviousBy string
	Notes                []string // what taking the task's lock completed or could not write
}

// Approve pins the task's rules (the contract without status and timestamps, plus the effective
// gate policy) under its lock: an approval entry in the gate history, the pinned copy beside the
// contract, and an approval event. Only an authority approves; a signed history takes only a
// signed approval. The result is never nil: its notes stand also with an error.
func Approve(ctx context.Context, t Task, a Approval) (*Approved, error) {
	out := &Approved{}
	lock, notes, err := lockAs(ctx, t, a.By, "approve a task's rules")
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	in := tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir)
	if err := approvable(t, in); err != nil {
		return out, err
	}
	done, err := approveHeld(t, lock, a, in)
	done.Notes = notes
	return done, err
}

// approvable refuses the approval of in's rules before anything is written: rules that cannot be
// read, and an approval without the key on a signed history, which every later run would refuse
// as forged.
func approvable(t Task, in *tiers.Snapshot) error {
	switch {
	case in.ContractErr != nil:
		return fmt.Errorf("cannot approve the rules: %w", in.ContractErr)
	case in.PolicyErr != nil:
		return fmt.Errorf("cannot approve the rules: %w", in.PolicyErr)
	case in.RecordErr != nil:
		return fmt.Errorf("cannot approve the rules: %w", in.RecordErr)
	}
	if record.SigningKey() == nil {
		for _, e := range in.Record.History() {
			if e.HMAC != "" {
				return fmt.Errorf("the gate history of task %s is signed: approving its rules needs %s", t.ID, record.SigningKeyEnv)
			}
		}
	}
	if in.Rules == nil {
		return fmt.Errorf("cannot pin the rules: %v", in.RulesErr)
	}
	return nil
}

// approveHeld writes the approval of in's rules (approvable) under lock: the approval entry, the
// commit point, then the pinned copy and the event its plan implies (record.PlanEntry), as the
// completion would write them if the command were cut short. The result is never nil.
func approveHeld(t Task, lock *fsutil.Lock, a Approval, in *tiers.Snapshot) (*Approved, error) {
	out := &Approved{}
	prev, hadPin := record.PinnedRules(in.Record)
	now := time.Now()
	in.Record.Guard(lock.Held) // SPEC §7.3: nothing is written once the lock file is replaced
	entry, err := in.Record.AppendHistory(record.Approval(a.By, a.Reason, in.RulesSHA256, now), now)
	if err != nil {
		return out, err
	}
	if err := in.Record.Write(t.Project.Geas, path.Join(t.Dir, record.RecordFile)); err != nil && !in.Record.Recorded(entry.Hash) {
		return out, fmt.Errorf("write .geas/%s/record.json: %w", t.Dir, err)
	}
	// The entry is the commit point; the ledger writes the pinned copy and the event it implies,
	// as the completion would if this command were cut short.
	plan, err := record.PlanEntry(t.Mission, t.ID, t.Dir, entry)
	if err != nil {
		return out, err
	}
	l := &record.Ledger{Geas: t.Project.Geas, Held: lock.Held, Now: now, Rules: func(want string) (map[string]any, bool) {
		return in.Rules, want == in.RulesSHA256
	}}
	if err := l.Apply(plan, record.Found{}).Err(); err != nil {
		return out, err
	}
	out.RulesSHA256, out.Pinned, out.Hash = in.RulesSHA256, path.Join(t.Dir, record.PinnedFile), entry.Hash
	if hadPin {
		out.HadPin, out.Previous, out.PreviousBy = true, prev.RulesSHA256, prev.By
	}
	return out, nil
}
