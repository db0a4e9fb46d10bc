package tiers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// attributedPassesKey is the key of a gate run's history entry that holds the digest of the other
// tasks' passes the run attributed files to (attributedPasses); an entry without it attributed
// nothing ("").
const attributedPassesKey = "attributed_passes"

// maxAttributionNotes bounds how many refused passes and attributed files are named one by one;
// maxAttributionText bounds what one refusal quotes, and maxRunIDText a run id (both are what
// other tasks' files say, which agents can write).
const (
	maxAttributionNotes = 5
	maxAttributionText  = 400
	maxRunIDText        = 40
)

// attribution is what the other tasks' verified passes account for in this task's change
// base..head (SPEC §5.3 B): a changed file whose entry at this head equals its entry at the
// verified head of another task of the mission, whose own judged change included it, is that
// task's work. It is left out of this task's scope, stub, marker and protected-check checks.
type attribution struct {
	// files maps a changed path (relative to the repository's top, as the diff lists it) to the
	// pass it is attributed to.
	files map[string]*verifiedPass
	// over maps a changed path no pass accounts for, but whose entry a confirmed pass's own change
	// made (and this head changed again), to that pass: its head's entry is what this task's
	// protected-check check compares with, not the base's (a verified task's test weakened after
	// its pass is a protected check changed, wherever this task's base is).
	over map[string]*verifiedPass
	// undone are the paths a confirmed pass's own change included that this task's change does not
	// list (this head holds the base's entry there) but whose entry differs from the one that pass
	// verified: a verified change this head undid. Each is in over too.
	undone []string
	// used are the passes that account for at least one file, by task id.
	used []*verifiedPass
	// refused says, for each task whose claimed pass could not be confirmed, why (a warning).
	refused []string
	// err is why the attribution could not be made at all (then nothing is attributed).
	err error
}

// verifiedPass is another task's pass the gate confirmed: its latest gate run, a pass, in a
// history that verifies, whose gate_result event is logged, judged by rules an authority approved
// before it or pinned no later than this task's (pinnedAfter), whose pinned rules name the task
// and its base, and whose head is an ancestor of this head.
type verifiedPass struct {
	task, run, head, base string
	// approved says an authority approved the rules the pass was judged by, before it
	// (approvedBefore): only then does it account for changes to protected checks.
	approved bool
	// files are the paths attributed to it, in order, as shown: relative to the project root.
	files []string
}

// attributed reports whether a path of the repository (as the diff lists it) is another task's
// work. Safe on nil.
func (a *attribution) attributed(p string) bool {
	if a == nil {
		return false
	}
	_, ok := a.files[p]
	return ok
}

// attributedCheck reports whether a path of the repository (as the diff lists it) is another
// task's work as far as protected checks and weakening markers go (SPEC §5.2a): only a pass under
// rules an authority approved accounts for those, as only approved rules make tests.may_change
// count. Safe on nil.
func (a *attribution) attributedCheck(p string) bool {
	if a == nil {
		return false
	}
	v, ok := a.files[p]
	return ok && v.approved
}

// note says how many changed files were attributed, and to which tasks' passes, for the evidence
// of the checks that left them out; "" when none was.
func (a *attribution) note() string {
	if a == nil || len(a.files) == 0 {
		return ""
	}
	var parts []string
	for _, v := range a.used {
		parts = append(parts, fmt.Sprintf("%s %s at %s (%s)", v.task, txt.Truncate(v.run, maxRunIDText), short(v.head), txt.JoinLimited(v.files, maxAttributionNotes)))
	}
	return fmt.Sprintf("%s attributed to other tasks' verified passes and left out: %s",
		txt.Counted(len(a.files), "changed file", "changed files"), txt.JoinLimited(parts, maxAttributionNotes))
}

// attribution returns the run's attribution, made on first use (the repeat check of SPEC §7.1,
// test integrity, the stub scan and scope read the same one). Nothing is attributed without a
// base to diff against.
func (pass *Pass) attribution() *attribution {
	if pass.attrib == nil {
		pass.attrib = attribute(pass)
	}
	return pass.attrib
}

