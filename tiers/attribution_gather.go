package tiers

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
)

// OtherTask is another task of the mission as the snapshot read it, for attribution (SPEC §5.3
// B): its id (the name of its directory), its directory relative to .geas, and its record. Only
// tasks whose history records a gate pass somewhere are kept: the others cannot account for
// anything.
type OtherTask struct {
	ID, Dir string
	Record  *record.Record
}

// readOthers reads the records of the mission's other tasks once, in the snapshot phase (the
// evaluation judges them, attribution.go). A task directory that does not list, or a record that
// cannot be read, is left out: it attributes nothing. The task itself is never among them.
//
// Under geas gate --all the runs share what they parsed (Shared.others): a record whose files
// hold the bytes an earlier run of the --all parsed is not parsed again, and one that changed (a
// task that passed earlier in the same --all) is read anew, so its pass accounts for its files in
// the runs after it.
//
// Only a task whose contract names a base has a change (base..head) that anything can be
// attributed out of (attribute needs the base resolved): for any other task nothing is read, so
// geas gate --all over tasks without a base stays linear in the tasks.
func (in *Snapshot) readOthers(p *project.Project) {
	if p == nil || in.Geas == nil || in.Mission == "" || in.Contract == nil || in.Contract.BaseSnapshot == "" {
		return
	}
	ids, err := p.Tasks(in.Mission)
	if err != nil {
		return
	}
	for _, id := range ids {
		if id == in.Task {
			continue
		}
		dir := project.TaskDir(in.Mission, id)
		rec := in.otherRecord(dir)
		if rec == nil || !claimsPass(rec.History()) {
			continue
		}
		in.Others = append(in.Others, OtherTask{ID: id, Dir: dir, Record: rec})
	}
}

// claimsPass reports whether a history holds a gate run recorded as a pass (whether it verifies,
// and whether it still stands, is for the evaluation to judge).
func claimsPass(hist []record.HistoryEntry) bool {
	for _, e := range hist {
		if e.IsGateRun() && RecordsPass(e) {
			return true
		}
	}
	return false
}

// otherRecord is record.Load of the task directory dir's record (nil when it cannot be read),
// through the runs' shared parse when the run has one.
func (in *Snapshot) otherRecord(dir string) *record.Record {
	sum, mayPass, ok := filesSum(in.Geas, dir)
	if ok && !mayPass {
		return nil // no gate pass in its history: nothing to parse
	}
	if in.shared == nil {
		rec, err := record.Load(in.Geas, dir+"/record.json")
		if err != nil {
			return nil
		}
		return rec
	}
	return in.shared.others.load(in.Geas, dir, sum, ok)
}

// sharedRecords are the records of the tasks of geas gate --all as last parsed for attribution,
// by task directory, with the digest of the bytes of record.json and gate-history.jsonl read just
// before the parse. A record is parsed again whenever those bytes differ from the ones digested;
// what is handed out is a record the gate read from those files, and it is judged (its history
// verified) by every run that uses it. Safe for concurrent use.
type sharedRecords struct {
	mu   sync.Mutex
	recs map[string]sharedRecord
}

type sharedRecord struct {
	sum [sha256.Size]byte
	rec *record.Record
}

// load returns the record of task directory dir, whose files digested to sum (filesSum; ok false:
// they could not be read), parsed again only when its files changed.
func (s *sharedRecords) load(geas *os.Root, dir string, sum [sha256.Size]byte, ok bool) *record.Record {
	s.mu.Lock()
	if c, hit := s.recs[dir]; ok && hit && c.sum == sum {
		s.mu.Unlock()
		return c.rec
	}
	s.mu.Unlock()
	rec, err := record.Load(geas, dir+"/record.json")
	if err != nil {
		rec = nil
	}
	if ok {
		s.mu.Lock()
		if s.recs == nil {
			s.recs = map[string]sharedRecord{}
		}
		s.recs[dir] = sharedRecord{sum: sum, rec: rec}
		s.mu.Unlock()
	}
	return rec
}

// passWritten is how the gate writes a passing verdict in a history line.
var passWritten = []byte(`"verdict":"pass"`)

// filesSum digests the bytes of dir's record.json and gate-history.jsonl (an absent file as
// such), and says whether the history may hold a gate pass: it is absent (an earlier layout kept
// the history in record.json) or holds a verdict pass as the gate writes it (a history written
// otherwise is no gate's, and attributes nothing); ok is false when a file cannot be read.
func filesSum(geas *os.Root, dir string) (sum [sha256.Size]byte, mayPass, ok bool) {
	mayPass = true
	h := sha256.New()
	for _, f := range []struct {
		name  string
		limit int64
	}{{dir + "/record.json", record.MaxBytes}, {dir + "/" + record.HistoryFile, record.MaxHistoryBytes}} {
		data, err := fsutil.ReadLimited(geas, f.name, f.limit)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.Write([]byte{0})
		case err != nil:
			return [sha256.Size]byte{}, true, false
		default:
			if f.name != dir+"/record.json" {
				mayPass = bytes.Contains(data, passWritten)
			}
			h.Write([]byte{1})
			var n [8]byte
			for i := range n {
				n[i] = byte(len(data) >> (8 * i))
			}
			h.Write(n[:])
			h.Write(data)
		}
	}
	h.Sum(sum[:0])
	return sum, mayPass, true
}
