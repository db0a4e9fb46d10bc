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

	"github.com/geas-dev/geas/contract"
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

// Records are the task records a gate run judges, read in one step under the task lock before
// the crash completion uses this task's (ReadRecords): this task's record (record.Load's answer),
// its facts, its events of the event log and, when the completion will ask, what its pinned copy
// holds; and, for a task whose contract names a base, the mission's other tasks that claim a
// pass, with what attribution judges of them (OtherTask).
type Records struct {
	Record *record.Record
	Err    error
	// Facts are Record's facts under the signing key (record.FactsOf); nil when Err.
	Facts *record.Facts
	// Keys and Events are this task's events of the log (record.MissionEvents), read when the
	// completion can use them (a history whose chain and signatures verify) or the other tasks are
	// read: Events nil when not read; Keys nil when not read or when the log cannot be read
	// (Events.Err).
	Keys   *record.EventKeys
	Events *TaskEvents
	// PinnedFor is the rules digest this task's pinned copy was read for, the one the completion
	// of its latest entry asks for (pinAsked; "": not read), and PinnedHolds whether the copy
	// holds those rules (record.PinnedHolds's answer).
	PinnedFor   string
	PinnedHolds bool
	// Others are the other tasks of the mission whose histories record a gate pass, with their
	// facts, events and pinned rules (readOthers's), when OthersRead: only for a contract with a
	// base.
	Others     []OtherTask
	OthersRead bool
}

// recordRead is one task of ReadRecords: its id and directory, whether it is the run's own, and
// what was read of it.
type recordRead struct {
	id, dir string
	own     bool
	rec     *record.Record
	facts   *record.Facts
}

// ReadRecords reads the task records one gate run judges, once, through one call site per reader
// for all the tasks (SPEC §5.3 B: the other tasks are verified through the same checks as this
// one): for each task its record and facts, then the mission's event log once, split per task,
// then the pinned copies that will be asked for. The other tasks are read only when k, the
// contract the run judges (nil: none read), names a base; a command that does not evaluate a
// snapshot passes nil. shared, under geas gate --all, is what the runs share (nil: none).
func ReadRecords(p *project.Project, mission, task, taskDir string, k *contract.Contract, shared *Shared) *Records {
	r := &Records{}
	geas := p.Geas
	tasks := []recordRead{{id: task, dir: taskDir, own: true}}
	if k != nil && k.TaskID == task && k.BaseSnapshot != "" && mission != "" {
		r.OthersRead = true
		if ids, err := p.Tasks(mission); err == nil {
			for _, id := range ids {
				if id != task {
					tasks = append(tasks, recordRead{id: id, dir: project.TaskDir(mission, id)})
				}
			}
		}
	}
	own := &sharedRecords{}
	defer own.close()
	key := record.SigningKey()
	kept := tasks[:0]
	for _, t := range tasks {
		rec, err := readRecord(geas, t.dir, t.own, shared, own)
		if t.own {
			r.Record, r.Err = rec, err
		}
		if rec == nil || !t.own && !claimsPass(rec.History()) {
			continue
		}
		t.rec, t.facts = rec, record.FactsOf(rec, key)
		kept = append(kept, t)
	}
	nOthers := len(kept)
	if r.Record != nil {
		r.Facts = kept[0].facts // this task's comes first
		nOthers--
	}
	// The completion reads the events only of a history whose chain and signatures verify.
	f := r.Facts
	completes := f != nil && len(f.History) > 0 && f.ChainErr == nil && len(f.BadSignatures) == 0
	var events map[string][]record.EventHash
	var eventsErr error
	switch {
	case !completes && nOthers > 0 && shared != nil:
		// Only the other tasks need the log: through the index the runs of geas gate --all share.
		events, eventsErr = shared.Events.MissionEventHashes(geas, mission)
		r.Events = &TaskEvents{Hashes: events[task], Err: eventsErr}
	case completes || nOthers > 0:
		r.Keys, events, eventsErr = record.MissionEvents(geas, mission, task, nOthers > 0)
		r.Events = &TaskEvents{Hashes: events[task], Err: eventsErr}
	}
	for _, t := range kept {
		var o *OtherTask
		want := ""
		if t.own {
			if completes && eventsErr == nil {
				want = pinAsked(t.facts)
			}
		} else {
			r.Others = append(r.Others, OtherTask{ID: t.id, Dir: t.dir, Record: t.rec, Facts: t.facts, Events: events[t.id], EventsErr: eventsErr})
			o = &r.Others[len(r.Others)-1]
			want = o.standing(task, r.Record, r.Events)
		}
		if want == "" {
			continue
		}
		rules, why := readPinned(geas, t.dir, want, t.own, shared)
		if t.own {
			r.PinnedFor, r.PinnedHolds = want, why == ""
		} else {
			o.Pinned, o.PinnedWhy = rules, why
		}
	}
	return r
}

// TaskEvents are a task's events that name a history entry by its hash, as one read of the event
// log found them (record.TaskEventHashes).
type TaskEvents struct {
	Hashes []record.EventHash
	// Err is why the event log could not be read (then Hashes is empty): the history check says
	// the cross-check could not be done.
	Err error
}

