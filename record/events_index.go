package record

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/geas-dev/geas/internal/fsutil"
)

// EventIndex is the event log read for the history checks of many tasks (geas gate --all), where
// reading the whole log once a task made a run quadratic in the log's length. Its TaskEventHashes
// answers exactly what TaskEventHashes answers, from the log's lines indexed by task:
//
//   - A log that only grew since it was indexed (the lines indexed are still its first bytes) is
//     read whole, but only its new lines are parsed. Whether the first bytes are the same is
//     decided by their hash (hash/maphash, seeded at random each time the index starts over, so a
//     writer cannot aim at a collision), never by the file's metadata.
//   - Any other log (rewritten, truncated, replaced) is parsed again from its first line.
//   - Unless Exact is set, a log that is the file indexed (os.SameFile: device and inode on
//     Unix), with the same size, modification time and, where the platform has one, inode change
//     time, is not read at all: what a dry run (which appends nothing) trusts. What that cannot see
//     is a log rewritten in place to the same size within the file system's timestamp granularity,
//     which is why a run that appends (and so changes the log all the time) sets Exact.
//
// The log is opened as TaskEventHashes opens it, so a missing log, a named pipe or a log that
// cannot be opened answer exactly as there; an error is not remembered. The index keeps the log
// open between its reads, and reads it again through that handle while the path still names that
// file, so that a run over many tasks opens it once (Close closes it). Safe for concurrent use;
// the zero value is ready.
type EventIndex struct {
	// Exact: always read the log, never answer from its metadata alone.
	Exact bool

	mu     sync.Mutex
	root   *os.Root
	seen   fs.FileInfo               // the log as last read; nil: nothing indexed
	byTask map[[2]string][]EventHash // {mission, task} -> its events in the complete lines, in log order
	tail   map[[2]string][]EventHash // the same for the last line read when it had no end (torn)
	size   int64                     // bytes of the complete lines indexed
	lines  int                       // how many they are
	seed   maphash.Seed
	sum    uint64 // maphash of the size bytes

	buf    []byte // for reading the lines indexed
	parsed int    // lines parsed so far, for the tests

	// f is the log as last opened, kept open for the next read (log); fRoot the root it was
	// opened through and fInfo what Stat said of it then.
	f     *os.File
	fRoot *os.Root
	fInfo fs.FileInfo
}

// TaskEventHashes is TaskEventHashes(root, mission, task), from the index where the log allows
// (see EventIndex). A nil index reads the log.
func (x *EventIndex) TaskEventHashes(root *os.Root, mission, task string) ([]EventHash, error) {
	if x == nil {
		return TaskEventHashes(root, mission, task)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	f, err := x.log(root)
	if f == nil || err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		x.closeLog()
		return TaskEventHashes(root, mission, task) // not indexed: read as TaskEventHashes reads
	}
	if err := x.refresh(root, f, fi); err != nil {
		return nil, err
	}
	k := [2]string{mission, task}
	return append(slices.Clone(x.byTask[k]), x.tail[k]...), nil
}

