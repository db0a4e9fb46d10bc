package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
)

// EventsFile is the event log under .geas/, one JSON object a line, shared with geas.
const EventsFile = "state/events.jsonl"

// Event is one line of the event log. The field names are geas v1's.
type Event struct {
	Timestamp string          `json:"timestamp"`
	EventType string          `json:"event_type"`
	MissionID string          `json:"mission_id,omitempty"`
	TaskID    string          `json:"task_id,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// AppendEvent validates ev and appends it to the event log as one line, filling Timestamp with
// the current time when it is empty. Appends from many goroutines or processes never interleave:
// the line is written with a single write on an O_APPEND descriptor while holding an exclusive
// flock on the log (O_APPEND alone does not promise that a large write lands in one piece), and it
// is fsynced before AppendEvent returns, so an event that was reported written survives a crash.
// Blocking on the lock is fine here: every holder keeps it for one write.
func AppendEvent(root *os.Root, ev Event) error {
	if ev.Timestamp == "" {
		ev.Timestamp = Timestamp(time.Now())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep <, > and & readable: the log is read by people and agents, not embedded in HTML.
	enc.SetEscapeHTML(false)
	// Encode compacts Data too, so a multi-line payload still yields exactly one line.
	if err := enc.Encode(ev); err != nil {
		return fmt.Errorf("append event %s: %w", ev.EventType, err)
	}
	line := buf.Bytes()
	if err := schemas.Validate(schemas.Event, EventsFile, line); err != nil {
		return err
	}
	if err := fsutil.BeforeWrite("append " + EventsFile + " " + ev.EventType); err != nil {
		return fmt.Errorf("append event %s: %w", ev.EventType, err)
	}
	if err := root.MkdirAll("state", 0o755); err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	// O_NONBLOCK and the check below: a named pipe in its place is refused, never written to (a
	// write blocks once the pipe's buffer is full).
	f, err := root.OpenFile(EventsFile, os.O_APPEND|os.O_CREATE|os.O_RDWR|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("append event: %s is not a regular file", EventsFile)
	}
	if err := fsutil.LockExclusive(f); err != nil {
		return fmt.Errorf("append event: lock %s: %w", EventsFile, err)
	}
	// Closing f (deferred) drops the lock on every path; UnlockFile below only releases it sooner.
	// A log whose last line is torn (a crash mid-write, or a writer that left no newline) must not
	// swallow this event: it starts a line of its own.
	torn, err := lastByteNotNewline(f)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	if torn {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append event: sync %s: %w", EventsFile, err)
	}
	if err := fsutil.UnlockFile(f); err != nil {
		return fmt.Errorf("append event: unlock %s: %w", EventsFile, err)
	}
	return f.Close()
}

// lastByteNotNewline reports whether the file is non-empty and does not end in a newline. The
// caller holds the log's lock, so no appender of this package writes in between.
func lastByteNotNewline(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false, err
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], st.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}
