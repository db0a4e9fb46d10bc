package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonscan"
)

// MaxEventsBytes bounds how much of the event log TaskEventHashes reads.
const MaxEventsBytes = 256 << 20

// maxEventLine bounds one line of the event log.
const maxEventLine = 16 << 20

// openEvents opens the event log for a line-by-line read of at most MaxEventsBytes. A missing log
// is nil, nil, nil (no events); one that is not a regular file, or cannot be opened, is an error.
func openEvents(root *os.Root) (*os.File, *bufio.Scanner, error) {
	// OpenRegular: a named pipe in its place is refused, not waited on for ever.
	f, err := fsutil.OpenRegular(root, EventsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	sc := bufio.NewScanner(&limitedLog{r: f, n: MaxEventsBytes + 1})
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return f, sc, nil
}

// limitedLog is io.LimitReader that, once n bytes were read, fails with errEventsTooLarge: the
// log is larger than MaxEventsBytes when MaxEventsBytes+1 of its bytes can be read, whatever its
// lines (counting lines undercounts "\r\n" ends, which bufio.ScanLines drops).
type limitedLog struct {
	r io.Reader
	n int64
}

func (l *limitedLog) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errEventsTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n <= 0 && err == nil {
		err = errEventsTooLarge
	}
	return n, err
}

// EventHash is an event of the log that names a history entry by its hash.
type EventHash struct {
	Line      int    // 1-based line of events.jsonl
	EventType string // one of GateEventTypes, or a task_transition the gate logged
	RunID     string
	Hash      string
}

// gateEventTypes are the event types only geas itself logs, each naming by data.hash the history
// entry it was logged for: a gate run's gate_result and escalation, a revocation, and an
// authority's budget_grant, history_reset and rules_approval (ledger.go, ledger_entries.go).
var gateEventTypes = []string{EventGateResult, EventEscalation, EventRevocation, EventBudgetGrant, EventHistoryReset, EventRulesApproval}

// GateEventTypes returns the event types only geas itself logs (SPEC §9: an agent logging one is
// refused), in a new slice.
func GateEventTypes() []string { return slices.Clone(gateEventTypes) }

// hashedEvent reports whether an event of type typ logged by agent is one geas logs naming a
// history entry, which the history cross-check must find in the history (SPEC §7.4): an event of
// a type only geas logs, whoever the line says logged it, and a task_transition logged as the
// gate (a run's or a revocation's; an agent's own transitions name no entry).
func hashedEvent(typ, agent string) bool {
	return slices.Contains(gateEventTypes, typ) || typ == EventTaskTransition && agent == gateAgent
}

