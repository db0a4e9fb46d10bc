package tiers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// Test integrity (SPEC §2 invariant 10, §5.2a): the checks that decide a pass are the checks as
// they stood at the base plus those the work adds. Two checks run in tier 1 after the eval
// commands: tests_modified (a protected check changed) and tests_weakened (skip, focus and
// early-exit markers added in test files; fewer assertions in a file the work may change), with
// suppression markers as a warning.

// maxProtectedBlobBytes bounds the versions of a protected file read whole to say what changed;
// a larger one is named as changed without line counts.
const maxProtectedBlobBytes = 16 << 20

// maxIntegrityFindings bounds how many findings a check names.
const maxIntegrityFindings = 20

const (
	testsModifiedText = "protected checks (test files, test-runner configuration, what the eval commands name) are as they stood at the base"
	testsWeakenedText = "no skip, focus or early-exit marker is added in a test file, and no file the work may change loses assertions"
)

// integrity is one run's test-integrity state.
type integrity struct {
	pass    *Pass
	prefix  string
	globs   []string // the protected table, lowercased
	table   *globTable
	names   *commandNames
	named   map[string]string // base files the eval commands name -> why
	tables  *policy.Markers
	mayList []string
	// approved says the contract's may_change counts: the rules were pinned by an authority's
	// approval and are the rules of this run.
	approved bool
	pinnedBy string
	// drops are the may-change files whose assertion-like lines dropped (tests_weakened).
	drops []finding
	// addedByID are the files the work adds, by blob id (a Go test file renamed in its package).
	addedByID map[string][]addedFile
	// added are the files the work adds (modified finds them; weakened judges their skips).
	added map[string]bool
	// helpers are the changed files that are test helpers by their base content (modified
	// finds them; weakened scans them as test files).
	helpers map[string]bool
}

// integrityFacts is what test integrity found: its checks, and the one pass over the added lines
// its marker scan made, which the stub scan reuses (nil when it made none).
type integrityFacts struct {
	checks []Check
	added  *addedScan
}

// testIntegrity runs tests_modified and tests_weakened (SPEC §5.2a.2, .3).
func testIntegrity(pass *Pass) integrityFacts {
	pol := pass.in.Policy.Tests
	if pol.Off {
		// A warning, so that every output shows it: the run is never silent about judging without
		// the tests' integrity (SPEC §5.2a).
		return integrityFacts{checks: []Check{warnCheck(1, "test_integrity", "test integrity off: protected checks and weakening markers are not checked", "test integrity off (policy tests.integrity: off)", vocab.CauseTestIntegrityOff)}}
	}
	if !pass.haveBase || pass.repo == nil {
		return integrityFacts{checks: []Check{skippedCheck(1, "test_integrity", "protected checks and weakening markers are checked on base..head", "no base to compare with: test integrity not checked")}}
	}
	ig := newIntegrity(pass)
	if err := ig.resolveNamed(); err != nil {
		return integrityFacts{checks: []Check{gitFailCheck(1, "tests_modified", testsModifiedText, "cannot read what the eval commands name at the base: "+err.Error(), err, StatusError, vocab.CauseDetectorError)}}
	}
	f := integrityFacts{checks: []Check{ig.modified()}}
	weak, added := ig.weakened()
	f.checks, f.added = append(f.checks, weak...), added
	if w := submoduleWarning(pass, "tests_weakened", "scanned for weakening markers"); w != nil {
		w.Tier = 1
		f.checks = append(f.checks, *w)
	}
	return f
}

// newIntegrity is the test-integrity state of a run: its tables, the commands' names, the pin.
func newIntegrity(pass *Pass) *integrity {
	c := pass.in.Contract
	pol := pass.in.Policy.Tests
	ig := &integrity{pass: pass, prefix: pass.paths.prefix, tables: pol.Markers, mayList: c.Tests.MayChange}
	if ig.tables == nil {
		ig.tables = policy.DefaultMarkers()
	}
	for _, g := range slices.Concat(pol.Protected, c.Tests.Protected) {
		ig.globs = append(ig.globs, strings.ToLower(g))
	}
	ig.table = newGlobTable(ig.globs)
	var cmds [][2]string
	for _, e := range c.EvalCommands {
		cmds = append(cmds, [2]string{e.Run, e.Workdir})
	}
	ig.names = namesOf(cmds)
	if f := pass.in.Facts; f != nil && f.Pinned {
		pin := f.Pin
		ig.pinnedBy = pin.By
		ig.approved = pin.Entry.Kind == record.KindApproval && pin.RulesSHA256 == pass.in.RulesSHA256 && pass.in.RulesSHA256 != ""
	}
	return ig
}

