package tiers

import (
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
// Under geas gate --all each run reads them again rather than sharing one read: a task that
// passed earlier in the same --all accounts for its files in the runs after it.
func (in *Snapshot) readOthers(p *project.Project) {
	if p == nil || in.Geas == nil || in.Mission == "" {
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
		rec, err := record.Load(in.Geas, dir+"/record.json")
		if err != nil || rec == nil || !claimsPass(rec.History()) {
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
