package tiers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/git"
	txt "github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// attributedPassesKey is the key of a gate run's history entry that holds the digest of the other
// tasks' passes the run attributed files to (passesDigest); an entry without it attributed
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
	// verified: a verified change this head undid. Each is in over too. undoneAt is where each
	// lies in the project (placed where findUndone found it: no path of base..head, so tier 0 did
	// not place it).
	undone   []string
	undoneAt map[string]placed
	// used are the passes that account for at least one file, by task id.
	used []*verifiedPass
	// refused says, for each task whose claimed pass could not be confirmed, why (a warning).
	refused []string
	// err is why the attribution could not be made at all (then nothing is attributed).
	err error

	// What the checks read of it, made with it (attribute): overAt holds, for each path of over,
	// its entry at that pass's head (verifiedEntry); digest is the digest of the passes used
	// (passesDigest), which the run records and the repeat check compares; noted is note(), for
	// the evidence of the checks that left files out; warning is scope's warning about the
	// claimed passes not confirmed (attributionWarning), nil when none.
	overAt  map[string]git.FileSide
	digest  string
	noted   string
	warning *Check
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
// work.
func (a *attribution) attributed(p string) bool { return a.files[p] != nil }

// attributedCheck reports whether a path of the repository (as the diff lists it) is another
// task's work as far as protected checks and weakening markers go (SPEC §5.2a): only a pass under
// rules an authority approved accounts for those, as only approved rules make tests.may_change
// count.
func (a *attribution) attributedCheck(p string) bool { return a.files[p] != nil && a.files[p].approved }

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

// attribution is the run's attribution, made once after tier 0 resolved the base and the head
// (Evaluate, attribute): the repeat check of SPEC §7.1, test integrity, the stub scan, scope and
// the result read the same one. Before it is made (and for a run without a base to diff against)
// it attributes nothing.
func (pass *Pass) attribution() *attribution { return &pass.attrib }

// passesDigest digests the passes a run attributes files to (SPEC §5.3 B): the RFC 8785 sha256 of
// [{task, run_id, head}], by task; "" when it attributes nothing, as an entry recorded without
// the field reads (attemptOf).
func passesDigest(used []*verifiedPass) string {
	if len(used) == 0 {
		return ""
	}
	list := make([]map[string]string, 0, len(used))
	for _, v := range used {
		list = append(list, map[string]string{"task": v.task, "run_id": v.run, "head": v.head})
	}
	d, err := canon.SHA256(list)
	if err != nil {
		return "unreadable" // never equal to a recorded digest, so never the same attempt
	}
	return d
}

// attribute makes the attribution of the run (SPEC §5.3 B), once, with what the checks read of it
// (attributeFiles, then the digest of the passes used and scope's warning).
func attribute(pass *Pass) attribution {
	a := attributeFiles(pass)
	a.digest, a.noted = passesDigest(a.used), a.note()
	a.warning = warningOf(a)
	return *a
}

// attributeFiles confirms each other task's claimed pass (confirmPass), then, for each path of
// base..head (the bookkeeping left out), looks the path up in the confirmed passes' heads and
// bases only: no diff of another task is made.
func attributeFiles(pass *Pass) *attribution {
	a := &attribution{files: map[string]*verifiedPass{}}
	if pass.repo == nil || !pass.haveBase || pass.head == "" || len(pass.in.Others) == 0 {
		return a
	}
	changes, err := pass.repo.FileChanges(pass.base, pass.head)
	if err != nil {
		a.err = err
		return a
	}
	var paths []string
	here := map[string]git.FileSide{}
	shown := map[string]string{}
	for _, c := range changes {
		at := pass.placed.paths[c.Path]
		if at.in && at.bookkeeping {
			continue // the orchestration's own files are nobody's work
		}
		paths = append(paths, c.Path)
		here[c.Path], shown[c.Path] = c.To, at.rel
	}
	if len(paths) == 0 {
		return a
	}
	var passes []*verifiedPass
	for i, o := range pass.in.Others {
		if o.ID == pass.in.Task {
			continue
		}
		if i >= len(pass.othersHistory) {
			// Never after tier 0, which verifies every one of them: nothing unverified is confirmed.
			a.refused = append(a.refused, fmt.Sprintf("%s: its gate history was not verified by this run", o.ID))
			continue
		}
		v, why := confirmPass(pass, o, pass.othersHistory[i])
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
		a.files, a.used, a.over, a.undone, a.undoneAt = map[string]*verifiedPass{}, nil, nil, nil, nil
		return a
	}
	for p, w := range a.over {
		s, err := look.at(w.head, p) // read by changedOver already
		if err != nil {
			a.err = err
			a.files, a.used, a.over, a.undone, a.undoneAt = map[string]*verifiedPass{}, nil, nil, nil, nil
			return a
		}
		if a.overAt == nil {
			a.overAt = map[string]git.FileSide{}
		}
		a.overAt[p] = s
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
			at := pp.place(c.Path)
			if at.in && at.bookkeeping {
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
				if a.undoneAt == nil {
					a.undoneAt = map[string]placed{}
				}
				a.undoneAt[c.Path] = at
			}
		}
	}
	return nil
}