// gateAgent is the agent the gate logs its events as.
const gateAgent = "geas-gate"

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
	err = scanEventHashes(sc, func(m, t string) bool { return m == mission && t == task }, func(_, _ string, h EventHash) {
		out = append(out, h)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanEventHashes reads the event log from sc and calls add, in log order, for every event of a
// task for which keep holds whose type records a history entry and whose data carries that
// entry's hash (as TaskEventHashes says).
func scanEventHashes(sc *bufio.Scanner, keep func(mission, task string) bool, add func(mission, task string, h EventHash)) error {
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if m, t, h, ok := eventHashOf(line); ok && keep(m, t) {
			h.Line = n
			add(m, t, h)
		}
	}
	return scanError(sc.Err())
}

// scanError is the error of a read of the log that ended with err (nil: none).
func scanError(err error) error {
	if err == nil || errors.Is(err, errEventsTooLarge) {
		return err
	}
	return fmt.Errorf("read %s: %w", EventsFile, err)
}

var errEventsTooLarge = fmt.Errorf("read %s: larger than %d bytes", EventsFile, MaxEventsBytes)

// eventHashOf reads one line of the event log: the mission, task and event when the line is an
// event whose type records a history entry and whose data carries that entry's hash (Line left
// 0); ok is false for any other line, one that does not parse included.
func eventHashOf(line []byte) (mission, task string, h EventHash, ok bool) {
	if !bytes.Contains(line, []byte(`"hash"`)) {
		return "", "", h, false // cheap skip: most events name no history entry
	}
	if ev, ok := fastEvent(line); ok {
		if ev.hasData && hashedEvent(ev.typ, ev.agent) && ev.hash != "" {
			return ev.mission, ev.task, EventHash{EventType: ev.typ, RunID: ev.runID, Hash: ev.hash}, true
		}
		return "", "", h, false
	}
	f, err := objectFields(line)
	if err != nil {
		return "", "", h, false
	}
	var ev struct{ typ, mission, task, agent string }
	if field(f, "event_type", &ev.typ) != nil || field(f, "mission_id", &ev.mission) != nil || field(f, "task_id", &ev.task) != nil {
		return "", "", h, false
	}
	_ = field(f, "agent", &ev.agent) // not a string: not the gate's (a gate-only type is checked all the same)
	if !hashedEvent(ev.typ, ev.agent) {
		return "", "", h, false
	}
	data, err := objectFields(f["data"])
	if err != nil {
		return "", "", h, false
	}
	if field(data, "hash", &h.Hash) != nil || h.Hash == "" {
		return "", "", EventHash{}, false
	}
	_ = field(data, "run_id", &h.RunID)
	h.EventType = ev.typ
	return ev.mission, ev.task, h, true
}

// fastEvents is false only in tests that compare the event readers' fast path with the slow one.
var fastEvents = true

// eventFields is what the event readers take from a line: the top-level strings, and data's hash
// and run_id ("" when absent). hasData: the line has a data object.
type eventFields struct {
	typ, mission, task, agent, hash, runID string
	hasData                                bool
}

// fastEvent reads the fields of eventFields from one event line without encoding/json. It answers
// (ok) only when the line is one valid JSON object (white space allowed) whose keys have no
// escapes and are unique at the top and in data, whose event_type, mission_id, task_id and agent
// are, where present, strings of ASCII without escapes, and whose data, where present, is an
// object whose hash and run_id are, where present, such strings too: for such a line the slow
// path (objectFields, then field) reads the same values, and refuses nothing. Any other line
// takes the slow path. TestFastEventReadsAreSlowReads and FuzzFastEvent check both give the same.
//
// It mirrors encoding/json (objectFields, field) for the event lines, and pays for itself: against
// the build with -tags lib_events (bench/twins.sh, 21 interleaved pairs, 2026-12-04, 2 shared
// cores), median CPU time of a whole run library/twin 1.40 for gate --all over 100 tasks and a log
// of 3,500 events, 3.48 for one task's run over that log (quartiles 1.33-1.43, 3.39-3.68).
func fastEvent(line []byte) (ev eventFields, ok bool) {
	if !fastEvents || !twinEvents {
		return ev, false
	}
	s := &jsonscan.Scanner{Data: line}
	s.WS()
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '{' {
		return ev, false
	}
	s.Pos++
	members := func(each func(k []byte) bool) bool {
		var keys [16][]byte
		seen := keys[:0]
		s.WS()
		if s.Pos < len(s.Data) && s.Data[s.Pos] == '}' {
			s.Pos++
			return true
		}
		for {
			k, ok := s.Member()
			if !ok || slices.ContainsFunc(seen, func(o []byte) bool { return bytes.Equal(o, k) }) {
				return false
			}
			seen = append(seen, k)
			if !each(k) {
				return false
			}
			more, ok := s.More('}')
			if !ok {
				return false
			}
			if !more {
				return true
			}
		}
	}
	str := func(dst *string) bool {
		v, ok := s.PlainString()
		*dst = v
		return ok
	}
	top := members(func(k []byte) bool {
		switch string(k) {
		case "event_type":
			return str(&ev.typ)
		case "mission_id":
			return str(&ev.mission)
		case "task_id":
			return str(&ev.task)
		case "agent":
			return str(&ev.agent)
		case "data":
			if s.Pos >= len(s.Data) || s.Data[s.Pos] != '{' {
				return false
			}
			s.Pos++
			ev.hasData = true
			return members(func(k []byte) bool {
				switch string(k) {
				case "hash":
					return str(&ev.hash)
				case "run_id":
					return str(&ev.runID)
				}
				return s.Value(1)
			})
		}
		return s.Value(1)
	})
	if !top {
		return eventFields{}, false
	}
	s.WS()
	if s.Pos != len(s.Data) {
		return eventFields{}, false
	}
	return ev, true
}
