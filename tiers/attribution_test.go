package tiers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// ownerOf is the pass that owns path p at commit head of f's repository, of passes.
func ownerOf(t *testing.T, f *fixture, p, head string, passes ...*verifiedPass) *verifiedPass {
	t.Helper()
	return askLookup(t, f, p, head, passes, (*passLookup).owner)
}

// askLookup is ask's answer for path p, whose entry at commit head of f's repository it is given,
// of a passLookup of passes at that head.
func askLookup(t *testing.T, f *fixture, p, head string, passes []*verifiedPass,
	ask func(*passLookup, string, git.FileSide) (*verifiedPass, error)) *verifiedPass {
	t.Helper()
	repo, err := git.Open(f.dir)
	require.NoError(t, err)
	defer repo.Close()
	now, err := repo.EntryAt(head, p)
	require.NoError(t, err)
	v, err := ask(newPassLookup(repo, head, passes), p, now)
	require.NoError(t, err)
	return v
}

func TestAFileIsAttributedOnlyToAPassWhoseOwnChangeHeldItsEntry(t *testing.T) {
	f := newFixture(t, true)
	base := f.Git("rev-parse", "HEAD")
	f.write("x.txt", "x1\n")
	f.write("y.txt", "y\n")
	h1 := f.commit("a")
	a := &verifiedPass{task: "a", run: "gate-1", head: h1, base: base}
	// Later work on y.txt only: x.txt at the head is a's.
	f.write("y.txt", "y2\n")
	head := f.commit("later")
	assert.Same(t, a, ownerOf(t, f, "x.txt", head, a))
	// A pass whose own change did not include the path (its base already held the entry) owns
	// nothing there, whatever its head holds.
	b := &verifiedPass{task: "b", run: "gate-1", head: h1, base: h1}
	assert.Nil(t, ownerOf(t, f, "x.txt", head, b))
	// Other content, a case variant of the path, and the same blob as a symbolic link are not a's.
	f.write("x.txt", "x2\n")
	assert.Nil(t, ownerOf(t, f, "x.txt", f.commit("edit"), a))
	f.write("x.txt", "x1\n")
	f.write("X.txt", "x1\n")
	assert.Nil(t, ownerOf(t, f, "X.txt", f.commit("case"), a))
	f.remove("x.txt")
	require.NoError(t, os.Symlink("x1\n", f.path("x.txt")))
	assert.Nil(t, ownerOf(t, f, "x.txt", f.commit("symlink"), a))
	// A deletion equals a deletion: a pass that deleted a file owns its absence.
	f.remove("x.txt")
	f.remove("X.txt")
	gone := f.commit("delete")
	c := &verifiedPass{task: "c", run: "gate-2", head: gone, base: h1}
	assert.Same(t, c, ownerOf(t, f, "x.txt", gone, c))
}

func TestAVerifiedChangeUndoneIsNobodysWork(t *testing.T) {
	f := newFixture(t, true)
	base := f.Git("rev-parse", "HEAD")
	f.write("x.txt", "1\n")
	h1 := f.commit("a")
	f.write("x.txt", "2\n")
	h2 := f.commit("b")
	a := &verifiedPass{task: "a", run: "gate-1", head: h1, base: base}
	b := &verifiedPass{task: "b", run: "gate-1", head: h2, base: h1}
	// b built on a: the head as b left it is b's.
	assert.Same(t, b, ownerOf(t, f, "x.txt", h2, a, b))
	// The head puts a's content back: that undoes b's verified change, so it is not a's work.
	f.write("x.txt", "1\n")
	assert.Nil(t, ownerOf(t, f, "x.txt", f.commit("revert b"), a, b))

	// Two parallel passes changed the same file; a merge that keeps one side undoes the other.
	f.Git("checkout", "-q", "-b", "side", base)
	f.write("x.txt", "3\n")
	h3 := f.commit("c")
	c := &verifiedPass{task: "c", run: "gate-1", head: h3, base: base}
	f.Git("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge", h1)
	merged := f.Git("rev-parse", "HEAD")
	assert.Nil(t, ownerOf(t, f, "x.txt", merged, a, c))
	assert.Same(t, c, ownerOf(t, f, "x.txt", merged, c))
}

