package tiers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// OtherTask is another task of the mission as the snapshot read it, for attribution (SPEC §5.3
// B): its id (the name of its directory), its directory relative to .geas, and its record. Only
// tasks whose history records a gate pass somewhere are kept: the others cannot account for
// anything.
type OtherTask struct {
	ID, Dir string
	Record  *record.Record

	// What the snapshot read of it besides its record (readOthersFacts), so that attribution
	// judges data: Facts are its record's facts under the signing key (record.FactsOf: the chain
	// and signatures verified, the pin); Events its gate events of the event log, from the one
	// read of the log for the mission's tasks (EventsErr: why the log could not be read); Pinned
	// the rules its latest gate pass was judged by (rules_sha256 PinnedFor) as its pinned copy
	// holds them, or PinnedWhy why they cannot be taken from it (record.ReadPinned).
	Facts     *record.Facts
	Events    []record.EventHash
	EventsErr error
	PinnedFor string
	Pinned    map[string]any
	PinnedWhy string
	// Stands is the gate pass its state may rest on (mayStand), when set (Hash not ""): Approved
	// says an authority approved its rules before it (approvedBefore), PinnedAfter, when it did
	// not, why its rules were pinned after this task's (pinnedAfter; "": not after). Its pinned
	// copy is read only when one of them lets it account for files.
	Stands      record.HistoryEntry
	Approved    bool
	PinnedAfter string
}

// readOthers reads the records of the mission's other tasks once, in the snapshot phase (the
// evaluation judges them, attribution.go). A task directory that does not list, or a record that
// cannot be read, is left out: it attributes nothing. The task itself is never among them.
//
// Under geas gate --all the runs share what they read (Shared.others, sharedRecords): a record
// whose files are unchanged since an earlier run of the --all read them is neither opened nor
// parsed again, and one that changed (a task that passed, or whose pass was revoked, earlier in
// the same --all) is read anew, so that the runs after it judge what its files hold now.
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
	own := &sharedRecords{}
	defer own.close()
	for _, id := range ids {
		if id == in.Task {
			continue
		}
		dir := project.TaskDir(in.Mission, id)
		rec := in.otherRecord(dir, own)
		if rec == nil || !claimsPass(rec.History()) {
			continue
		}
		in.Others = append(in.Others, OtherTask{ID: id, Dir: dir, Record: rec})
	}
	in.readOthersFacts()
}

// readOthersFacts completes, in the snapshot, what attribution needs of the other tasks read
// (readOthers) beyond their records, so that the evaluation reads it as data: each record's facts
// (record.FactsOf with the signing key), the gate events of the mission's tasks from one read of
// the event log (through the index of geas gate --all or geas gate verify when the run has one;
// this task's too, when the completion did not hand them over: the attribution compares pins
// by their events' lines), and the pinned copy of the rules each task's latest gate pass was
// judged by (through the copies --all shares when it has them).
func (in *Snapshot) readOthersFacts() {
	if len(in.Others) == 0 {
		return
	}
	key := record.SigningKey()
	events, err := in.Events.MissionEventHashes(in.Geas, in.Mission)
	if in.taskEvents == nil {
		in.taskEvents = &TaskEvents{Hashes: events[in.Task], Err: err}
	}
	for i := range in.Others {
		o := &in.Others[i]
		o.Facts = record.FactsOf(o.Record, key)
		o.Events, o.EventsErr = events[o.ID], err
		e, ok := mayStand(o)
		if !ok {
			continue
		}
		o.Stands = e
		if o.Approved, o.PinnedAfter = pinOrder(in, o, e); o.Approved || o.PinnedAfter == "" {
			o.PinnedFor = e.RulesSHA256
			o.Pinned, o.PinnedWhy = in.readPinned(o.Dir, e.RulesSHA256)
		}
	}
}

// pinOrder says whether an authority approved the rules o's pass e was judged by before it
// (approvedBefore), and, when none did, why those rules were pinned after this task's
// (pinnedAfter; "": not after).
func pinOrder(in *Snapshot, o *OtherTask, e record.HistoryEntry) (approved bool, after string) {
	if approvedBefore(o.Facts.History, e) {
		return true, ""
	}
	return false, pinnedAfter(in, *o, e)
}