// confirmPass confirms another task's claimed pass, as tier 0 confirms this task's history, from
// what the snapshot read of it (OtherTask: its record, facts, events and pinned rules) and what
// tier 0's history check found of its history (h: what does not verify, the pass it stands on;
// histories): nil and ""
// when the task has no standing pass (its latest entry is not a gate pass: a later run, a
// revocation, a grant) or its pass is not in this head's history; nil and why when the claim
// cannot be confirmed (a warning: it attributes nothing).
func confirmPass(pass *Pass, o OtherTask, h otherHistory) (*verifiedPass, string) {
	in := pass.in
	if o.Facts == nil {
		return nil, "its record was not read with its facts" // never from a snapshot (readOthersFacts)
	}
	if problems := h.problems; len(problems) > 0 {
		return nil, "its gate history does not verify (" + txt.JoinLimited(problems, 2) + ")"
	}
	e, ok := h.pass, h.stands
	if !ok {
		return nil, ""
	}
	if !fullSHA().MatchString(e.Head) || e.RunID == "" || e.RulesSHA256 == "" {
		return nil, fmt.Sprintf("its pass %s names no full head commit, run id or rules", e.RunID)
	}
	evs, err := o.Events, o.EventsErr
	if err != nil {
		return nil, fmt.Sprintf("the event log cannot be read: %v", err)
	}
	if !slices.ContainsFunc(evs, func(ev record.EventHash) bool {
		return ev.EventType == record.EventGateResult && ev.Hash == e.Hash && ev.RunID == e.RunID
	}) {
		return nil, fmt.Sprintf("no %s event of mission %s, task %s names its pass %s (hash %.12s)", record.EventGateResult, in.Mission, o.ID, e.RunID, e.Hash)
	}
	approved, after := o.Approved, o.PinnedAfter
	if o.Stands.Hash != e.Hash || o.Stands.RunID != e.RunID {
		// Not the pass the snapshot judged the pins of (an OtherTask not read by a snapshot).
		approved, after = pinOrder(in, &o, e)
	}
	if !approved && after != "" {
		return nil, after
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

// pinnedBase is the base commit the pass judged: read from the task's pinned rules, which must
// digest to the pass entry's rules_sha256 (chained, and signed with the key), name the task, and
// hold the base as a full SHA (the contract's base_snapshot, or what an unpinned one resolved to).
//
// The snapshot read the pinned copy for the task's latest gate pass, which a standing pass is
// (readOthersFacts); a pinned copy for another digest (an OtherTask not read by a snapshot) is
// read here.
func pinnedBase(in *Snapshot, o OtherTask, e record.HistoryEntry) (string, string) {
	rules, why := o.Pinned, o.PinnedWhy
	if o.PinnedFor != e.RulesSHA256 {
		rules, why = in.readPinned(o.Dir, e.RulesSHA256)
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
// The entry was read when the attribution was made (attributeFiles), in the repository the run
// judges.
func (a *attribution) verifiedEntry(_ *git.Repo, p string) (git.FileSide, *verifiedPass, error) {
	return a.overAt[p], a.over[p], nil
}

// attributionWarning is the warning that names the other tasks' claimed passes the gate could not
// confirm, or why no attribution could be made; nil when there is nothing to say.
func attributionWarning(pass *Pass) *Check { return pass.attrib.warning }

// warningOf is attributionWarning of a, made with it.
func warningOf(a *attribution) *Check {
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
