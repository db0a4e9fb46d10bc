package record

import (
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/geas-dev/geas/internal/fsutil"
)

// EventIndex is the event log read once for the history checks of many tasks: geas gate --all
// --dry-run, which appends nothing, would otherwise read the whole log once a task. Its
// TaskEventHashes answers what TaskEventHashes answers, from one read of the log indexed by task,
// as long as the log is the file that read indexed: the same file (os.SameFile: device and inode
// on Unix), the same size and the same modification time, checked on every call with an fstat of
// the log opened as TaskEventHashes opens it (so a missing log, a named pipe or a log that cannot
// be opened answer exactly as there). A log that changed (an append changes its size) is read
// again. Safe for concurrent use; the zero value is ready.
//
// What it cannot see is a log rewritten in place to the same size within the file system's
// timestamp granularity; that is why only a run that writes nothing uses it (a recorded run, which
// appends to the log and must see its own appends, reads the log itself).
type EventIndex struct {
	mu     sync.Mutex
	root   *os.Root
	seen   fs.FileInfo               // the log as indexed; nil: nothing indexed
	byTask map[[2]string][]EventHash // {mission, task} -> its events, in log order
}

// TaskEventHashes is TaskEventHashes(root, mission, task), from the index when the log has not
// changed since it was read. A nil index reads the log.
func (x *EventIndex) TaskEventHashes(root *os.Root, mission, task string) ([]EventHash, error) {
	if x == nil {
		return TaskEventHashes(root, mission, task)
	}
	f, sc, err := openEvents(root)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return TaskEventHashes(root, mission, task) // not indexed: read as TaskEventHashes reads
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.root != root || x.seen == nil || !sameLog(x.seen, fi) {
		byTask := map[[2]string][]EventHash{}
		err := scanEventHashes(sc, func(string, string) bool { return true }, func(m, t string, h EventHash) {
			byTask[[2]string{m, t}] = append(byTask[[2]string{m, t}], h)
		})
		if err != nil {
			x.seen, x.byTask = nil, nil // an error is not remembered: the next call reads again
			return nil, err
		}
		x.root, x.seen, x.byTask = root, fi, byTask
	}
	return slices.Clone(x.byTask[[2]string{mission, task}]), nil
}

// sameLog reports whether b is the log a was: the same file, size, modification time and, where
// the platform has one, inode change time, which a writer cannot set back as `touch -d` sets the
// modification time.
func sameLog(a, b fs.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	ca, oka := fsutil.ChangeTime(a)
	cb, okb := fsutil.ChangeTime(b)
	return oka == okb && ca.Equal(cb)
}
