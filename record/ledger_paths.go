package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/vocab"
)

// The names of what the ledger writes beside a task's record, each spelled once.
const (
	// PinnedFile is the pinned copy of a task's rules, beside its contract (SPEC §4.4).
	PinnedFile = "contract.pinned.json"
	// ContractFile is the task's contract, whose status the ledger moves.
	ContractFile = "contract.json"
	// RecordFile is the task's record, whose history entry is the commit point of every write.
	RecordFile = "record.json"
)

// ResultFile is where a run's full result is kept, relative to .geas, written before its history
// entry (SPEC §7.3): what the derived writes need and the compact entry lacks.
func ResultFile(taskDir, runID string) string {
	return path.Join(taskDir, "gate-logs", runID, "result.json")
}

// EscalationID is the artifact id of the pending decision a run that spent the last retry of
// task writes (SPEC §7.2).
func EscalationID(task, runID string) string {
	return fmt.Sprintf("esc-%s-%s", task, runID)
}

// PendingDecisionFile is where the pending decision id of mission is written, relative to .geas.
func PendingDecisionFile(mission, id string) string {
	return path.Join("missions", mission, "decisions", "pending", id+".json")
}

// WriteContractStatus writes the task's contract.json (raw, as read) with its status set to to
// (SetContractStatus), atomically, and returns the bytes written: the one way a gate run, a
// revocation, their completion and geas task transition move a task. The caller holds the task
// lock and has checked the transition.
func WriteContractStatus(geas *os.Root, taskDir string, raw []byte, to vocab.State, now time.Time) ([]byte, error) {
	updated, err := SetContractStatus(raw, to, now)
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteFileAtomic(geas, path.Join(taskDir, ContractFile), updated, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", ContractFile, err)
	}
	return updated, nil
}

// PinnedCopy is the document of contract.pinned.json: the rules as read, their digest and who
// pinned them. The copy only names what changed; the pin itself is the history entry's
// rules_sha256, so a hand-edited copy changes nothing.
type PinnedCopy struct {
	RulesSHA256 string         `json:"rules_sha256"`
	PinnedBy    string         `json:"pinned_by"`
	PinnedAt    string         `json:"pinned_at"`
	Rules       map[string]any `json:"rules"`
}

// WritePinned writes the task's contract.pinned.json.
func WritePinned(geas *os.Root, taskDir string, doc PinnedCopy) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(geas, path.Join(taskDir, PinnedFile), append(b, '\n'), 0o644)
}

// PinnedHolds reports whether the task's pinned copy holds the rules with digest want; limit
// bounds the read (the caller's PinnedMaxBytes).
func PinnedHolds(geas *os.Root, taskDir, want string, limit int64) bool {
	_, why := ReadPinned(geas, taskDir, want, limit)
	return why == ""
}

// ReadPinned returns the rules of contract.pinned.json when its rules digest to want; otherwise
// nil and why the copy cannot be used. limit bounds the read: the copy holds a contract and a
// policy, pretty-printed, which record does not know the limits of (tiers.PinnedMaxBytes).
func ReadPinned(geas *os.Root, taskDir, want string, limit int64) (map[string]any, string) {
	data, err := fsutil.ReadLimited(geas, path.Join(taskDir, PinnedFile), limit)
	return PinnedFrom(data, err, want)
}

// PinnedFrom is ReadPinned of what a read of contract.pinned.json returned (data, or the error
// err), for a caller that read the file itself.
func PinnedFrom(data []byte, err error, want string) (map[string]any, string) {
	if err != nil {
		return nil, fmt.Sprintf("the pinned copy %s cannot be read (%v)", PinnedFile, err)
	}
	doc, err := jsonobj.DecodeMap(data)
	if err != nil {
		return nil, fmt.Sprintf("the pinned copy %s is not valid JSON", PinnedFile)
	}
	rules, _ := doc["rules"].(map[string]any)
	if rules == nil {
		return nil, fmt.Sprintf("the pinned copy %s has no rules", PinnedFile)
	}
	got, err := canon.SHA256(rules)
	if err != nil || got != want {
		return nil, fmt.Sprintf("the pinned copy %s does not match the pinned rules_sha256 %s (it digests to %s): it was edited", PinnedFile, canon.Short(want), canon.Short(got))
	}
	return rules, ""
}