// pinAsked is the rules digest the crash completion of the latest entry of a history (whose facts
// are f) asks the task's pinned copy for: that entry's, when it is the entry that pins the task's
// rules (a first gate run that recorded them, or an approval: record.Facts.Pin); "" when the
// completion asks nothing of the copy.
func pinAsked(f *record.Facts) string {
	if !f.Pinned || len(f.History) == 0 || f.Pin.Entry.Hash != f.History[len(f.History)-1].Hash {
		return ""
	}
	return f.Pin.RulesSHA256
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
		if want := o.standing(in.Task, in.Record, in.taskEvents); want != "" {
			o.Pinned, o.PinnedWhy = readPinned(in.Geas, o.Dir, want, false, in.shared)
		}
	}
}

// standing sets what attribution needs to know of the gate pass o's record may rest on (mayStand:
// Stands, and the order of its pins against this task's, whose record is mine and whose events
// mineEvents: Approved, PinnedAfter), and returns the rules digest its pinned copy is read for
// (PinnedFor): only when that pass may account for files; "" when its copy is not read.
func (o *OtherTask) standing(task string, mine *record.Record, mineEvents *TaskEvents) string {
	e, ok := mayStand(o)
	if !ok {
		return ""
	}
	o.Stands = e
	if o.Approved, o.PinnedAfter = pinOrderOf(task, mine, mineEvents, o, e); o.Approved || o.PinnedAfter == "" {
		o.PinnedFor = e.RulesSHA256
		return e.RulesSHA256
	}
	return ""
}

// pinOrder says whether an authority approved the rules o's pass e was judged by before it
// (approvedBefore), and, when none did, why those rules were pinned after this task's
// (pinnedAfter; "": not after).
func pinOrder(in *Snapshot, o *OtherTask, e record.HistoryEntry) (approved bool, after string) {
	return pinOrderOf(in.Task, in.Record, in.taskEvents, o, e)
}

// pinOrderOf is pinOrder against task, whose record is mine and whose events mineEvents.
func pinOrderOf(task string, mine *record.Record, mineEvents *TaskEvents, o *OtherTask, e record.HistoryEntry) (approved bool, after string) {
	if approvedBefore(o.Facts.History, e) {
		return true, ""
	}
	return false, pinnedAfter(task, mine, mineEvents, *o, e)
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
func pinnedAfter(task string, rec *record.Record, mineEvents *TaskEvents, o OtherTask, e record.HistoryEntry) string {
	mine, ok := firstPin(rec)
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
		if mineEvents != nil && mineEvents.Err == nil {
			l1 = eventLine(mineEvents.Hashes, mine)
		}
		l2 := eventLine(o.Events, theirs.Entry)
		after = l1 == 0 || l2 == 0 || l2 > l1
	}
	if after {
		return fmt.Sprintf("its pass %s was judged by rules no authority approved (rules_sha256 %.12s), pinned by its %s at %s, after this task's rules were pinned (%s at %s); if its work is not this task's, an authority moves this task's base past it (geas task revalidate --task %s --base REV --by AUTHORITY --reason TEXT), or approves the rules of tasks like it before they run (geas task approve)",
			e.RunID, e.RulesSHA256, pinKind(theirs.Entry), cutText(theirs.Entry.StartedAt, maxRunIDText), pinKind(mine), cutText(mine.StartedAt, maxRunIDText), task)
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

// readPinned is record.ReadPinned of the pinned copy of task directory dir for the rules digest
// want: this task's (own) read now, as the crash completion judges it; another task's through the
// copies geas gate --all shares when the run has them (shared).
func readPinned(geas *os.Root, dir, want string, own bool, shared *Shared) (map[string]any, string) {
	if shared != nil && !own {
		return shared.pinned.read(geas, dir, want)
	}
	return record.ReadPinned(geas, dir, want, PinnedMaxBytes)
}

// readPinned is readPinned of another task's copy, through what the run shares.
func (in *Snapshot) readPinned(dir, want string) (map[string]any, string) {
	return readPinned(in.Geas, dir, want, false, in.shared)
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

// readRecord is record.Load of the record of task directory dir. This task's (own) is read now,
// as the crash completion judges it (under geas gate --all through the handles the runs share,
// Shared.LoadRecord). Another task's is read through the reads the runs of geas gate --all share
// (shared), else through s, the run's own: parsed again only when one of its files changed, and
// nil (with no error) when it cannot be read or its history holds no gate pass as the gate writes
// one (sharedRecords.load).
func readRecord(geas *os.Root, dir string, own bool, shared *Shared, s *sharedRecords) (*record.Record, error) {
	name := dir + "/" + record.RecordFile
	if own {
		if shared != nil {
			return shared.LoadRecord(geas, dir)
		}
		return record.Load(geas, name)
	}
	if shared != nil {
		s = &shared.others
	}
	return s.loadBy(geas, dir, func(d *fsutil.Dir) (*record.Record, error) { return record.LoadFrom(d, name) }), nil
}

// otherRecord is readRecord of another task's record, through the runs' shared reads when the run
// has them, else through own.
func (in *Snapshot) otherRecord(dir string, own *sharedRecords) *record.Record {
	rec, _ := readRecord(in.Geas, dir, false, in.shared, own)
	return rec
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
	return s.loadBy(geas, dir, func(d *fsutil.Dir) (*record.Record, error) { return record.LoadFrom(d, dir+"/"+record.RecordFile) })
}

// loadBy is load with the record parsed by parse (record.LoadFrom of the files as read, served
// through d).
func (s *sharedRecords) loadBy(geas *os.Root, dir string, parse func(d *fsutil.Dir) (*record.Record, error)) *record.Record {
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
	if rec, err := parse(d); err == nil {
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