// attributedPasses digests the other tasks' passes the run attributes files to (SPEC §5.3 B):
// the RFC 8785 sha256 of [{task, run_id, head}], by task; "" when it attributes nothing, as an
// entry recorded without the field reads.
func attributedPasses(pass *Pass) string {
	if pass.head == "" || !pass.haveBase {
		return ""
	}
	a := pass.attribution()
	if len(a.used) == 0 {
		return ""
	}
	list := make([]map[string]string, 0, len(a.used))
	for _, v := range a.used {
		list = append(list, map[string]string{"task": v.task, "run_id": v.run, "head": v.head})
	}
	d, err := canon.SHA256(list)
	if err != nil {
		return "unreadable" // never equal to a recorded digest, so never the same attempt
	}
	return d
}

// attributedPassesOf is the digest a recorded gate run holds ("" when the entry has none).
func attributedPassesOf(e record.HistoryEntry) string {
	raw, ok := e.Extra[attributedPassesKey]
	if !ok {
		return ""
	}
	s, ok := jsonString(raw)
	if !ok {
		return "unreadable"
	}
	return s
}

// attribute makes the attribution of the run (SPEC §5.3 B): it confirms each other task's claimed
// pass (confirmPass), then, for each path of base..head (the bookkeeping left out), looks the
// path up in the confirmed passes' heads and bases only: no diff of another task is made.
func attribute(pass *Pass) *attribution {
	a := &attribution{files: map[string]*verifiedPass{}}
	if pass.repo == nil || !pass.haveBase || pass.head == "" || len(pass.in.Others) == 0 {
		return a
	}
	changes, err := pass.repo.FileChanges(pass.base, pass.head)
	if err != nil {
		a.err = err
		return a
	}
	pp := pass.paths
	var paths []string
	here := map[string]git.FileSide{}
	shown := map[string]string{}
	for _, c := range changes {
		rel, in := pp.rel(c.Path)
		if in && bookkeeping(rel) {
			continue // the orchestration's own files are nobody's work
		}
		paths = append(paths, c.Path)
		here[c.Path], shown[c.Path] = c.To, rel
	}
	if len(paths) == 0 {
		return a
	}
	key := record.SigningKey()
	idx := pass.in.Events
	if idx == nil {
		idx = &record.EventIndex{}
		defer idx.Close()
	}
	var passes []*verifiedPass
	for _, o := range pass.in.Others {
		if o.ID == pass.in.Task {
			continue
		}
		v, why := confirmPass(pass, o, key, idx)
		switch {
		case why != "":
			a.refused = append(a.refused, fmt.Sprintf("%s: %s", o.ID, cutText(why, maxAttributionText)))
		case v != nil:
			passes = append(passes, v)
		}
	}
	if len(passes) == 0 {
		return a
	}
	look := newPassLookup(pass.repo, pass.head, passes)
	for _, p := range paths {
		v, err := look.owner(p, here[p])
		if err != nil {
			a.err = err
			a.files, a.used = map[string]*verifiedPass{}, nil
			return a
		}
		if v != nil {
			a.files[p] = v
			v.files = append(v.files, shown[p])
			continue
		}
		w, err := look.changedOver(p, here[p])
		if err != nil {
			a.err = err
			a.files, a.used, a.over = map[string]*verifiedPass{}, nil, nil
			return a
		}
		if w != nil {
			if a.over == nil {
				a.over = map[string]*verifiedPass{}
			}
			a.over[p] = w
		}
	}
	if err := a.findUndone(pass, look, passes, here); err != nil {
		a.err = err
		a.files, a.used, a.over, a.undone = map[string]*verifiedPass{}, nil, nil, nil
		return a
	}
	for _, v := range passes {
		if len(v.files) > 0 {
			a.used = append(a.used, v)
		}
	}
	return a
}

