package record

import (
	"bytes"
	"fmt"
	"os"

	"github.com/geas-dev/geas/internal/jsonobj"
)

// TaskEventKeys reads the event log for the gate's events of mission/task (agent geas-gate, and
// budget grants and history resets, which name their entry by hash). A missing log holds none; a
// torn or malformed line is skipped; a log that cannot be read is an error.
func TaskEventKeys(root *os.Root, mission, task string) (*EventKeys, error) {
	k, _, err := taskEvents(root, mission, task, false)
	return k, err
}

// TaskEvents is TaskEventKeys and TaskEventHashes of mission/task from one read of the event log:
// what the crash completion needs of the log, and what the history check cross-checks. On an
// error neither is returned.
func TaskEvents(root *os.Root, mission, task string) (*EventKeys, []EventHash, error) {
	return taskEvents(root, mission, task, true)
}

// MissionEvents is TaskEventKeys of mission/task and, from the same read of the event log, the
// events that name a history entry by its hash (TaskEventHashes): of task alone, or of every task
// of mission when all is set (task id -> its events, in log order). The crash completion needs the
// keys, the history check the task's hashes, attribution the other tasks'. Its errors are
// TaskEventHashes's; on an error nothing else is returned.
func MissionEvents(root *os.Root, mission, task string, all bool) (*EventKeys, map[string][]EventHash, error) {
	out := map[string][]EventHash{}
	keep := func(m, t string) bool { return m == mission && (all || t == task) }
	k, err := scanTaskEvents(root, mission, task, keep, func(t string, h EventHash) { out[t] = append(out[t], h) }, scanError)
	if err != nil || k == nil {
		return nil, nil, err
	}
	return k, out, nil
}

// taskEvents reads the event log for TaskEventKeys and, when hashes, for TaskEventHashes too.
func taskEvents(root *os.Root, mission, task string, hashes bool) (*EventKeys, []EventHash, error) {
	var hs []EventHash
	var keep func(m, t string) bool // nil: no hashes
	if hashes {
		keep = func(m, t string) bool { return m == mission && t == task }
	}
	k, err := scanTaskEvents(root, mission, task, keep, func(_ string, h EventHash) { hs = append(hs, h) }, func(err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", EventsFile, err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return k, hs, nil
}

// scanTaskEvents reads the event log once: the keys of mission/task's events, and add called, in
// log order, for each event whose type records a history entry and whose data carries that
// entry's hash of a task for which keep holds (its Line set; nil keep: none). scanErr words the error the read of
// the lines ended with (nil: none).
func scanTaskEvents(root *os.Root, mission, task string, keep func(m, t string) bool, add func(t string, h EventHash), scanErr func(error) error) (*EventKeys, error) {
	k := &EventKeys{byHash: map[string]bool{}, byRun: map[string]bool{}}
	f, sc, err := openEvents(root)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return k, nil
	}
	defer f.Close()
	taskKey := []byte(`"task_id":` + string(jsonobj.String(task)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if keep != nil {
			if m, t, h, ok := eventHashOf(line); ok && keep(m, t) {
				h.Line = n
				add(t, h)
			}
		}
		if !bytes.Contains(line, taskKey) {
			continue // cheap skip: another task's event
		}
		if ev, ok := fastEvent(line); ok {
			if ev.hasData && ev.mission == mission && ev.task == task {
				k.add(ev.typ, ev.hash, ev.runID, ev.agent)
			}
			continue
		}
		fields, err := objectFields(line)
		if err != nil {
			continue
		}
		var typ, m, t, agent string
		if field(fields, "event_type", &typ) != nil || field(fields, "mission_id", &m) != nil ||
			field(fields, "task_id", &t) != nil || field(fields, "agent", &agent) != nil {
			continue
		}
		if m != mission || t != task {
			continue
		}
		data, err := objectFields(fields["data"])
		if err != nil {
			continue
		}
		var hash, run string
		_ = field(data, "hash", &hash)
		_ = field(data, "run_id", &run)
		k.add(typ, hash, run, agent)
	}
	if err := scanErr(sc.Err()); err != nil {
		return nil, err
	}
	return k, nil
}

// add records an event of type typ with data.hash hash and data.run_id run, logged by agent.
func (k *EventKeys) add(typ, hash, run, agent string) {
	switch {
	case hash != "":
		k.byHash[typ+"\x00"+hash] = true
	case run != "" && agent == "geas-gate":
		k.byRun[typ+"\x00"+run] = true
	}
}
