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

// taskEvents reads the event log for TaskEventKeys and, when hashes, for TaskEventHashes too.
func taskEvents(root *os.Root, mission, task string, hashes bool) (*EventKeys, []EventHash, error) {
	k := &EventKeys{byHash: map[string]bool{}, byRun: map[string]bool{}}
	f, sc, err := openEvents(root)
	if err != nil {
		return nil, nil, err
	}
	if f == nil {
		return k, nil, nil
	}
	defer f.Close()
	var hs []EventHash
	taskKey := []byte(`"task_id":` + string(jsonobj.String(task)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if hashes {
			if m, t, h, ok := eventHashOf(line); ok && m == mission && t == task {
				h.Line = n
				hs = append(hs, h)
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
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	return k, hs, nil
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