// findUndone lists the paths the confirmed passes' own changes included that this task's change
// (here) does not list, where this head holds something else than the pass verified: base..head
// does not show a verified change put back to the base's entry (a test a pass added, deleted
// again; a pass's assertions taken out), so it is looked up from the passes' side.
func (a *attribution) findUndone(pass *Pass, look *passLookup, passes []*verifiedPass, here map[string]git.FileSide) error {
	pp := pass.paths
	seen := map[string]bool{}
	for _, v := range passes {
		changes, err := pass.repo.FileChanges(v.base, v.head)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if _, listed := here[c.Path]; listed || seen[c.Path] {
				continue
			}
			seen[c.Path] = true
			if rel, in := pp.rel(c.Path); in && bookkeeping(rel) {
				continue
			}
			now, err := look.at(pass.head, c.Path)
			if err != nil {
				return err
			}
			w, err := look.changedOver(c.Path, now)
			if err != nil {
				return err
			}
			if w != nil {
				if a.over == nil {
					a.over = map[string]*verifiedPass{}
				}
				a.over[c.Path] = w
				a.undone = append(a.undone, c.Path)
			}
		}
	}
	return nil
}

// confirmPass confirms another task's claimed pass, as tier 0 confirms this task's history: nil
// and "" when the task has no standing pass (its latest entry is not a gate pass: a later run, a
// revocation, a grant) or its pass is not in this head's history; nil and why when the claim
// cannot be confirmed (a warning: it attributes nothing).
func confirmPass(pass *Pass, o OtherTask, key []byte, idx *record.EventIndex) (*verifiedPass, string) {
	in := pass.in
	other := &Snapshot{ProjectDir: in.ProjectDir, Root: in.Root, Geas: in.Geas, Mission: in.Mission, Task: o.ID, TaskDir: o.Dir, Record: o.Record, Events: idx}
	if problems := HistoryProblems(other, key); len(problems) > 0 {
		return nil, "its gate history does not verify (" + txt.JoinLimited(problems, 2) + ")"
	}
	e, ok := standingPass(o.Record.History())
	if !ok {
		return nil, ""
	}
	if !fullSHA().MatchString(e.Head) || e.RunID == "" || e.RulesSHA256 == "" {
		return nil, fmt.Sprintf("its pass %s names no full head commit, run id or rules", e.RunID)
	}
	evs, err := idx.TaskEventHashes(in.Geas, in.Mission, o.ID)
	if err != nil {
		return nil, fmt.Sprintf("the event log cannot be read: %v", err)
	}
	if !slices.ContainsFunc(evs, func(ev record.EventHash) bool {
		return ev.EventType == record.EventGateResult && ev.Hash == e.Hash && ev.RunID == e.RunID
	}) {
		return nil, fmt.Sprintf("no %s event of mission %s, task %s names its pass %s (hash %.12s)", record.EventGateResult, in.Mission, o.ID, e.RunID, e.Hash)
	}
	approved := approvedBefore(o.Record.History(), e)
	if !approved {
		if why := pinnedAfter(in, o.Record, e, evs, idx); why != "" {
			return nil, why
		}
	}
	base, why := pinnedBase(in, o, e)
	if why != "" {
		return nil, why
	}
	ok, err = pass.repo.IsAncestor(e.Head, pass.head)
	if err != nil {
		return nil, fmt.Sprintf("the ancestry of its pass head %s in %s cannot be read: %v", short(e.Head), short(pass.head), err)
	}
	if !ok {
		return nil, "" // a pass on a branch this head does not hold accounts for nothing here
	}
	return &verifiedPass{task: o.ID, run: e.RunID, head: strings.ToLower(e.Head), base: base, approved: approved}, ""
}