// resolveNamed keeps the words of the eval commands that are files in the base tree, and the first
// Makefile a make command would read.
func (ig *integrity) resolveNamed() error {
	ig.named = map[string]string{}
	if err := ig.followScripts(); err != nil {
		return err
	}
	words := make([]string, 0, len(ig.names.Words))
	for w := range ig.names.Words {
		words = append(words, w)
	}
	slices.Sort(words)
	for _, w := range words {
		kind, err := ig.pass.repo.EntryKindAt(ig.pass.base, ig.prefix+w)
		if err != nil {
			return err
		}
		if kind != git.Absent && kind != git.Directory && kind != git.Submodule {
			ig.named[w] = ig.names.Words[w]
		}
	}
	for f, why := range ig.names.Shadows {
		kind, err := ig.pass.repo.EntryKindAt(ig.pass.base, ig.prefix+f)
		if err != nil {
			return err
		}
		if kind != git.Absent && kind != git.Directory {
			ig.named[f] = why
		}
	}
	for f, why := range ig.names.Makefiles {
		kind, err := ig.pass.repo.EntryKindAt(ig.pass.base, ig.prefix+f)
		if err != nil {
			return err
		}
		if kind != git.Absent && kind != git.Directory {
			ig.named[f] = why + " (make)"
		}
	}
	return nil
}

// followScripts reads, at the base, what the eval commands hand to another runner: the
// package.json scripts npm, pnpm or yarn run and the recipes of the make targets, and reads those
// as commands of their own (SPEC §5.2a.1 b: the script an eval command runs is protected, and a
// script that `npm test` or `make check` runs is run by the eval command all the same). Files that
// make includes are protected like the Makefile.
func (ig *integrity) followScripts() error {
	n := ig.names
	read := func(p string) ([]byte, bool, error) {
		kind, err := ig.pass.repo.EntryKindAt(ig.pass.base, ig.prefix+p)
		if err != nil || kind != git.File && kind != git.Executable {
			return nil, false, err
		}
		return ig.pass.repo.ReadFileAt(ig.pass.base, ig.prefix+p, policy.MaxBytes)
	}
	seen := map[string]bool{}
	budget := maxNamedWords
	for done := 0; done < len(n.Keys) || len(n.Makes) > 0; {
		for ; done < len(n.Keys); done++ {
			k := n.Keys[done]
			name, ok := strings.CutPrefix(k.Key, "scripts.")
			if !ok || path.Base(k.File) != "package.json" || seen[k.File+"#"+k.Key] {
				continue
			}
			seen[k.File+"#"+k.Key] = true
			data, found, err := read(k.File)
			if err != nil {
				return err
			}
			if v, ok, bad := jsonValue(data, []string{"scripts", name}, ""); found && ok && bad == "" {
				n.read(v, path.Dir(k.File), fmt.Sprintf("%s (%s#%s)", k.Why, k.File, k.Key), &budget, 1)
			}
		}
		makes := n.Makes
		n.Makes = nil
		for _, m := range makes {
			id := fmt.Sprint(m.Dir, m.Files, m.Targets)
			if seen[id] {
				continue
			}
			seen[id] = true
			f, err := followMake(m, read)
			if err != nil {
				return err
			}
			for _, inc := range f.Includes {
				n.Words[inc] = m.Why + " (included by the Makefile)"
			}
			for _, g := range f.IncludeGlobs {
				n.IncludeGlobs[strings.ToLower(g)] = m.Why + " (included by the Makefile)"
			}
			for _, line := range f.Recipes {
				n.read(line, m.Dir, m.Why+" (a recipe of the Makefile)", &budget, 1)
			}
		}
	}
	return nil
}

// matchTable reports whether p (relative to the project root) matches one of globs, compared in
// lower case.
func matchTable(p string, globs []string) bool {
	return newGlobTable(globs).match(p)
}

// globTable is a list of globs compiled for the shapes the protected table is made of, which
// need no doublestar walk: `**/NAME-PATTERN` (the base name matched alone) and `**/DIR/**` (a
// directory anywhere on the path). Any other glob goes to doublestar. Globs are lower case and
// match the lower-cased path; one table judges every changed file of a run, so its cost is per
// file, not per glob walk.
type globTable struct {
	base  []string // patterns of the base name
	lit   []string // per base pattern, its longest literal part: a name without it cannot match
	dirs  []string // "/DIR/" segments
	other []string // doublestar globs
}

func newGlobTable(globs []string) *globTable {
	t := &globTable{}
	for _, g := range globs {
		g = strings.ToLower(g)
		rest, anyDir := strings.CutPrefix(g, "**/")
		switch {
		case anyDir && !strings.Contains(rest, "/") && !strings.Contains(rest, "**") && !strings.ContainsAny(rest, "{\\"):
			t.base = append(t.base, rest)
			t.lit = append(t.lit, longestLiteral(rest))
		case anyDir && strings.HasSuffix(rest, "/**") && !strings.ContainsAny(strings.TrimSuffix(rest, "/**"), "*?[{\\"):
			t.dirs = append(t.dirs, "/"+strings.TrimSuffix(rest, "/**")+"/")
		default:
			t.other = append(t.other, g)
		}
	}
	return t
}