// mayStand is the gate pass of o's history whose pinned rules attribution may ask for: the latest
// entry, passing over later gate runs with verdict error (the standing pass passes over those
// refused with state_ineligible, standingPass), when it is a gate pass that names its rules and a
// logged gate_result event, in a history whose chain and signatures verify. Attribution asks for
// no other pass's rules; it may refuse this one for more reasons (confirmPass).
func mayStand(o *OtherTask) (record.HistoryEntry, bool) {
	f := o.Facts
	if f.ChainErr != nil || len(f.BadSignatures) > 0 || len(f.BudgetProblems) > 0 || o.EventsErr != nil {
		return record.HistoryEntry{}, false
	}
	for j := len(f.History) - 1; j >= 0; j-- {
		e := f.History[j]
		if e.IsGateRun() && e.Verdict == string(vocab.VerdictError) {
			continue
		}
		if !e.IsGateRun() || !RecordsPass(e) || e.RulesSHA256 == "" {
			return record.HistoryEntry{}, false
		}
		for _, ev := range o.Events {
			if ev.EventType == record.EventGateResult && ev.Hash == e.Hash && ev.RunID == e.RunID {
				return e, true
			}
		}
		return record.HistoryEntry{}, false
	}
	return record.HistoryEntry{}, false
}

// approvedBefore reports whether an authority's approval (geas task approve) of the very rules
// pass was judged by precedes it in the history (SPEC §4.4). Another task's pass accounts for
// files of this task only then: as for tests.may_change (SPEC §5.2a), the rules a first gate run
// pinned are whatever the contract said then, and a task an agent creates itself, with surfaces
// "**" and an eval command "true", would pass for real and launder any file. The history's chain
// and MACs are verified by the caller (HistoryProblems), so with GEAS_GATE_KEY set only the key's
// holder can have written the approval.
func approvedBefore(hist []record.HistoryEntry, pass record.HistoryEntry) bool {
	for _, h := range hist {
		if h.Hash == pass.Hash && h.RunID == pass.RunID {
			return false
		}
		if h.Kind == record.KindApproval && h.RulesSHA256 != "" && h.RulesSHA256 == pass.RulesSHA256 {
			return true
		}
	}
	return false
}

// pinnedAfter says why a pass under rules no authority approved accounts for nothing here ("" when
// it may account for files of this task's scope and stubs): its rules were pinned, by its first
// gate run, after this task's rules were first pinned. Before this task's first pin its contract
// is whatever the files say (SPEC §4.4: the first gate run pins what it reads), so an agent could
// as well have widened this task's own surfaces; after it, a task the agent makes itself, with
// surfaces "**", must not widen them. Pins are compared by their entries' timestamps (second
// precision, signed with GEAS_GATE_KEY), and within one second by the lines of their events in
// the mission's event log (the other task's, o.Events; this task's, as the snapshot read them); a
// pin whose event is not found is after.
func pinnedAfter(in *Snapshot, o OtherTask, e record.HistoryEntry) string {
	mine, ok := firstPin(in.Record)
	if !ok {
		return "" // this run pins the task's rules: every earlier pin is before it
	}
	theirs, ok := o.Facts.Pin, o.Facts.Pinned
	if !ok || theirs.RulesSHA256 != e.RulesSHA256 {
		return fmt.Sprintf("its pass %s was judged by rules no authority approved (rules_sha256 %.12s), which its history does not show pinned", e.RunID, e.RulesSHA256)
	}
	t1, err1 := time.Parse(time.RFC3339, mine.StartedAt)
	t2, err2 := time.Parse(time.RFC3339, theirs.Entry.StartedAt)
	after := err1 != nil || err2 != nil || t2.After(t1)
	if !after && t2.Equal(t1) {
		var l1 int
		if in.taskEvents != nil && in.taskEvents.Err == nil {
			l1 = eventLine(in.taskEvents.Hashes, mine)
		}
		l2 := eventLine(o.Events, theirs.Entry)
		after = l1 == 0 || l2 == 0 || l2 > l1
	}
	if after {
		return fmt.Sprintf("its pass %s was judged by rules no authority approved (rules_sha256 %.12s), pinned by its %s at %s, after this task's rules were pinned (%s at %s); if its work is not this task's, an authority moves this task's base past it (geas task revalidate --task %s --base REV --by AUTHORITY --reason TEXT), or approves the rules of tasks like it before they run (geas task approve)",
			e.RunID, e.RulesSHA256, pinKind(theirs.Entry), cutText(theirs.Entry.StartedAt, maxRunIDText), pinKind(mine), cutText(mine.StartedAt, maxRunIDText), in.Task)
	}
	return ""
}

// eventLine is the line of the event of events logged for history entry h (0: none).
func eventLine(events []record.EventHash, h record.HistoryEntry) int {
	for _, ev := range events {
		if ev.Hash == h.Hash && (ev.EventType == record.EventGateResult || ev.EventType == record.EventRulesApproval) {
			return ev.Line
		}
	}
	return 0
}

// firstPin is the earliest entry of a history that pinned rules: an approval or a gate run that
// recorded the rules it read.
func firstPin(r *record.Record) (record.HistoryEntry, bool) {
	if r == nil {
		return record.HistoryEntry{}, false
	}
	for _, h := range r.History() {
		if h.RulesSHA256 != "" && (h.Kind == record.KindApproval || h.IsGateRun()) {
			return h, true
		}
	}
	return record.HistoryEntry{}, false
}