// standingPass is the pass a task's state rests on, as PassProblems reads it: the latest entry of
// the history, passing over later gate runs refused with state_ineligible, is a gate run with
// verdict pass.
func standingPass(hist []record.HistoryEntry) (record.HistoryEntry, bool) {
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.IsGateRun() && e.Verdict == string(vocab.VerdictError) && onlyIneligible(e.Causes) {
			continue
		}
		return e, e.IsGateRun() && RecordsPass(e)
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
// the mission's event log (theirs: the other task's events); a pin whose event is not found is
// after.
func pinnedAfter(in *Snapshot, other *record.Record, e record.HistoryEntry, theirEvents []record.EventHash, idx *record.EventIndex) string {
	mine, ok := firstPin(in.Record)
	if !ok {
		return "" // this run pins the task's rules: every earlier pin is before it
	}
	theirs, ok := record.PinnedRules(other)
	if !ok || theirs.RulesSHA256 != e.RulesSHA256 {
		return fmt.Sprintf("its pass %s was judged by rules no authority approved (rules_sha256 %.12s), which its history does not show pinned", e.RunID, e.RulesSHA256)
	}
	t1, err1 := time.Parse(time.RFC3339, mine.StartedAt)
	t2, err2 := time.Parse(time.RFC3339, theirs.Entry.StartedAt)
	after := err1 != nil || err2 != nil || t2.After(t1)
	if !after && t2.Equal(t1) {
		myEvents, err := idx.TaskEventHashes(in.Geas, in.Mission, in.Task)
		l1, l2 := eventLine(myEvents, mine), eventLine(theirEvents, theirs.Entry)
		after = err != nil || l1 == 0 || l2 == 0 || l2 > l1
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

// pinnedBase is the base commit the pass judged: read from the task's pinned rules, which must
// digest to the pass entry's rules_sha256 (chained, and signed with the key), name the task, and
// hold the base as a full SHA (the contract's base_snapshot, or what an unpinned one resolved to).
func pinnedBase(in *Snapshot, o OtherTask, e record.HistoryEntry) (string, string) {
	var rules map[string]any
	var why string
	if in.shared != nil {
		rules, why = in.shared.pinned.read(in.Geas, o.Dir, e.RulesSHA256)
	} else {
		rules, why = record.ReadPinned(in.Geas, o.Dir, e.RulesSHA256, PinnedMaxBytes)
	}
	if why != "" {
		return "", why
	}
	c, _ := rules["contract"].(map[string]any)
	if id, _ := c["task_id"].(string); id != o.ID {
		return "", fmt.Sprintf("the rules its pass %s was judged by are those of task %q", e.RunID, id)
	}
	base, _ := c["base_snapshot"].(string)
	if !fullSHA().MatchString(base) {
		b, _ := rules["base"].(map[string]any)
		base, _ = b["commit"].(string)
	}
	if !fullSHA().MatchString(base) {
		return "", fmt.Sprintf("the rules its pass %s was judged by record no base commit", e.RunID)
	}
	return strings.ToLower(base), ""
}

// passLookup looks the changed paths up in the confirmed passes' heads and bases, each entry
// read once, and the ancestry between pass heads once a pair.
type passLookup struct {
	repo   *git.Repo
	passes []*verifiedPass
	entry  map[[2]string]git.FileSide // {commit, path}
	anc    map[[2]string]bool         // {a, b}: a is an ancestor of b
}

func newPassLookup(repo *git.Repo, head string, passes []*verifiedPass) *passLookup {
	slices.SortFunc(passes, func(x, y *verifiedPass) int { return strings.Compare(x.task, y.task) })
	return &passLookup{repo: repo, passes: passes, entry: map[[2]string]git.FileSide{}, anc: map[[2]string]bool{}}
}

func (l *passLookup) at(commit, p string) (git.FileSide, error) {
	k := [2]string{commit, p}
	if s, ok := l.entry[k]; ok {
		return s, nil
	}
	s, err := l.repo.EntryAt(commit, p)
	if err != nil {
		return git.FileSide{}, err
	}
	l.entry[k] = s
	return s, nil
}

func (l *passLookup) ancestor(a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	k := [2]string{a, b}
	if ok, seen := l.anc[k]; seen {
		return ok, nil
	}
	ok, err := l.repo.IsAncestor(a, b)
	if err != nil {
		return false, err
	}
	l.anc[k] = ok
	return ok, nil
}

// owner returns the pass path p (whose entry at this head is now) is attributed to, or nil. A pass
// owns p when its own change included p (the entry at its base differs from the entry at its
// head: an addition, a deletion, a change of content, mode or kind, either side of a rename) and
// its head holds the entry this head holds (a deletion equals a deletion). So that no verified
// change is undone under cover of another, every other confirmed pass whose own change included
// p and whose head holds something else there must be an ancestor of the owner's head (its
// change is one the owner's pass already built on); otherwise nobody owns p. Of several owners
// (a task based before an earlier task's pass carries that task's files in its own change), the
// one whose head is an ancestor of all the others' heads: the pass that made the change; else the
// first by task id. The bases are read only for a path some pass's head holds as this head does.
func (l *passLookup) owner(p string, now git.FileSide) (*verifiedPass, error) {
	var same, differ []*verifiedPass
	for _, v := range l.passes {
		atHead, err := l.at(v.head, p)
		if err != nil {
			return nil, err
		}
		if atHead == now {
			same = append(same, v)
		} else {
			differ = append(differ, v)
		}
	}
	if len(same) == 0 {
		return nil, nil
	}
	changedOf := func(vs []*verifiedPass) ([]*verifiedPass, error) {
		var out []*verifiedPass
		for _, v := range vs {
			ok, err := l.changed(v, p)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, v)
			}
		}
		return out, nil
	}
	owners, err := changedOf(same)
	if err != nil || len(owners) == 0 {
		return nil, err
	}
	others, err := changedOf(differ)
	if err != nil {
		return nil, err
	}
	var standing []*verifiedPass // the owners no other pass's verified change of p is undone by
	for _, o := range owners {
		undone := false
		for _, v := range others {
			ok, err := l.ancestor(v.head, o.head)
			if err != nil {
				return nil, err
			}
			if !ok {
				undone = true
				break
			}
		}
		if !undone {
			standing = append(standing, o)
		}
	}
	return l.ordered(standing, true)
}

// changedOver returns the confirmed pass whose own change made an entry at p that this head (whose
// entry is now) changed again, or nil: of several, the one whose head all the others' heads are
// ancestors of (the latest verified change), else the first by task id.
func (l *passLookup) changedOver(p string, now git.FileSide) (*verifiedPass, error) {
	var made []*verifiedPass
	for _, v := range l.passes {
		atHead, err := l.at(v.head, p)
		if err != nil {
			return nil, err
		}
		if atHead == now {
			continue
		}
		ok, err := l.changed(v, p)
		if err != nil {
			return nil, err
		}
		if ok {
			made = append(made, v)
		}
	}
	return l.ordered(made, false)
}

// changed reports whether v's own change included p: the entry at its base differs from the
// entry at its head (both read through the cache).
func (l *passLookup) changed(v *verifiedPass, p string) (bool, error) {
	atHead, err := l.at(v.head, p)
	if err != nil {
		return false, err
	}
	atBase, err := l.at(v.base, p)
	if err != nil {
		return false, err
	}
	return atHead != atBase, nil
}

// ordered returns of vs the pass whose head is an ancestor of every other's head (earliest), or
// the one every other's head is an ancestor of (latest); else the first; nil when vs is empty.
func (l *passLookup) ordered(vs []*verifiedPass, earliest bool) (*verifiedPass, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	for _, o := range vs {
		all := true
		for _, w := range vs {
			a, b := o.head, w.head
			if !earliest {
				a, b = b, a
			}
			ok, err := l.ancestor(a, b)
			if err != nil {
				return nil, err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return o, nil
		}
	}
	return vs[0], nil
}

// verifiedEntry is the entry of path p (as the diff lists it) at the head of the pass whose
// verified change this head changed again (changedOver), and that pass; nil when there is none.
func (a *attribution) verifiedEntry(repo *git.Repo, p string) (git.FileSide, *verifiedPass, error) {
	if a == nil || a.over[p] == nil {
		return git.FileSide{}, nil, nil
	}
	v := a.over[p]
	s, err := repo.EntryAt(v.head, p)
	return s, v, err
}

// attributionWarning is the warning that names the other tasks' claimed passes the gate could not
// confirm, or why no attribution could be made; nil when there is nothing to say.
func attributionWarning(pass *Pass) *Check {
	a := pass.attribution()
	text := "other tasks' claimed passes are confirmed before they account for any changed file"
	switch {
	case a.err != nil:
		c := warnCheck(2, "scope:attribution", text, "no file attributed to other tasks: the trees of their passes cannot be read: "+a.err.Error(), vocab.CauseAttributionRefused)
		return &c
	case len(a.refused) > 0:
		c := warnCheck(2, "scope:attribution", text, fmt.Sprintf("nothing attributed to %s: %s",
			txt.Counted(len(a.refused), "task", "tasks"), txt.JoinLimited(a.refused, maxAttributionNotes)), vocab.CauseAttributionRefused)
		return &c
	}
	return nil
}

// jsonString decodes a JSON string value; false when raw is not one.
func jsonString(raw []byte) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