func TestAFileIsAttributedToThePassThatMadeTheChange(t *testing.T) {
	f := newFixture(t, true)
	base := f.Git("rev-parse", "HEAD")
	f.write("x.txt", "1\n")
	h1 := f.commit("z")
	f.write("y.txt", "1\n")
	h2 := f.commit("b")
	// Both based at base: b's own change carries z's x.txt too. x.txt is z's, y.txt b's, whatever
	// the order of their ids.
	z := &verifiedPass{task: "z", run: "gate-1", head: h1, base: base}
	b := &verifiedPass{task: "b", run: "gate-1", head: h2, base: base}
	assert.Same(t, z, ownerOf(t, f, "x.txt", h2, b, z))
	assert.Same(t, b, ownerOf(t, f, "y.txt", h2, b, z))
	// A verified revert of another pass's change owns the path, the pass it reverted does not
	// undo it.
	f.write("x.txt", "2\n")
	h3 := f.commit("v")
	f.write("x.txt", "1\n")
	h4 := f.commit("r")
	v := &verifiedPass{task: "v", run: "gate-1", head: h3, base: h2}
	r := &verifiedPass{task: "r", run: "gate-1", head: h4, base: h3}
	assert.Same(t, r, ownerOf(t, f, "x.txt", h4, b, z, v, r))
}

func TestOnlyAGatePassThatIsTheLatestEntryStands(t *testing.T) {
	run := func(verdict string, causes ...vocab.CauseCode) record.HistoryEntry {
		var cs []Cause
		for _, c := range causes {
			cs = append(cs, Cause{Code: c})
		}
		raw, _ := json.Marshal(cs)
		return record.HistoryEntry{Kind: record.KindGateRun, RunID: "gate-x", Verdict: verdict, Causes: raw}
	}
	pass, fail := run("pass"), run("fail", vocab.CauseEvalFailed)
	ineligible := run("error", vocab.CauseStateIneligible)
	revoked := record.HistoryEntry{Kind: "revocation", RunID: "verify-1", Verdict: "block"}
	reset := record.HistoryEntry{Kind: record.KindHistoryReset}
	for _, tc := range []struct {
		name  string
		hist  []record.HistoryEntry
		stand bool
	}{
		{"a pass", []record.HistoryEntry{fail, pass}, true},
		{"a pass, then runs refused as state_ineligible", []record.HistoryEntry{pass, ineligible, ineligible}, true},
		{"a pass, then a fail", []record.HistoryEntry{pass, fail}, false},
		{"a pass, then a revocation", []record.HistoryEntry{pass, revoked}, false},
		{"a reset", []record.HistoryEntry{reset}, false},
		{"another error", []record.HistoryEntry{pass, run("error", vocab.CauseHistoryTampered)}, false},
		{"no history", nil, false},
	} {
		_, ok := standingPass(tc.hist)
		assert.Equal(t, tc.stand, ok, tc.name)
	}
}

