package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxEventsBytes bounds how much of the event log TaskEventHashes reads.
const MaxEventsBytes = 256 << 20

// maxEventLine bounds one line of the event log.
const maxEventLine = 16 << 20

// openEvents opens the event log for a line-by-line read of at most MaxEventsBytes. A missing log
// is nil, nil, nil (no events); one that is not a regular file, or cannot be opened, is an error.
func openEvents(root *os.Root) (*os.File, *bufio.Scanner, error) {
	f, err := root.Open(EventsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("not a regular file (%s)", st.Mode().Type())
		}
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	sc := bufio.NewScanner(io.LimitReader(f, MaxEventsBytes+1))
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return f, sc, nil
}

// EventHash is an event of the log that names a history entry by its hash.
type EventHash struct {
	Line      int    // 1-based line of events.jsonl
	EventType string // gate_result, revocation, budget_grant, history_reset
	RunID     string
	Hash      string
}

// hashedEventTypes are the events whose data names the history entry they were logged for.
var hashedEventTypes = map[string]bool{
	"gate_result": true, KindRevocation: true, KindBudgetGrant: true, KindHistoryReset: true,
}

// TaskEventHashes reads the event log and returns, in log order, every event of mission/task
// whose type records a history entry and whose data carries that entry's "hash" (SPEC §7.4: every
// gate run in events.jsonl must be in the history). Older events without a hash, and lines that
// do not parse (a torn last line), are skipped. A missing log has no events; a log that cannot be
// read, or is larger than MaxEventsBytes, is an error: the cross-check could not be done.
func TaskEventHashes(root *os.Root, mission, task string) ([]EventHash, error) {
	f, sc, err := openEvents(root)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	var out []EventHash
	var read int64
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		read += int64(len(line)) + 1
		if read > MaxEventsBytes {
			return nil, fmt.Errorf("read %s: larger than %d bytes", EventsFile, MaxEventsBytes)
		}
		if !bytes.Contains(line, []byte(`"hash"`)) {
			continue // cheap skip: most events name no history entry
		}
		f, err := objectFields(line)
		if err != nil {
			continue
		}
		var ev struct{ typ, mission, task string }
		if field(f, "event_type", &ev.typ) != nil || field(f, "mission_id", &ev.mission) != nil || field(f, "task_id", &ev.task) != nil {
			continue
		}
		if !hashedEventTypes[ev.typ] || ev.mission != mission || ev.task != task {
			continue
		}
		data, err := objectFields(f["data"])
		if err != nil {
			continue
		}
		var h EventHash
		if field(data, "hash", &h.Hash) != nil || h.Hash == "" {
			continue
		}
		_ = field(data, "run_id", &h.RunID)
		h.Line, h.EventType = n, ev.typ
		out = append(out, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	return out, nil
}
