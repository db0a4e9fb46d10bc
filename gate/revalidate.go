package gate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// Drift is what changed between a task's base and the head the gate judges (tiers.Drift).
type Drift = tiers.Drift

// Revalidation asks geas task revalidate for the drift since the task's pinned base and, with
// Base, to re-pin it: the contract's base_snapshot set to the commit Base names and the rules it
// makes approved in one step, as geas task approve approves (SPEC §5.3 Part B).
type Revalidation struct {
	Base       string // any revision the project's repository names; "" reports the drift only
	By, Reason string // the authority re-pinning, and why; required with Base
}

// Revalidated is what Revalidate found and, with a base, wrote.
type Revalidated struct {
	// PinnedBase is the base the rules pin, as the contract names it (a SHA, or a name and
	// PinnedCommit the commit it resolved to when pinned); PinnedBy says which entry pinned it
	// ("" when nothing pinned the rules yet: the contract's base is reported).
	PinnedBase, PinnedCommit, PinnedBy string
	// ContractBase is the contract's base_snapshot when it differs from the pinned base: a base
	// changed and not yet approved, which the gate blocks (rules_changed).
	ContractBase string
	// Drift is what changed since the pinned base (before a re-pin) or since the new base (after).
	Drift *Drift
	// NewBase is the full SHA the contract's base_snapshot was set to; BaseWritten is false when
	// the contract named it already (a re-run after a cut-short one approves without a write).
	NewBase     string
	BaseWritten bool
	Approved    *Approved // the approval of the rules with the new base (nil: no re-pin)
	// Changes are the fields the approval changed in the pinned rules (base_snapshot, and any
	// other field changed since the pin, which the approval approves too); nil when nothing was
	// pinned or the pinned copy could not be read.
	Changes []string
	Notes   []string // what taking the task's lock completed or could not write, and caveats
}

// testAfterBaseWritten, when set by a test, runs between the contract write and the approval of a
// re-pin; an error it returns cuts the command short there, as a crash would.
var testAfterBaseWritten func() error

// Revalidate reports the drift since the task's pinned base (nothing written, no lock taken) or,
// with r.Base, re-pins the base under the task's lock: the base resolved to a full SHA, the
// contract's base_snapshot written (validated, atomically), then the rules that base makes
// approved exactly as Approve does (the approval entry is the commit point; the pinned copy and
// the event follow from its plan), so that the next run sees no rules_changed. A command cut short
// between the two writes leaves a contract whose base the pin does not hold: the next run blocks
// with rules_changed naming base_snapshot, and this command run again approves it. Only an
// authority re-pins, with a reason. The result is never nil.
func Revalidate(ctx context.Context, t Task, r Revalidation) (*Revalidated, error) {
	if r.Base == "" {
		if r.By != "" || r.Reason != "" {
			return &Revalidated{}, &InputError{Err: errors.New("--by and --reason approve a new base: give it with --base REV")}
		}
		return driftReport(t)
	}
	switch {
	case r.By == "":
		return &Revalidated{}, &InputError{Err: errors.New("--base needs --by AUTHORITY: only an authority re-pins a task's base")}
	case strings.TrimSpace(r.Reason) == "":
		return &Revalidated{}, &InputError{Err: errors.New("--base needs --reason TEXT: why the base moves")}
	}
	return repin(ctx, t, r)
}

// driftReport is Revalidate without a base: the pinned base, the contract's when it differs, and
// the drift since the pinned base.
func driftReport(t Task) (*Revalidated, error) {
	out := &Revalidated{}
	in := tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir)
	if in.ContractErr != nil {
		return out, fmt.Errorf("cannot report the drift of task %s: %w", t.ID, in.ContractErr)
	}
	if in.RecordErr != nil {
		return out, fmt.Errorf("cannot report the drift of task %s: %w", t.ID, in.RecordErr)
	}
	pinnedBase(t, in, out)
	base := out.PinnedCommit
	if base == "" {
		base = out.PinnedBase
	}
	if base == "" {
		return out, fmt.Errorf("task %s has no base_snapshot: there is no drift to report (re-pin one with --base REV --by AUTHORITY --reason TEXT)", t.ID)
	}
	d, err := tiers.DriftOf(in, base)
	if err != nil {
		return out, fmt.Errorf("task %s: %w", t.ID, err)
	}
	out.Drift = d
	if !d.Ancestor {
		out.Notes = append(out.Notes, fmt.Sprintf("the base %s is not an ancestor of the head %s (%s): the gate blocks (baseline_mismatch) until the base moves", d.Base, d.Head, d.HeadRev))
	}
	return out, nil
}