func pinKind(e record.HistoryEntry) string {
	if e.Kind == record.KindApproval {
		return "approval"
	}
	return "first gate run " + cutText(e.RunID, maxRunIDText)
}

// readPinned is record.ReadPinned of task directory dir's pinned copy for the rules digest want,
// through the copies geas gate --all shares when the run has them.
func (in *Snapshot) readPinned(dir, want string) (map[string]any, string) {
	if in.shared != nil {
		return in.shared.pinned.read(in.Geas, dir, want)
	}
	return record.ReadPinned(in.Geas, dir, want, PinnedMaxBytes)
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

// otherRecord is record.Load of the task directory dir's record (nil when it cannot be read, or
// when its history holds no gate pass as the gate writes one), through the runs' shared reads when
// the run has them; a run alone reads each file once, through reads of its own.
func (in *Snapshot) otherRecord(dir string, own *sharedRecords) *record.Record {
	s := own
	if in.shared != nil {
		s = &in.shared.others
	}
	return s.load(in.Geas, dir)
}

// recordFiles are the files of a task directory record.Load reads, with the bounds of their
// reads here (what record.Load bounds more tightly it refuses as it would).
var recordFiles = [...]struct {
	name  string
	limit int64
}{{record.RecordFile, record.MaxBytes}, {record.HistoryFile, record.MaxHistoryBytes}, {record.IntegrationFile, record.MaxBytes}}

// sharedRecords are the records of other tasks as attribution last read them, by task directory:
// each of the task's files (recordFiles) kept open (fsutil.HeldFile) with the bytes of its latest
// read, and the record parsed from those bytes. Before a record is handed out again, each file is
// checked with a Stat of its path, which opens nothing (fsutil.HeldFile.Unchanged: the same file,
// with the size, modification and change time it had at that read; a missing one still missing):
// a file that changed is read again (through its handle while the path still names it, so an
// appended history is not opened again; else opened afresh) and the record parsed again from what
// was read. So what is handed out is always parsed from bytes the gate read, as the files are now
// (a task that passed earlier in the same --all, or whose pass was revoked, is read anew), and it
// is judged (its history verified) by every run that uses it. Safe for concurrent use; close
// releases the handles.
type sharedRecords struct {
	mu   sync.Mutex
	recs map[string]*heldRecord
	open int // handles kept open (maxHeldOpen)
}

// heldRecord is one task directory's files as last read, and what was parsed from them.
type heldRecord struct {
	files   [len(recordFiles)]heldRead
	parsed  bool
	rec     *record.Record // nil: it cannot be read, or claims no pass
	mayPass bool
}

// heldRead is one file's latest read: the handle kept (nil when the read failed), and its answer.
type heldRead struct {
	h    *fsutil.HeldFile
	data []byte
	err  error
}

// load returns the record of task directory dir, parsed again only when one of its files changed
// since it was last parsed; nil when it cannot be read or its history holds no gate pass as the
// gate writes it.
func (s *sharedRecords) load(geas *os.Root, dir string) *record.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(dir)
	same := e.parsed
	check := func(i int) {
		name := dir + "/" + recordFiles[i].name
		if !e.files[i].current(geas, name) {
			same = false
			e.files[i].read(geas, name, recordFiles[i].limit, &s.open)
		}
	}
	check(0)
	check(1)
	hist := e.files[1]
	// A history absent (an earlier layout kept it in record.json) or unreadable may hold a pass;
	// one written otherwise than the gate writes a pass is no gate's, and attributes nothing (its
	// integration.json is then not read).
	mayPass := hist.err != nil || bytes.Contains(hist.data, passWritten)
	if !mayPass {
		e.parsed, e.rec, e.mayPass = true, nil, false
		return nil
	}
	check(2)
	if same && e.mayPass {
		return e.rec
	}
	e.parsed, e.rec, e.mayPass = true, nil, true
	d := fsutil.ServedDir(geas, dir)
	for i, f := range recordFiles {
		d.Serve(dir+"/"+f.name, e.files[i].data, e.files[i].err)
	}
	if rec, err := record.LoadFrom(d, dir+"/"+record.RecordFile); err == nil {
		e.rec = rec
	}
	return e.rec
}

// loadFresh is record.Load of dir's record, its files read now through the handles s keeps (Shared.LoadRecord).
// The record parsed is the caller's own (it may append to it): attribution parses what was read
// anew when it next loads dir.
func (s *sharedRecords) loadFresh(geas *os.Root, dir string) (*record.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(dir)
	e.parsed, e.rec = false, nil
	name := dir + "/" + record.RecordFile
	d := fsutil.ServedDir(geas, dir)
	for i, f := range recordFiles {
		e.files[i].read(geas, dir+"/"+f.name, f.limit, &s.open)
		if err := e.files[i].err; err != nil && !errors.Is(err, fs.ErrNotExist) {
			return record.Load(geas, name) // its error, as record.Load words it
		}
		d.Serve(dir+"/"+f.name, e.files[i].data, e.files[i].err)
	}
	rec, err := record.LoadFrom(d, name)
	if err != nil || rec.ResultLags() {
		return record.Load(geas, name)
	}
	return rec, nil
}