func TestThePinnedRulesOfAPassNameItsTaskAndBase(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	require.NoError(t, err)
	defer root.Close()
	const dir = "missions/m/tasks/a"
	require.NoError(t, root.MkdirAll(dir, 0o755))
	sha := strings.Repeat("ab", 20)
	pin := func(rules map[string]any) record.HistoryEntry {
		d, err := canon.SHA256(rules)
		require.NoError(t, err)
		require.NoError(t, record.WritePinned(root, dir, record.PinnedCopy{RulesSHA256: d, Rules: rules}))
		return record.HistoryEntry{RunID: "gate-1", RulesSHA256: d}
	}
	in := &Snapshot{Geas: root}
	o := OtherTask{ID: "a", Dir: dir}

	base, why := pinnedBase(in, o, pin(map[string]any{"contract": map[string]any{"task_id": "a", "base_snapshot": sha}}))
	assert.Empty(t, why)
	assert.Equal(t, sha, base)
	// An unpinned base: the commit it resolved to, which the rules hold.
	base, why = pinnedBase(in, o, pin(map[string]any{"contract": map[string]any{"task_id": "a", "base_snapshot": "main"}, "base": map[string]any{"base_snapshot": "main", "commit": sha}}))
	assert.Empty(t, why)
	assert.Equal(t, sha, base)
	// Another task's rules (a copied directory), no base, or a pinned copy edited after the pass.
	_, why = pinnedBase(in, o, pin(map[string]any{"contract": map[string]any{"task_id": "b", "base_snapshot": sha}}))
	assert.Contains(t, why, `are those of task "b"`)
	_, why = pinnedBase(in, o, pin(map[string]any{"contract": map[string]any{"task_id": "a"}}))
	assert.Contains(t, why, "record no base commit")
	e := pin(map[string]any{"contract": map[string]any{"task_id": "a", "base_snapshot": sha}})
	pin(map[string]any{"contract": map[string]any{"task_id": "a", "base_snapshot": strings.Repeat("cd", 20)}})
	_, why = pinnedBase(in, o, e)
	assert.Contains(t, why, "it was edited")
}

func TestTheAttributedPassesARunRecordsAreThoseARepeatReads(t *testing.T) {
	// An entry recorded before attribution existed reads as attributing nothing.
	assert.Equal(t, "", attemptOf(record.HistoryEntry{Kind: record.KindGateRun}).attributed)
	res := &Result{RunID: "gate-2", Verdict: vocab.VerdictFail, attributed: strings.Repeat("e", 64)}
	e := historyEntry(res)
	assert.Equal(t, res.attributed, attemptOf(e).attributed)
	// The field is chained with the entry: editing it breaks the hash.
	h, err := record.EntryHash(e)
	require.NoError(t, err)
	e.Extra[attributedPassesKey] = json.RawMessage(`"` + strings.Repeat("f", 64) + `"`)
	h2, err := record.EntryHash(e)
	require.NoError(t, err)
	assert.NotEqual(t, h, h2)
	// A run that attributes nothing records no field.
	_, ok := historyEntry(&Result{RunID: "gate-3"}).Extra[attributedPassesKey]
	assert.False(t, ok)
	// A value that is not a string is never the same attempt as one that attributes nothing.
	e.Extra[attributedPassesKey] = json.RawMessage(`1`)
	assert.NotEqual(t, "", attemptOf(e).attributed)
}