// pinnedBase fills out's PinnedBase, PinnedCommit, PinnedBy and ContractBase: the base of the
// pinned rules (contract.pinned.json, trusted only when it digests to the pin of the history),
// else the contract's, with a note saying why.
func pinnedBase(t Task, in *tiers.Snapshot, out *Revalidated) {
	current := in.Contract.BaseSnapshot
	out.PinnedBase, out.PinnedCommit = current, in.BaseCommit
	pin, ok := record.PinnedRules(in.Record)
	if !ok {
		return // nothing pinned the rules yet (no approval, no recorded run): the contract's base
	}
	rules, why := record.ReadPinned(t.Project.Geas, t.Dir, pin.RulesSHA256, tiers.PinnedMaxBytes)
	if rules == nil {
		out.Notes = append(out.Notes, why+": the contract's base_snapshot is reported")
		return
	}
	c, _ := rules["contract"].(map[string]any)
	name, _ := c["base_snapshot"].(string)
	commit := ""
	if b, ok := rules["base"].(map[string]any); ok {
		commit, _ = b["commit"].(string)
	}
	out.PinnedBase, out.PinnedCommit, out.PinnedBy = name, commit, pin.By
	if name != current {
		out.ContractBase = current
		out.Notes = append(out.Notes, fmt.Sprintf("the contract's base_snapshot %q is not the pinned %q: the gate blocks (rules_changed) until an authority approves it", current, name))
	}
}

// repin is Revalidate with a base.
func repin(ctx context.Context, t Task, r Revalidation) (*Revalidated, error) {
	out := &Revalidated{}
	lock, notes, err := lockAs(ctx, t, r.By, "re-pin a task's base")
	out.Notes = notes
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	in := tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir)
	// The refusals of an approval come before the contract is written: a base written and then
	// not approved would block the task for nothing.
	if err := approvable(t, in); err != nil {
		return out, err
	}
	sha, err := resolveCommit(t, r.Base)
	if err != nil {
		return out, err
	}
	out.NewBase = sha
	if in.Contract.BaseSnapshot != sha {
		if err := writeBase(t, lock, in.Contract, sha); err != nil {
			return out, err
		}
		out.BaseWritten = true
	}
	if testAfterBaseWritten != nil {
		if err := testAfterBaseWritten(); err != nil {
			return out, err
		}
	}
	// The rules of the new base: the contract as written, and the policy as the new base holds it.
	raw := in.Contract.Raw
	in = tiers.GatherOwn(t.Project, t.Mission, t.ID, t.Dir)
	if err := approvable(t, in); err != nil {
		// The new base's rules cannot be approved (its policy does not parse, say): put the
		// contract back, so that a refusal leaves the task as it was.
		if out.BaseWritten {
			if werr := writeContract(t, lock, raw); werr != nil {
				return out, fmt.Errorf("base_snapshot set to %s, but its rules cannot be approved (%w), and the contract could not be put back (%v): the next run blocks with rules_changed", sha, err, werr)
			}
		}
		return out, fmt.Errorf("base_snapshot %s refused, the contract left as it was: %w", sha, err)
	}
	if pin, ok := record.PinnedRules(in.Record); ok {
		if rules, _ := record.ReadPinned(t.Project.Geas, t.Dir, pin.RulesSHA256, tiers.PinnedMaxBytes); rules != nil {
			out.Changes = tiers.RulesChanges(rules, in.Rules)
		}
	}
	done, err := approveHeld(t, lock, Approval{By: r.By, Reason: r.Reason}, in)
	out.Approved = done
	if err != nil {
		return out, err
	}
	if d, err := tiers.DriftOf(in, sha); err == nil {
		out.Drift = d
		if !d.Ancestor {
			out.Notes = append(out.Notes, fmt.Sprintf("the new base %s is not an ancestor of the head %s (%s): the gate blocks (baseline_mismatch)", d.Base, d.Head, d.HeadRev))
		}
	} else {
		out.Notes = append(out.Notes, fmt.Sprintf("re-pinned, but the drift since the new base cannot be listed: %v", err))
	}
	return out, nil
}

// resolveCommit resolves rev in the project's repository to the full SHA of the commit it names,
// refusing what names no commit, with the value.
func resolveCommit(t Task, rev string) (string, error) {
	repo, err := git.Open(t.Project.Dir)
	if err != nil {
		return "", fmt.Errorf("task %s: --base is resolved in the project's git repository: %w", t.ID, err)
	}
	defer repo.Close()
	sha, err := repo.Resolve(rev)
	if err != nil {
		return "", fmt.Errorf("task %s: --base %q does not name a commit: %w", t.ID, rev, err)
	}
	return sha, nil
}

// writeBase writes the contract with base_snapshot set to sha, validated as the contract it
// becomes before anything is written, atomically, while the lock is held.
func writeBase(t Task, lock *fsutil.Lock, k *contract.Contract, sha string) error {
	name := path.Join(t.Dir, record.ContractFile)
	updated, err := record.SetContractBase(k.Raw, sha, time.Now())
	if err != nil {
		return err
	}
	if _, err := contract.Parse(name, updated); err != nil {
		return fmt.Errorf("base_snapshot %s would make the contract invalid: %w", sha, err)
	}
	return writeContract(t, lock, updated)
}

// writeContract writes the task's contract.json atomically while the lock is held.
func writeContract(t Task, lock *fsutil.Lock, data []byte) error {
	name := path.Join(t.Dir, record.ContractFile)
	if err := lock.Held(); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(t.Project.Geas, name, data, 0o644); err != nil {
		return fmt.Errorf("write .geas/%s: %w", name, err)
	}
	return nil
}