// current reports whether name still holds what r read: the held file unchanged, or a file that
// was missing still missing.
func (r *heldRead) current(geas *os.Root, name string) bool {
	if r.h != nil {
		return r.h.Unchanged(geas, name)
	}
	if !errors.Is(r.err, fs.ErrNotExist) {
		return false // never read, or a read that failed otherwise: read again
	}
	_, err := geas.Stat(name)
	return errors.Is(err, fs.ErrNotExist)
}

// read reads name again: through the held handle while the path names its file, else afresh.
// open counts the handles kept open by the reads sharing it: past maxHeldOpen, a file read afresh
// is not kept open (its Stat is kept, so that Unchanged still answers; reading it again opens it).
func (r *heldRead) read(geas *os.Root, name string, limit int64, open *int) {
	if r.h != nil {
		if data, ok, err := r.h.ReadAgain(geas, name, limit); ok {
			r.data, r.err = data, err
			return
		}
		r.close(open)
	}
	r.h, r.data, r.err = fsutil.Hold(geas, name, limit)
	if r.h.Open() {
		if *open >= maxHeldOpen {
			r.h.Release()
		} else {
			*open++
		}
	}
}

// close closes r's handle, counted in open.
func (r *heldRead) close(open *int) {
	if r.h.Open() {
		*open--
	}
	r.h.Close()
}

// maxHeldOpen bounds the handles attribution keeps open for the records, and for the pinned
// copies, of the other tasks of one geas gate --all (each file of a task is one), so that a large
// mission does not run the process out of file descriptors.
var maxHeldOpen = 512

// close releases the handles s keeps; s stays usable (its next load reads the files afresh).
func (s *sharedRecords) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.recs {
		for i := range e.files {
			e.files[i].close(&s.open)
		}
	}
	s.recs = nil
}

// passWritten is how the gate writes a passing verdict in a history line.
var passWritten = []byte(`"verdict":"pass"`)

// sharedPinned are the other tasks' pinned copies (contract.pinned.json) as attribution last read
// them, by task directory, checked before each use as sharedRecords checks a record's files; the
// rules each digest asked for were found to hold, as record.ReadPinned answers them, are kept
// with the bytes they were found in. Safe for concurrent use.
type sharedPinned struct {
	mu   sync.Mutex
	copy map[string]*heldPinned
	open int // handles kept open (maxHeldOpen)
}

type heldPinned struct {
	file heldRead
	read bool
	by   map[string]pinnedAnswer // by the rules digest asked for
}

type pinnedAnswer struct {
	rules map[string]any
	why   string
}

// read is record.ReadPinned(geas, dir, want, PinnedMaxBytes), the file read only when it changed
// since its last read and the answer computed once for the bytes read.
func (s *sharedPinned) read(geas *os.Root, dir, want string) (map[string]any, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.copy == nil {
		s.copy = map[string]*heldPinned{}
	}
	e := s.copy[dir]
	if e == nil {
		e = &heldPinned{}
		s.copy[dir] = e
	}
	name := path.Join(dir, record.PinnedFile)
	if !e.read || !e.file.current(geas, name) {
		e.file.read(geas, name, PinnedMaxBytes, &s.open)
		e.read, e.by = true, map[string]pinnedAnswer{}
	}
	a, ok := e.by[want]
	if !ok {
		a.rules, a.why = record.PinnedFrom(e.file.data, e.file.err, want)
		e.by[want] = a
	}
	return a.rules, a.why
}

func (s *sharedPinned) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.copy {
		e.file.close(&s.open)
	}
	s.copy = nil
}

// entry is what s holds of task directory dir, made empty when it holds nothing; s.mu is held.
func (s *sharedRecords) entry(dir string) *heldRecord {
	if s.recs == nil {
		s.recs = map[string]*heldRecord{}
	}
	e := s.recs[dir]
	if e == nil {
		e = &heldRecord{}
		s.recs[dir] = e
	}
	return e
}

// readNow reads file i of recordFiles of task directory dir now, through the handle s holds while
// the path still names that file, else afresh (and holds it); what attribution parsed of dir is
// parsed again when it next loads it.
func (s *sharedRecords) readNow(geas *os.Root, dir string, i int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(dir)
	e.parsed, e.rec = false, nil
	e.files[i].read(geas, dir+"/"+recordFiles[i].name, recordFiles[i].limit, &s.open)
	return e.files[i].data, e.files[i].err
}