func (t *globTable) match(p string) bool {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	for i, g := range t.base {
		if !strings.Contains(base, t.lit[i]) {
			continue
		}
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	if len(t.dirs) > 0 {
		slashed := "/" + lp + "/" // `**/DIR/**` matches DIR itself too, as doublestar does
		for _, d := range t.dirs {
			if strings.Contains(slashed, d) {
				return true
			}
		}
	}
	for _, g := range t.other {
		if ok, _ := doublestar.Match(g, lp); ok {
			return true
		}
	}
	return false
}

// longestLiteral is the longest run of a pattern without a metacharacter (outside a class).
func longestLiteral(pattern string) string {
	best := ""
	for _, part := range strings.FieldsFunc(pattern, func(r rune) bool { return r == '*' || r == '?' || r == '[' || r == ']' }) {
		if len(part) > len(best) {
			best = part
		}
	}
	if strings.Contains(pattern, "[") {
		return "" // a class's letters were split out above as if literal: do not rely on them
	}
	return best
}

// runnerConfigTable is runnerConfig compiled, once a process.
var runnerConfigTable = sync.OnceValue(func() *globTable { return newGlobTable(runnerConfig) })

// isTestFile reports whether p is a test file: in the protected table or named by an eval command.
func (ig *integrity) isTestFile(p string) bool {
	_, named := ig.named[p]
	return named || ig.helpers[p] || ig.table.match(p)
}

// isHelper reports whether the base version of p is a test helper by its content (testHelper):
// a file the tests import to check with, wherever it lives. Such a file is a protected check, and
// its added lines are scanned for markers. A version that cannot be read is judged as code: the
// object checks of tier 0 and the diff answer for it.
func (ig *integrity) isHelper(p string, from git.FileSide) bool {
	re := testHelper[policy.LanguageOf(p)]
	if re == nil || from.Kind != git.File && from.Kind != git.Executable {
		return false
	}
	data, err := ig.pass.repo.ReadBlob(from.ID, maxProtectedBlobBytes)
	if err != nil || !re.Match(data) {
		return false
	}
	if ig.helpers == nil {
		ig.helpers = map[string]bool{}
	}
	ig.helpers[p] = true
	return true
}

// isPackageInit reports whether p is a Python package's __init__.py: test discovery imports it
// before the package's tests, and a load_tests hook or a skip there decides which of them run, so
// its added lines are scanned like a test file's.
func isPackageInit(p string) bool {
	return strings.EqualFold(path.Base(p), "__init__.py")
}

// mayChange reports whether the contract lists p (a path, glob or FILE#KEY) in tests.may_change.
func (ig *integrity) mayChange(p string) bool {
	for _, m := range ig.mayList {
		if m == p {
			return true
		}
		if !strings.Contains(m, "#") {
			if ok, _ := doublestar.Match(m, p); ok {
				return true
			}
		}
	}
	return false
}

// rel is a repository path relative to the project root; ok is false outside it or for the
// bookkeeping. The path is one of base..head, which tier 0 placed (pass.placed), or a verified
// change this head undid, which attribution placed (undoneAt): whether it is the bookkeeping is
// looked up there.
func (ig *integrity) rel(p string) (string, bool) {
	if !strings.HasPrefix(p, ig.prefix) {
		return "", false
	}
	at, ok := ig.pass.placed.paths[p]
	if !ok {
		at = ig.pass.attrib.undoneAt[p]
	}
	return strings.TrimPrefix(p, ig.prefix), !at.bookkeeping
}

// finding is one protected check that changed.
type finding struct {
	what    string // file or FILE#KEY
	change  string // what changed
	allowed string // why the change is allowed ("" when it is not)
	file    string // the file, for the location
	drop    string // for drops: the assertion counts
}

// modified is the tests_modified check.
func (ig *integrity) modified() Check {
	pass := ig.pass
	changes, err := pass.repo.FileChanges(pass.base, pass.head)
	if err != nil {
		return gitFailCheck(1, "tests_modified", testsModifiedText, fmt.Sprintf("cannot diff %s..%s: %v", short(pass.base), short(pass.head), err), err, StatusError, vocab.CauseDetectorError)
	}
	// Another task's verified work (SPEC §5.3 B) under rules an authority approved is not this
	// task's change of a protected check.
	attributed := pass.attribution()
	if len(attributed.files) > 0 {
		changes = slices.DeleteFunc(changes, func(c git.FileChange) bool { return attributed.attributedCheck(c.Path) })
	}
	// A file another task's verified change made, changed again here, is compared with what that
	// pass verified: a verified task's test weakened after its pass is a protected check changed,
	// whether this task's base is before that pass or after it. Only where that is no looser than
	// the base: for a file new to this task's base (nothing else to compare with), or a pass under
	// approved rules, whose work counts for protected checks (attributedCheck); never a deletion
	// (a file the pass deleted and this head puts back is compared with the base's).
	if len(attributed.undone) > 0 {
		// A verified change this head undid to the base's entry: not in base..head, compared with
		// what the pass verified below.
		for _, p := range attributed.undone {
			now, err := pass.repo.EntryAt(pass.head, p)
			if err != nil {
				return gitFailCheck(1, "tests_modified", testsModifiedText, fmt.Sprintf("cannot read %s at %s: %v", p, short(pass.head), err), err, StatusError, vocab.CauseDetectorError)
			}
			changes = append(changes, git.FileChange{Path: p, From: now, To: now})
		}
		slices.SortFunc(changes, func(x, y git.FileChange) int { return strings.Compare(x.Path, y.Path) })
	}
	since := map[string]*verifiedPass{}
	for i, c := range changes {
		s, v, err := attributed.verifiedEntry(pass.repo, c.Path)
		if err != nil {
			return gitFailCheck(1, "tests_modified", testsModifiedText, fmt.Sprintf("cannot read %s at %s: %v", c.Path, short(v.head), err), err, StatusError, vocab.CauseDetectorError)
		}
		if v != nil && s != c.From && s.Kind != git.Absent && (c.From.Kind == git.Absent || v.approved) {
			changes[i].From = s
			since[c.Path] = v
		}
	}
	// An undone change compared with nothing looser than the base is no change of this task's.
	changes = slices.DeleteFunc(changes, func(c git.FileChange) bool { return c.From == c.To })
	byPath := map[string]git.FileChange{}
	var findings []finding
	ig.addedByID = map[string][]addedFile{}
	for _, c := range changes {
		if p, ok := ig.rel(c.Path); ok && c.From.Kind == git.Absent && c.To.ID != "" {
			ig.addedByID[c.To.ID] = append(ig.addedByID[c.To.ID], addedFile{p, c.To.Kind})
		}
	}
	for _, c := range changes {
		p, ok := ig.rel(c.Path)
		if !ok {
			continue
		}
		byPath[p] = c
		if c.From.Kind == git.Absent {
			if ig.added == nil {
				ig.added = map[string]bool{}
			}
			ig.added[p] = true
		}
		f, err := ig.fileFinding(p, c)
		if err != nil {
			return gitFailCheck(1, "tests_modified", testsModifiedText, err.Error(), err, StatusError, vocab.CauseDetectorError)
		}
		if f != nil {
			if v := since[c.Path]; v != nil {
				f.change += fmt.Sprintf(" (since task %s's verified pass %s at %s)", v.task, text.Truncate(v.run, maxRunIDText), short(v.head))
			}
			findings = append(findings, *f)
		}
	}
	for _, k := range ig.keysOf(byPath) {
		if _, whole := ig.named[k.File]; whole {
			continue // the whole file is protected already
		}
		c, ok := byPath[k.File]
		if !ok {
			continue
		}
		f, err := ig.keyFinding(k, c)
		if err != nil {
			return gitFailCheck(1, "tests_modified", testsModifiedText, err.Error(), err, StatusError, vocab.CauseDetectorError)
		}
		if f != nil {
			findings = append(findings, *f)
		}
	}
	var bad, ok []string
	var locs []Location
	for _, f := range findings {
		if f.allowed != "" {
			ok = append(ok, fmt.Sprintf("%s: %s (%s)", f.what, f.change, f.allowed))
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: %s", f.what, f.change))
		locs = append(locs, Location{Path: f.file})
	}
	base := fmt.Sprintf("%d protected named by the eval commands; table of %d globs", len(ig.named), len(ig.globs))
	if n := attributed.noted; n != "" {
		base += "; " + n
	}
	if len(bad) > 0 {
		ev := fmt.Sprintf("%d protected %s changed in %s..%s: %s", len(bad), pluralChecks(len(bad)), short(pass.base), short(pass.head), text.JoinLimited(bad, maxIntegrityFindings))
		if len(ok) > 0 {
			ev += fmt.Sprintf("; allowed: %s", text.JoinLimited(ok, maxIntegrityFindings))
		}
		if hint := ig.mayChangeHint(findings); hint != "" {
			ev += "; " + hint
		}
		ch := failCheck(1, "tests_modified", testsModifiedText, ev, StatusFail, vocab.CauseTestsModified)
		ch.Locations = locs
		return ch
	}
	ev := fmt.Sprintf("no protected check changed in %s..%s (%s)", short(pass.base), short(pass.head), base)
	if len(ok) > 0 {
		ev = fmt.Sprintf("%d protected %s changed as allowed in %s..%s: %s (%s)", len(ok), pluralChecks(len(ok)), short(pass.base), short(pass.head), text.JoinLimited(ok, maxIntegrityFindings), base)
	}
	return passCheck(1, "tests_modified", testsModifiedText, ev)
}

// mayChangeHint says why a change listed in may_change was not allowed.
func (ig *integrity) mayChangeHint(findings []finding) string {
	for _, f := range findings {
		if f.allowed == "" && ig.mayChange(f.what) && !ig.approved {
			by := "the rules of this run were pinned by " + ig.pinnedBy
			if ig.pinnedBy == "" {
				by = "nothing has pinned the rules yet, and a gate run's pin does not count"
			}
			return fmt.Sprintf("tests.may_change lists %s, but it counts only under rules an authority approved (geas task approve); %s", f.what, by)
		}
	}
	return ""
}

// appendSafe are the languages in which lines appended to a test file can do nothing that a new
// test file the work adds could not: their test runners load every test file into one process
// (go test, pytest and unittest discovery, rake and RSpec) or run no file-level code (Rust, Java,
// Kotlin). There, a test file that only grows at its end is the work adding tests, and the added
// lines are scanned for markers like any other. JavaScript runners isolate each file, and a shell
// helper sourced by a test redefines what comes before it, so there any change counts.
var appendSafe = map[string]bool{policy.LangGo: true, policy.LangPython: true, policy.LangRuby: true, policy.LangRust: true, policy.LangJava: true}

// fileFinding judges one changed path: nil when it is no protected check, else what changed (and
// whether that is allowed).
func (ig *integrity) fileFinding(p string, c git.FileChange) (*finding, error) {
	why, whole := ig.named[p]
	config := runnerConfigTable().match(p)
	if inc, ok := ig.includedBy(p); ok && why == "" {
		why, whole = inc, true
	}
	if c.From.Kind == git.Absent {
		if _, ok := ig.includedBy(p); ok {
			return ig.judge(&finding{what: p, file: p, change: "added: a makefile the Makefile includes by pattern"}), nil
		}
		if shadow, ok := ig.shadow(p); ok {
			return ig.judge(&finding{what: p, file: p, change: "added: " + shadow + " would run it in place of the module"}), nil
		}
		if !config {
			return nil, nil // a new test file is a check the work adds
		}
		return ig.judge(&finding{what: p, file: p, change: "added: a test-runner configuration the base does not have"}), nil
	}
	switch {
	case why != "":
	case config:
		why = "test-runner configuration"
		whole = true
	case ig.table.match(p):
		why = "test file"
	case ig.isHelper(p, c.From):
		why = "test helper"
	default:
		return nil, nil
	}
	f := &finding{what: p, file: p}
	switch {
	case c.To.Kind == git.Absent:
		f.change = "deleted (or renamed away)"
		if q := ig.goTestRenamed(p, why, whole, c.From); q != "" {
			f.change = "renamed to " + q
			f.allowed = "a Go test file renamed in its package, content unchanged: go test runs it as before"
		}
	case c.From.Kind != c.To.Kind:
		f.change = fmt.Sprintf("%s → %s", c.From.Kind, c.To.Kind)
		if c.From.ID != c.To.ID {
			f.change += ", content changed"
		}
	default:
		change, appended, err := ig.contentChange(p, c)
		if err != nil {
			return nil, err
		}
		f.change = change
		if appended && !whole && appendSafe[policy.LanguageOf(p)] {
			f.allowed = "lines appended to a test file, scanned for markers"
		}
	}
	return ig.judge(f), nil
}

// includedBy says which make run includes p through a pattern (include *.mk), compared in lower
// case as a case-insensitive file system finds it.
func (ig *integrity) includedBy(p string) (string, bool) {
	lp := strings.ToLower(p)
	for g, why := range ig.names.IncludeGlobs {
		if ok, _ := doublestar.Match(g, lp); ok {
			return why, true
		}
	}
	return "", false
}

// shadow says which command a path added by the work would take the place of (python -m MOD),
// compared in lower case as a case-insensitive file system finds it.
func (ig *integrity) shadow(p string) (string, bool) {
	lp := strings.ToLower(p)
	for s, why := range ig.names.Shadows {
		if strings.ToLower(s) == lp {
			return strings.TrimPrefix(why, "named by "), true
		}
	}
	return "", false
}

// addedFile is a file the work adds.
type addedFile struct {
	path string
	kind git.EntryKind
}

// goTestRenamed is the new name of a Go test file of the table that the work renamed in its
// directory with its content and mode unchanged ("" for none): go test compiles every *_test.go
// of a package, so the same tests run. The new name must be one go test builds everywhere (not
// _x_test.go or .x_test.go, no GOOS or GOARCH suffix), and a file an eval command names, or a
// rename in letter case only, is never one.
func (ig *integrity) goTestRenamed(p, why string, whole bool, from git.FileSide) string {
	if why != "test file" || whole || !strings.HasSuffix(p, "_test.go") {
		return ""
	}
	for _, q := range ig.addedByID[from.ID] {
		if q.kind == from.Kind && !strings.EqualFold(p, q.path) && path.Dir(p) == path.Dir(q.path) && goBuildsTestFile(path.Base(q.path)) {
			return q.path
		}
	}
	return ""
}

// goBuildsTestFile reports whether go test builds a test file of this name on every platform.
func goBuildsTestFile(name string) bool {
	stem, ok := strings.CutSuffix(name, "_test.go")
	if !ok || stem == "" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
		return false
	}
	parts := strings.Split(stem, "_")
	if n := len(parts); n > 1 && (knownGOOS[parts[n-1]] || knownGOARCH[parts[n-1]]) {
		return false
	}
	return true
}

var (
	knownGOOS   = setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos")
	knownGOARCH = setOf("386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips", "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm")
)

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// judge applies may_change to a finding, and for an allowed change compares assertion counts.
func (ig *integrity) judge(f *finding) *finding {
	if f.allowed == "" && ig.approved && ig.mayChange(f.what) {
		f.allowed = "tests.may_change, approved"
	}
	return f
}

// contentChange describes a content change of a protected file: lines removed and added, and the
// assertion-like lines at the base and the head. appended is true when the head is the base with
// lines added after its last line. A may-change file whose assertions dropped is marked (drop).
func (ig *integrity) contentChange(p string, c git.FileChange) (string, bool, error) {
	pass := ig.pass
	old, err := pass.repo.ReadBlob(c.From.ID, maxProtectedBlobBytes)
	if err != nil {
		return fmt.Sprintf("content changed (%v; not compared)", err), false, nil
	}
	cur, err := pass.repo.ReadBlob(c.To.ID, maxProtectedBlobBytes)
	if err != nil {
		return fmt.Sprintf("content changed (%v; not compared)", err), false, nil
	}
	removed, added := lineDelta(string(old), string(cur))
	change := fmt.Sprintf("%s removed, %d added", text.Counted(removed, "line", "lines"), added)
	if removed == 0 && added == 0 {
		change = "content changed (same lines, other bytes: line endings or order)"
	}
	if m := ig.tables.Assert(policy.LanguageOf(p)); !m.Empty() {
		a, b := m.Count(string(old)), m.Count(string(cur))
		change += fmt.Sprintf("; assertions %d → %d", a, b)
		if b < a && ig.mayChange(p) {
			ig.drops = append(ig.drops, finding{what: p, file: p, drop: fmt.Sprintf("assertions %d → %d", a, b)})
		}
	}
	appended := bytes.HasPrefix(cur, old) && (len(old) == 0 || old[len(old)-1] == '\n')
	if appended {
		if why := appendRebinds(policy.LanguageOf(p), string(old), string(cur[len(old):])); why != "" {
			change += "; the appended lines " + why
			appended = false
		}
	}
	return change, appended, nil
}

// lineDelta counts the lines of old missing from cur and of cur missing from old, as multisets:
// a moved line is neither; a line whose ending changed (CRLF) is both.
func lineDelta(old, cur string) (removed, added int) {
	count := map[string]int{}
	for l := range strings.Lines(old) {
		count[strings.TrimSuffix(l, "\n")]++
	}
	for l := range strings.Lines(cur) {
		k := strings.TrimSuffix(l, "\n")
		if count[k] > 0 {
			count[k]--
		} else {
			added++
		}
	}
	for _, n := range count {
		removed += n
	}
	return removed, added
}

// keyFinding compares one protected configuration entry at the base and the head.
func (ig *integrity) keyFinding(k protectedKey, c git.FileChange) (*finding, error) {
	pass := ig.pass
	read := func(s git.FileSide) ([]byte, string) {
		if s.Kind == git.Absent {
			return nil, ""
		}
		if s.Kind != git.File && s.Kind != git.Executable {
			return nil, fmt.Sprintf("a %s", s.Kind)
		}
		b, err := pass.repo.ReadBlob(s.ID, policy.MaxBytes)
		if err != nil {
			return nil, err.Error()
		}
		return b, ""
	}
	old, oldErr := read(c.From)
	cur, curErr := read(c.To)
	var a, b string
	var aok, bok bool
	if path.Base(k.File) == "package.json" {
		keyPath := []string{k.Key}
		if name, ok := strings.CutPrefix(k.Key, "scripts."); ok {
			keyPath = []string{"scripts", name}
		}
		a, aok, oldErr = jsonValue(old, keyPath, oldErr)
		b, bok, curErr = jsonValue(cur, keyPath, curErr)
		if !aok && oldErr == "" && !k.AsPath {
			return nil, nil // a script the base does not have is not a check of the base
		}
	} else if path.Base(k.File) == "go.mod" {
		a, aok = goModReplaces(old)
		b, bok = goModReplaces(cur)
	} else {
		a, aok = sectionText(old, k.Key)
		b, bok = sectionText(cur, k.Key)
	}
	what := k.File + "#" + k.Key
	f := &finding{what: what, file: k.File}
	switch {
	case curErr != "":
		f.change = fmt.Sprintf("%s at the head cannot be read (%s)", k.File, curErr)
	case oldErr != "":
		f.change = fmt.Sprintf("%s at the base cannot be read (%s)", k.File, oldErr)
	case aok == bok && a == b:
		return nil, nil
	case !bok:
		f.change = fmt.Sprintf("%s → (absent)", showText(a))
	case !aok:
		f.change = fmt.Sprintf("(absent) → %s", showText(b))
	default:
		f.change = fmt.Sprintf("%s → %s", showText(a), showText(b))
	}
	return ig.judge(f), nil
}

func showText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // `=> ./fake`, `> out.txt` read as written
	_ = enc.Encode(text.Truncate(s, 120))
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonValue is the value at keyPath of a JSON object (a string as itself, anything else as compact
// JSON); bad says why the file cannot be read as JSON (which counts as a change of the key: fail
// closed).
func jsonValue(data []byte, keyPath []string, bad string) (string, bool, string) {
	if bad != "" || data == nil {
		return "", false, bad
	}
	v := json.RawMessage(data)
	for i, k := range keyPath {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil {
			if i > 0 {
				return "", false, "" // "scripts": "x" has no scripts.test
			}
			return "", false, "not valid JSON: " + err.Error()
		}
		next, ok := obj[k]
		if !ok {
			return "", false, ""
		}
		v = next
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true, ""
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, v)
	return buf.String(), true, ""
}

// runnerKeys are the test-runner configurations that live in a file with other content: protected
// as keys in every changed file of that name in the project, whatever the eval commands run, and
// adding one the base does not have is a change (AsPath), as for a configuration file.
var runnerKeys = map[string][]string{
	"package.json":   {"jest", "mocha", "ava", "vitest", "nyc", "c8"},
	"pyproject.toml": {"tool.pytest.ini_options"},
	"setup.cfg":      {"tool:pytest"},
	// A replace directive decides which code a test's imports are: pointed at a fake testify or
	// a fake helper module, every assertion through it holds.
	"go.mod": {"replace"},
}

// keysOf is every protected key of the changed files: what the eval commands name, the test
// scripts of every package.json (scripts.test, with its pre and post scripts: whatever runs them),
// and the runner configurations of runnerKeys. Each once.
func (ig *integrity) keysOf(byPath map[string]git.FileChange) []protectedKey {
	keys := slices.Clone(ig.names.Keys)
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		if runnerKeys[path.Base(p)] != nil {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		base := path.Base(p)
		if base == "package.json" {
			for _, k := range []string{"pretest", "test", "posttest"} {
				keys = append(keys, protectedKey{File: p, Key: "scripts." + k, Why: "test script"})
			}
		}
		for _, k := range runnerKeys[base] {
			keys = append(keys, protectedKey{File: p, Key: k, Why: "test-runner configuration", AsPath: true})
		}
	}
	seen := map[string]bool{}
	out := keys[:0]
	for _, k := range keys {
		if id := k.File + "#" + k.Key; !seen[id] {
			seen[id] = true
			out = append(out, k)
		}
	}
	return out
}

// goModReplaces is the replace directives of a go.mod as text, one a line with white space
// collapsed (a single line or a block); ok is false when there is none.
func goModReplaces(data []byte) (string, bool) {
	if data == nil {
		return "", false
	}
	var out strings.Builder
	in := false
	for line := range strings.Lines(string(data)) {
		t, _, _ := strings.Cut(line, "//")
		f := strings.Fields(t)
		switch {
		case in && len(f) == 1 && f[0] == ")":
			in = false
		case in:
			if len(f) > 0 {
				out.WriteString("replace " + strings.Join(f, " ") + "\n")
			}
		case len(f) > 0 && f[0] == "replace":
			if len(f) == 2 && f[1] == "(" {
				in = true
			} else {
				out.WriteString(strings.Join(f, " ") + "\n")
			}
		}
	}
	return out.String(), out.Len() > 0
}

// sectionText is a pytest configuration table as text: the lines of the [KEY] section (a TOML
// table or an INI section, header spaces ignored), and every other line that mentions pytest (a
// dotted key or an inline table). ok is false when there is none.
func sectionText(data []byte, key string) (string, bool) {
	if data == nil {
		return "", false
	}
	var out strings.Builder
	in, found := false, false
	for line := range strings.Lines(string(data)) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			h := strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' || r == '"' || r == '\'' {
					return -1
				}
				return r
			}, t)
			in = h == "["+key+"]"
			found = found || in
		}
		if in || strings.Contains(strings.ToLower(t), "pytest") {
			out.WriteString(line)
			found = true
		}
	}
	return out.String(), found
}

