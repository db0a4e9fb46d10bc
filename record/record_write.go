package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
)

// Guard makes every file Write writes from now on ask held first, and write nothing once it
// fails: held is the task lock's Held (SPEC §7.3), which fails once the lock file was removed or
// replaced and another run may have locked the task. For the history it is asked right before
// the append (the commit point), under the history file's own lock.
func (r *Record) Guard(held func() error) { r.held = held }

// stillHeld is nil when no guard is set or the guard says the lock is held.
func (r *Record) stillHeld(what string) error {
	if r.held == nil {
		return nil
	}
	if err := r.held(); err != nil {
		return fmt.Errorf("%s: nothing written: %w", what, err)
	}
	return nil
}

// Write writes the task's files (SPEC §3, §7.3), callers holding the task's lock: first the
// history entries not yet in gate-history.jsonl, appended and fsynced (the commit point), then
// integration.json when it changed, then record.json (geas v1.0 sections plus gate_result) with
// fsutil.WriteFileAtomic. A record read in the earlier layout is migrated here: its whole history and its
// integration are written to their files before record.json loses them.
func (r *Record) Write(root *os.Root, name string) error {
	b, err := r.Bytes()
	if err != nil {
		return err
	}
	// SPEC §10: nothing is written that a reader would refuse (a grant, an approval, a reset or a
	// record add that would push record.json past what Load reads).
	if n := int64(len(b)); n > limits.record {
		return fmt.Errorf("write %s: nothing written: %w", name, &fsutil.TooLargeError{Name: name, Size: n, Limit: limits.record})
	}
	if err := r.writeSiblings(root, path.Dir(name)); err != nil {
		return err
	}
	if err := r.stillHeld("write " + name); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(root, name, b, 0o644); err != nil {
		return err
	}
	r.store.legacy, r.store.resultPending = false, false
	return nil
}

// SetSection writes one agent section: it replaces name's value in place, or appends the section,
// and sets updated_at. The whole new record is validated against the record schema before r
// changes; on any error (a *schemas.ValidationError for a schema mismatch) r is left as it was.
// gate_result and gate_history are refused with an error wrapping ErrGateOnlySection, and the
// envelope keys are refused because geas maintains them.
func (r *Record) SetSection(name string, raw json.RawMessage, now time.Time) error {
	switch {
	case name == "":
		return errors.New("set section: empty section name")
	case name == gateResult || name == gateHistory:
		return fmt.Errorf("section %q is %w", name, ErrGateOnlySection)
	case name == legacyIntegration:
		return fmt.Errorf("section %q is not part of record.json: it is integration.json, written by `geas task integrate`", name)
	case slices.Contains(envelope, name):
		return fmt.Errorf("section %q is part of the record's envelope, which geas maintains", name)
	}
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return fmt.Errorf("section %q: invalid JSON", name)
	}
	return r.update(now, jsonobj.Member{Key: name, Value: bytes.Clone(raw)})
}

// SetGateSections writes the gate's own sections: gate_result (the full result of the latest run)
// in record.json and the history (every run, oldest first; written to gate-history.jsonl by
// Write), and sets updated_at. history must extend the current one: what was appended is never
// rewritten (only ResetHistory starts a new chain). It validates like SetSection. Only the gate
// calls it.
func (r *Record) SetGateSections(result json.RawMessage, history []HistoryEntry, now time.Time) error {
	result = bytes.TrimSpace(result)
	if !json.Valid(result) {
		return fmt.Errorf("section %q: invalid JSON", gateResult)
	}
	if err := r.extendsHistory(history); err != nil {
		return err
	}
	if _, err := historyLines(history[len(r.history):]); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := r.update(now, jsonobj.Member{Key: gateResult, Value: bytes.Clone(result)}); err != nil {
		return err
	}
	r.history = slices.Clone(history)
	return nil
}

// historyLines is entries as gate-history.jsonl holds them.
func historyLines(entries []HistoryEntry) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// The entry's own bytes, as MarshalJSON writes them: no \u003c for <, so a line reads back
	// to the very entry that was chained.
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil { // one line, ending in \n
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// SetGateResult writes gate_result alone: the derived write of a run whose history entry is
// already recorded (SPEC §7.3).
func (r *Record) SetGateResult(result json.RawMessage, now time.Time) error {
	return r.SetGateSections(result, r.history, now)
}

// extendsHistory refuses a history that does not keep every current entry, unchanged, in order.
func (r *Record) extendsHistory(history []HistoryEntry) error {
	if len(history) < len(r.history) {
		return fmt.Errorf("section %q: the new history has %d entries, the recorded one %d: the history is append-only", gateHistory, len(history), len(r.history))
	}
	for i, e := range r.history {
		if history[i].Hash != e.Hash || history[i].PrevHash != e.PrevHash {
			return fmt.Errorf("section %q: entry %d differs from the recorded one: the history is append-only", gateHistory, i+1)
		}
	}
	return nil
}

// update applies sets and a fresh updated_at to a copy of r, validates it, and only then replaces
// r. The history and the integration, which live in their own files, are kept as they are.
func (r *Record) update(now time.Time, sets ...jsonobj.Member) error {
	members := slices.Clone(r.members)
	for _, s := range sets {
		members = jsonobj.Set(members, s.Key, s.Value)
	}
	members = setUpdatedAt(members, now)
	data, err := jsonobj.Encode(members)
	if err != nil {
		return err
	}
	file := r.file
	if file == "" {
		file = RecordFile
	}
	if err := validate(file, data); err != nil {
		return err
	}
	nr, err := build(file, members)
	if err != nil {
		return err
	}
	nr.history, nr.integration, nr.store = r.history, r.integration, r.store
	*r = *nr
	return nil
}

// setUpdatedAt replaces updated_at in place, or inserts it after the last envelope key, where geas
// keeps it. A record that carries neither version nor created_at (geas v1.4.0's shape, as its own
// examples are) gets none: geas v1.4.0's record schema has no place for them and its CLI refuses
// to add a section to a record with a root key its schema lacks, so the gate adds nothing there.
// Where the record has them, the gate refreshes updated_at on every write, as that CLI does.
func setUpdatedAt(members []jsonobj.Member, now time.Time) []jsonobj.Member {
	value := jsonobj.String(Timestamp(now))
	if i := slices.IndexFunc(members, func(m jsonobj.Member) bool { return m.Key == "updated_at" }); i >= 0 {
		members[i].Value = value
		return members
	}
	if !slices.ContainsFunc(members, func(m jsonobj.Member) bool { return m.Key == "version" || m.Key == "created_at" }) {
		return members
	}
	at := 0
	for i, m := range members {
		if slices.Contains(envelope, m.Key) {
			at = i + 1
		}
	}
	return slices.Insert(members, at, jsonobj.Member{Key: "updated_at", Value: value})
}

// Bytes returns the record as written to disk: indented with two spaces, keys in order, with a
// trailing newline.
func (r *Record) Bytes() ([]byte, error) { return jsonobj.Encode(r.members) }
