package record

import (
	"fmt"
)

// Size limits of SPEC §10 owned by the record package. A policy may lower them and raise them at
// most fourfold; the readers accept the ceiling, so the gate, which writes nothing over the
// effective limit, never writes a file another command refuses (SPEC §2 invariant 9).
const (
	// DefaultMaxBytes is the default limit of record.json (4 MiB).
	DefaultMaxBytes = 4 << 20
	// DefaultMaxHistoryBytes is the default limit of the gate history (64 MiB).
	DefaultMaxHistoryBytes = 64 << 20
)

// HistoryFullError is a history append refused because it would take the history past its limit
// (SPEC §10: error history_full). Nothing is appended.
type HistoryFullError struct {
	Size  int64 // bytes the history holds now
	Entry int64 // bytes the entry would add
	Limit int64
}

func (e *HistoryFullError) Error() string {
	return fmt.Sprintf("the gate history holds %d bytes and this run's entry adds %d, over its limit of %d bytes: nothing was appended (an authority starts a new chain with geas task history reset, which keeps the full history aside)",
		e.Size, e.Entry, e.Limit)
}

// CheckHistoryAppend refuses an append of entry bytes (its line, newline included) to a history of
// size bytes when the result would exceed limit. The history's append path calls it before it
// writes anything.
func CheckHistoryAppend(size, entry, limit int64) error {
	if limit > 0 && size+entry > limit {
		return &HistoryFullError{Size: size, Entry: entry, Limit: limit}
	}
	return nil
}

// HistoryLineBytes is the size of entries written one canonical-JSON entry a line (RFC 8785, each
// line ending in a newline): the size the history file has, or would have, for them.
func HistoryLineBytes(entries ...HistoryEntry) (int64, error) {
	var n int64
	for _, e := range entries {
		if err := withCanonical(e, true, func(b []byte) { n += int64(len(b)) + 1 }); err != nil {
			return 0, err
		}
	}
	return n, nil
}