// marker is a marker found on an added line.
type marker struct {
	loc     Location
	pattern string
	text    string
}

func (m marker) String() string {
	return fmt.Sprintf("%s %s %q", m.loc, m.pattern, text.Truncate(strings.TrimSpace(m.text), 60))
}

// weakened is the tests_weakened check and, when suppression markers were added, its warning, and
// the pass over the added lines it made (scanAdded).
// Every added line of base..head is scanned, streamed as the stub scan: skip markers in test files
// (and in every file of the languages of skipEverywhere), suppression markers anywhere.
func (ig *integrity) weakened() ([]Check, *addedScan) {
	pass := ig.pass
	var skips, suppressions, own []marker
	nskip, nsup, nown := 0, 0, 0
	// Lines come file by file: what a file is, is judged once a file.
	last, inProject, lang, added := "", false, "", false
	var skip *policy.MarkerSet
	suppress := ig.tables.Suppress()
	res := scanAdded(pass, func(l git.AddedLine) {
		if l.Path != last {
			last, skip = l.Path, nil
			var p string
			if p, inProject = ig.rel(l.Path); inProject {
				lang, added = policy.LanguageOf(p), ig.added[p]
				if lang != "" && (skipEverywhere[lang] || ig.isTestFile(p) || isPackageInit(p)) {
					skip = ig.tables.Skip(lang)
				}
			}
		}
		if !inProject {
			return
		}
		p := strings.TrimPrefix(l.Path, ig.prefix)
		// The line's markers first, then what they mean.
		skipPat, skipped := "", false
		if skip != nil {
			skipPat, skipped = skip.Find(l.Text)
		}
		supPat, suppressed := suppress.Find(l.Text)
		if skipped && added && onlySkips(lang, l.Text, skip) {
			nown++
			if len(own) < maxIntegrityFindings {
				own = append(own, marker{Location{Path: p, Line: l.Line}, skipPat, l.Text})
			}
		} else if skipped {
			nskip++
			if len(skips) < maxIntegrityFindings {
				skips = append(skips, marker{Location{Path: p, Line: l.Line}, skipPat, l.Text})
			}
		}
		if suppressed {
			nsup++
			if len(suppressions) < maxIntegrityFindings {
				suppressions = append(suppressions, marker{Location{Path: p, Line: l.Line}, supPat, l.Text})
			}
		}
	})
	if res.err != nil {
		return []Check{gitFailCheck(1, "tests_weakened", testsWeakenedText, fmt.Sprintf("cannot scan the lines added in %s..%s for weakening markers: %v", short(pass.base), short(pass.head), res.err), res.err, StatusError, vocab.CauseDetectorError)}, res
	}
	scan := res.scan
	var out []Check
	found, locs := markerList(skips, nskip)
	for _, d := range ig.drops {
		found = append(found, fmt.Sprintf("%s: %s (listed in tests.may_change)", d.what, d.drop))
		locs = append(locs, Location{Path: d.file})
	}
	note := ""
	if len(scan.Binary) > 0 {
		note = fmt.Sprintf("; %d binary files not scanned: %s", len(scan.Binary), text.JoinLimited(scan.Binary, 10))
	}
	if len(found) > 0 {
		ch := failCheck(1, "tests_weakened", testsWeakenedText, fmt.Sprintf("%d weakening findings in %s..%s: %s%s", nskip+len(ig.drops), short(pass.base), short(pass.head), strings.Join(found, "; "), note), StatusFail, vocab.CauseTestsWeakened)
		ch.Locations = locs
		out = append(out, ch)
	} else {
		out = append(out, passCheck(1, "tests_weakened", testsWeakenedText, fmt.Sprintf("no weakening marker in %d added lines of %d text files%s", scan.Lines, scan.Files, note)))
	}
	if nown > 0 {
		list, olocs := markerList(own, nown)
		ch := warnCheck(1, "skips_added", "every test the work adds runs", fmt.Sprintf("%s in test files the work adds, each skipping only its own test: %s", text.Counted(nown, "skip", "skips"), strings.Join(list, "; ")), vocab.CauseSkipAdded)
		ch.Locations = olocs
		out = append(out, ch)
	}
	if nsup > 0 {
		list, slocs := markerList(suppressions, nsup)
		ch := warnCheck(1, "suppressions_added", "no linter or type-checker suppression marker is added", fmt.Sprintf("%d suppression markers added: %s", nsup, strings.Join(list, "; ")), vocab.CauseSuppressionAdded)
		ch.Locations = slocs
		out = append(out, ch)
	}
	return out, res
}

// markerList shows the markers kept (at most maxIntegrityFindings of total found), saying how many
// more there were, with their locations.
func markerList(kept []marker, total int) ([]string, []Location) {
	var list []string
	var locs []Location
	for _, m := range kept {
		list = append(list, m.String())
		locs = append(locs, m.loc)
	}
	if total > len(kept) {
		list = append(list, fmt.Sprintf("and %d more", total-len(kept)))
	}
	return list, locs
}

// pluralChecks is "check" or "checks" for n of them.
func pluralChecks(n int) string {
	if n == 1 {
		return "check"
	}
	return "checks"
}