// otherTaskFixture is a task directory "a" of root with a record whose history holds a gate pass.
func otherTaskFixture(t *testing.T) (*os.Root, string, *record.Record) {
	t.Helper()
	root, err := os.OpenRoot(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	const dir = "missions/m/tasks/a"
	require.NoError(t, root.MkdirAll(dir, 0o755))
	rec := record.New("a", time.Now())
	_, err = rec.AppendHistory(record.HistoryEntry{Kind: record.KindGateRun, RunID: "gate-1", Verdict: "pass"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, dir+"/record.json"))
	return root, dir, rec
}

func TestGateAllParsesAnotherTasksRecordAgainOnlyWhenItsFilesChanged(t *testing.T) {
	root, dir, rec := otherTaskFixture(t)
	var s sharedRecords
	defer s.close()
	first := s.load(root, dir)
	require.NotNil(t, first)
	assert.Same(t, first, s.load(root, dir), "unchanged: the same parse")
	_, err := rec.AppendHistory(record.HistoryEntry{Kind: record.KindGateRun, RunID: "gate-2", Verdict: "fail"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, dir+"/record.json"))
	again := s.load(root, dir)
	require.NotNil(t, again)
	assert.NotSame(t, first, again, "a history appended to: parsed again")
	assert.Len(t, again.History(), 2)
}

// TestAFileReplacedBetweenTwoRunsOfGateAllIsReadAgain: a task's history replaced by another
// file (renamed over it) between two runs of one --all, even one of the same size whose
// modification time is set back, is read again: what the earlier run read is never taken for
// it. So is one rewritten in place to the same size, its modification time set back (the change
// time cannot be), and one removed. The honest control: untouched, the parse is reused.
func TestAFileReplacedBetweenTwoRunsOfGateAllIsReadAgain(t *testing.T) {
	for _, how := range []string{"renamed over", "rewritten in place", "removed"} {
		t.Run(how, func(t *testing.T) {
			root, dir, _ := otherTaskFixture(t)
			name := dir + "/" + record.HistoryFile
			var s sharedRecords
			defer s.close()
			first := s.load(root, dir)
			require.NotNil(t, first)
			require.Len(t, first.History(), 1)
			assert.Same(t, first, s.load(root, dir), "the control: unchanged, the same parse")

			fi, err := root.Stat(name)
			require.NoError(t, err)
			old, err := root.ReadFile(name)
			require.NoError(t, err)
			// The same bytes but the verdict: a pass that no longer stands, of the same size.
			forged := bytes.Replace(old, []byte(`"verdict":"pass"`), []byte(`"verdict":"fail"`), 1)
			require.NotEqual(t, old, forged)
			require.Len(t, forged, len(old))
			time.Sleep(20 * time.Millisecond) // past the change time's granularity
			switch how {
			case "renamed over":
				require.NoError(t, root.WriteFile(name+".new", forged, 0o644))
				require.NoError(t, root.Chtimes(name+".new", fi.ModTime(), fi.ModTime()))
				require.NoError(t, root.Rename(name+".new", name))
			case "rewritten in place":
				f, err := root.OpenFile(name, os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteAt(forged, 0)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				require.NoError(t, root.Chtimes(name, fi.ModTime(), fi.ModTime()))
			case "removed":
				require.NoError(t, root.Remove(name))
			}
			again := s.load(root, dir)
			if how == "removed" {
				// A history gone: the record read now holds none (record.json alone).
				if again != nil {
					assert.Empty(t, again.History())
				}
				return
			}
			// The forged history no longer holds a pass as the gate writes one: nothing to parse.
			assert.Nil(t, again, "the file as it is now was read: it claims no pass")
		})
	}
}

// TestAPassRevokedEarlierInTheSameGateAllNoLongerAttributes: a task whose pass a run earlier in
// the same --all revoked (an entry appended to its history) no longer has a standing pass in the
// runs after it, though they share what the earlier runs read. The control: before the
// revocation, the pass stands.
func TestAPassRevokedEarlierInTheSameGateAllNoLongerAttributes(t *testing.T) {
	root, dir, rec := otherTaskFixture(t)
	s := NewShared(true)
	defer s.Close()
	in := &Snapshot{Geas: root, Mission: "m", Task: "b", shared: s}
	before := in.otherRecord(dir, nil)
	require.NotNil(t, before)
	_, stands := standingPass(before.History())
	require.True(t, stands, "the control: the pass stands")

	_, err := rec.AppendHistory(record.HistoryEntry{Kind: record.KindRevocation, RunID: "gate-1"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, dir+"/record.json"))
	after := in.otherRecord(dir, nil)
	require.NotNil(t, after)
	_, stands = standingPass(after.History())
	assert.False(t, stands, "revoked: no standing pass")
}

func TestWhatOtherTasksWroteIsQuotedBounded(t *testing.T) {
	v := &verifiedPass{task: "a", run: strings.Repeat("r", 1<<20), head: strings.Repeat("ab", 20), files: []string{"x.txt"}}
	a := &attribution{files: map[string]*verifiedPass{"x.txt": v}, used: []*verifiedPass{v}}
	assert.Less(t, len(a.note()), 300)
	assert.Contains(t, a.note(), "1 changed file attributed to other tasks' verified passes and left out: a rrrr")
}

// TestARunOfGateAllReadsItsRecordAsRecordLoadReadsIt: the task's own run, reading its record
// through the handles attribution holds (Shared.LoadRecord), answers what record.Load answers: the
// record as its files hold it now (a history rewritten in place after the handles were taken,
// its modification time set back, is read as it is now: the bytes are read again), a record.json
// removed while its history is there, and the error of a record.json that is a directory.
func TestARunOfGateAllReadsItsRecordAsRecordLoadReadsIt(t *testing.T) {
	root, dir, rec := otherTaskFixture(t)
	s := NewShared(true)
	defer s.Close()
	require.NotNil(t, s.others.load(root, dir)) // an earlier run's attribution holds the files
	same := func() {
		t.Helper()
		want, werr := record.Load(root, dir+"/record.json")
		got, gerr := s.LoadRecord(root, dir)
		if werr != nil {
			require.Error(t, gerr)
			assert.Equal(t, werr.Error(), gerr.Error())
			return
		}
		require.NoError(t, gerr)
		assert.Equal(t, want.History(), got.History())
		assert.Equal(t, want.TaskID(), got.TaskID())
	}
	same()
	_, err := rec.AppendHistory(record.HistoryEntry{Kind: record.KindGateRun, RunID: "gate-2", Verdict: "fail"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, dir+"/record.json"))
	same()
	name := dir + "/" + record.HistoryFile
	fi, err := root.Stat(name)
	require.NoError(t, err)
	old, err := root.ReadFile(name)
	require.NoError(t, err)
	f, err := root.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Replace(old, []byte(`"verdict":"fail"`), []byte(`"verdict":"pass"`), 1), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, root.Chtimes(name, fi.ModTime(), fi.ModTime()))
	got, err := s.LoadRecord(root, dir)
	require.NoError(t, err)
	assert.Equal(t, "pass", got.History()[1].Verdict, "the bytes as they are now")
	require.NoError(t, root.Remove(dir+"/record.json"))
	same()
	require.NoError(t, root.Mkdir(dir+"/record.json", 0o755))
	same()
}

// TestTheConfirmOfARunOfGateAllReadsItsRecordAsItIsNow: the confirm of a run's inputs, reading
// the task's record.json through the handles the runs share, reads the bytes the file holds now:
// written in place (its modification time set back) or renamed over, the new bytes; removed,
// missing. The control: untouched, the bytes read before.
func TestTheConfirmOfARunOfGateAllReadsItsRecordAsItIsNow(t *testing.T) {
	root, dir, _ := otherTaskFixture(t)
	s := NewShared(true)
	defer s.Close()
	in := &Snapshot{Geas: root, TaskDir: dir, shared: s}
	name := dir + "/record.json"
	r := in.recordReader(fsutil.RootReader(root))
	read := func() string {
		t.Helper()
		data, err := r.ReadLimited(name, record.MaxBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return "missing"
		}
		require.NoError(t, err)
		return string(data)
	}
	orig, err := root.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, string(orig), read(), "the control")
	fi, err := root.Stat(name)
	require.NoError(t, err)
	inPlace := bytes.Replace(orig, []byte(`"a"`), []byte(`"b"`), 1)
	require.NotEqual(t, orig, inPlace)
	f, err := root.OpenFile(name, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(inPlace, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, root.Chtimes(name, fi.ModTime(), fi.ModTime()))
	assert.Equal(t, string(inPlace), read(), "written in place")
	require.NoError(t, root.WriteFile(name+".new", []byte(`{"renamed":true}`), 0o644))
	require.NoError(t, root.Rename(name+".new", name))
	assert.Equal(t, `{"renamed":true}`, read(), "renamed over")
	require.NoError(t, root.Remove(name))
	assert.Equal(t, "missing", read(), "removed")
	require.NoError(t, root.WriteFile(name, orig, 0o644))
	_, err = r.ReadLimited(name, 3)
	var tooLarge *fsutil.TooLargeError
	assert.ErrorAs(t, err, &tooLarge, "a limit is kept")
}

func TestOnlyAPassUnderRulesAnAuthorityApprovedBeforeItAccountsForFiles(t *testing.T) {
	approval := func(rules string) record.HistoryEntry {
		return record.Approval("product-authority", "planned", rules, time.Unix(0, 0))
	}
	run := func(id, rules string) record.HistoryEntry {
		return record.HistoryEntry{Kind: record.KindGateRun, RunID: id, Verdict: "pass", RulesSHA256: rules, Hash: "h-" + id}
	}
	pass, unpinned := run("gate-2", "r1"), run("gate-2", "")
	for _, tc := range []struct {
		name string
		hist []record.HistoryEntry
		pass record.HistoryEntry
		ok   bool
	}{
		{"approved, then passed", []record.HistoryEntry{approval("r1"), run("gate-1", "r1"), pass}, pass, true},
		{"pinned by its first gate run only", []record.HistoryEntry{run("gate-1", "r1"), pass}, pass, false},
		{"approved after the pass", []record.HistoryEntry{pass, approval("r1")}, pass, false},
		{"other rules approved", []record.HistoryEntry{approval("r0"), pass}, pass, false},
		{"an approval of no rules", []record.HistoryEntry{approval(""), unpinned}, unpinned, false},
	} {
		assert.Equal(t, tc.ok, approvedBefore(tc.hist, tc.pass), tc.name)
	}
}

// changedOverAt is the pass whose verified change of p the head changed again, of passes.
func changedOverAt(t *testing.T, f *fixture, p, head string, passes ...*verifiedPass) *verifiedPass {
	t.Helper()
	return askLookup(t, f, p, head, passes, (*passLookup).changedOver)
}

func TestAFileAVerifiedPassMadeAndThisHeadChangedIsComparedWithThatPass(t *testing.T) {
	f := newFixture(t, true)
	base := f.Git("rev-parse", "HEAD")
	f.write("t_test.sh", "1\n2\n")
	h1 := f.commit("a")
	f.write("t_test.sh", "1\n2\n3\n")
	h2 := f.commit("b")
	a := &verifiedPass{task: "a", run: "gate-1", head: h1, base: base}
	b := &verifiedPass{task: "b", run: "gate-1", head: h2, base: h1}
	// As b left it: b's work (changedOver is asked only of paths no pass owns).
	assert.Same(t, b, ownerOf(t, f, "t_test.sh", h2, a, b))
	// Weakened after both: compared with the latest verified change, b's.
	f.write("t_test.sh", "1\n")
	weak := f.commit("weaken")
	assert.Same(t, b, changedOverAt(t, f, "t_test.sh", weak, a, b))
	assert.Same(t, a, changedOverAt(t, f, "t_test.sh", weak, a))
	// A file no pass changed is compared with the base as ever.
	f.write("other.sh", "x\n")
	assert.Nil(t, changedOverAt(t, f, "other.sh", f.commit("other"), a, b))
}

// TestAttributionKeepsABoundedNumberOfFilesOpen: past maxHeldOpen (here 1: record.json is kept
// open, gate-history.jsonl is not), the other tasks' files are read without keeping them open,
// and a file changed since is still read again (the control: an unchanged one is not parsed
// again).
func TestAttributionKeepsABoundedNumberOfFilesOpen(t *testing.T) {
	defer func(n int) { maxHeldOpen = n }(maxHeldOpen)
	maxHeldOpen = 1
	root, dir, rec := otherTaskFixture(t)
	var s sharedRecords
	defer s.close()
	first := s.load(root, dir) // record.json, gate-history.jsonl, integration.json (absent)
	require.NotNil(t, first)
	assert.Equal(t, 1, s.open)
	assert.Same(t, first, s.load(root, dir), "the control: unchanged, the same parse")
	time.Sleep(20 * time.Millisecond)
	_, err := rec.AppendHistory(record.HistoryEntry{Kind: record.KindRevocation, RunID: "gate-1"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, rec.Write(root, dir+"/record.json"))
	again := s.load(root, dir)
	require.NotNil(t, again)
	assert.Len(t, again.History(), 2)
	assert.Equal(t, 1, s.open)
	s.close()
	assert.Equal(t, 0, s.open)
}