// MissionEventHashes is TaskEventHashes(root, mission, task) for every task of mission at once,
// from one read of the log (as TaskEventHashes reads it, through the index): task id -> its
// events, in log order. A nil index reads the log into an index of its own.
func (x *EventIndex) MissionEventHashes(root *os.Root, mission string) (map[string][]EventHash, error) {
	if x == nil {
		x = &EventIndex{Exact: true}
		defer x.Close()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	f, err := x.log(root)
	if f == nil || err != nil {
		return nil, err
	}
	out := map[string][]EventHash{}
	fi, err := f.Stat()
	if err != nil {
		x.closeLog()
		// Not indexed: read as TaskEventHashes reads.
		g, sc, err := openEvents(root)
		if g == nil || err != nil {
			return nil, err
		}
		defer g.Close()
		err = scanEventHashes(sc, func(m, _ string) bool { return m == mission }, func(_, t string, h EventHash) {
			out[t] = append(out[t], h)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if err := x.refresh(root, f, fi); err != nil {
		return nil, err
	}
	for k, evs := range x.byTask {
		if k[0] == mission {
			out[k[1]] = slices.Clone(evs)
		}
	}
	for k, evs := range x.tail {
		if k[0] == mission {
			out[k[1]] = append(out[k[1]], evs...)
		}
	}
	return out, nil
}

// refresh brings the index up to the log f (whose stat is fi) unless it already holds it: an
// Exact index, another root, or a log that is not the one read last is read again. On an error the
// index is emptied, so the next call starts over. x.mu is held.
func (x *EventIndex) refresh(root *os.Root, f *os.File, fi os.FileInfo) error {
	if !x.Exact && x.root == root && x.seen != nil && sameLog(x.seen, fi) {
		return nil
	}
	if err := x.update(root, f); err != nil {
		x.seen, x.byTask, x.tail = nil, nil, nil
		x.closeLog()
		return err
	}
	x.seen = fi
	return nil
}

// log returns the event log of root at its start: the file the index read last, through the
// handle it kept open, while root's log is still that file (os.SameFile: a log replaced by
// another file is opened afresh), so that the tasks of one run do not open the log once each;
// else the log opened as TaskEventHashes opens it. nil, nil: there is no log. x.mu is held.
func (x *EventIndex) log(root *os.Root) (*os.File, error) {
	if x.f != nil {
		fi, err := root.Stat(EventsFile)
		if err == nil && fi.Mode().IsRegular() && x.fRoot == root && os.SameFile(fi, x.fInfo) {
			if _, err := x.f.Seek(0, io.SeekStart); err == nil {
				return x.f, nil
			}
		}
		x.closeLog()
	}
	f, _, err := openEvents(root)
	if f == nil || err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", EventsFile, err)
	}
	x.f, x.fRoot, x.fInfo = f, root, fi
	return f, nil
}

func (x *EventIndex) closeLog() {
	if x.f != nil {
		x.f.Close()
	}
	x.f, x.fRoot, x.fInfo = nil, nil, nil
}

// Close closes the event log the index keeps open. The index stays usable: its next read opens
// the log again.
func (x *EventIndex) Close() {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closeLog()
}

// update brings the index to the log f (open at its start): from the lines indexed on when they
// are still the log's first bytes, else from the first line.
func (x *EventIndex) update(root *os.Root, f *os.File) error {
	var h maphash.Hash
	if x.root == root && x.byTask != nil {
		h.SetSeed(x.seed)
		if x.buf == nil {
			x.buf = make([]byte, 256<<10) // a long log's first bytes in few reads
		}
		n, err := io.CopyBuffer(&h, io.LimitReader(f, x.size), x.buf)
		if err == nil && n == x.size && h.Sum64() == x.sum {
			return x.scan(f, &h)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read %s: %w", EventsFile, err)
		}
	}
	x.root, x.byTask, x.size, x.lines = root, map[[2]string][]EventHash{}, 0, 0
	x.seed = maphash.MakeSeed()
	h = maphash.Hash{}
	h.SetSeed(x.seed)
	return x.scan(f, &h)
}

// scan indexes the lines of f from its offset, x.size, on, as scanEventHashes reads them (the same
// lines, numbers, limits and errors), h being the hash of the x.size bytes before. A last line
// without its end is kept aside in x.tail: the next append may complete it.
func (x *EventIndex) scan(f *os.File, h *maphash.Hash) error {
	sc := bufio.NewScanner(&limitedLog{r: f, n: MaxEventsBytes + 1 - x.size})
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	sc.Split(scanLinesWithEnds)
	x.tail = nil
	for sc.Scan() {
		raw := sc.Bytes()
		complete := raw[len(raw)-1] == '\n'
		line := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r")) // as bufio.ScanLines
		m, t, ev, ok := eventHashOf(line)
		ev.Line = x.lines + 1
		x.parsed++
		if !complete { // the last line read: x.size and the hash stay at the end of the one before
			if ok {
				x.tail = map[[2]string][]EventHash{{m, t}: {ev}}
			}
			break
		}
		if ok {
			x.byTask[[2]string{m, t}] = append(x.byTask[[2]string{m, t}], ev)
		}
		_, _ = h.Write(raw) // never fails
		x.size += int64(len(raw))
		x.lines++
	}
	if err := scanError(sc.Err()); err != nil {
		return err
	}
	x.sum = h.Sum64()
	return nil
}

// scanLinesWithEnds is bufio.ScanLines that keeps each line's "\n" (and "\r"), so that the bytes
// indexed can be hashed as they are.
func scanLinesWithEnds(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
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
