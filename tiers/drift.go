package tiers

import (
	"fmt"
	"slices"

	"github.com/geas-dev/geas/internal/git"
)

// Drift is what changed between a task's base and the head the gate would judge, sorted as the
// scope check sorts it (SPEC §5.3 Part B): the report of geas task revalidate, which tells an
// authority whether the base should move before the task is judged. Files are relative to the
// project root; one outside it is the path that leads there ("../other/b.txt"), outside every
// surface.
type Drift struct {
	Base    string // the full SHA the diff starts from
	Head    string // the full SHA of the head
	HeadRev string // what named the head: integration.json's commit when it names one, else HEAD
	// HeadFrom says where the head was taken from: "integration.commit" or "HEAD".
	HeadFrom string
	// Ancestor says whether the base is an ancestor of the head; when it is not, the gate blocks
	// (baseline_mismatch) whatever the files are.
	Ancestor bool
	// Changed is every changed file but the orchestration's bookkeeping, sorted; InSurfaces,
	// Shared (outside the surfaces but shared: a warning) and Outside (a scope_violation) split it.
	Changed, InSurfaces, Shared, Outside []string
	// Bookkeeping is how many changed files are the orchestration's own bookkeeping, which no
	// scope question counts.
	Bookkeeping int
}

// DriftOf lists what changed between base (a full SHA) and the integration head in the project's
// repository (integration.json's commit when the task has one, else HEAD, as tier 0's baseline
// takes it), and sorts each file by in's contract surfaces and shared globs (the contract's
// scope.shared, else the effective policy's). in needs its contract; its record may be nil.
func DriftOf(in *Snapshot, base string) (*Drift, error) {
	c := in.Contract
	if c == nil {
		return nil, fmt.Errorf("the contract could not be read: %v", in.ContractErr)
	}
	repo, err := git.Open(in.ProjectDir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	d := &Drift{HeadRev: "HEAD", HeadFrom: "HEAD"}
	if c := in.integrationCommit(); c != "" {
		d.HeadRev, d.HeadFrom = c, "integration.commit"
	}
	if d.Head, err = repo.Resolve(d.HeadRev); err != nil {
		return nil, fmt.Errorf("integration head %s: %w", d.HeadRev, err)
	}
	if d.Base, err = repo.Resolve(base); err != nil {
		return nil, fmt.Errorf("base %s: %w", base, err)
	}
	if d.Ancestor, err = repo.IsAncestor(d.Base, d.Head); err != nil {
		return nil, fmt.Errorf("ancestry of %s in %s: %w", short(d.Base), short(d.Head), err)
	}
	files, err := repo.ChangedFiles(d.Base, d.Head)
	if err != nil {
		return nil, fmt.Errorf("list the files changed in %s..%s: %w", short(d.Base), short(d.Head), err)
	}
	pp := projectPathsOf(repo, in.ProjectDir)
	shared := in.sharedGlobs()
	surf := newSurfaces(c.Scope.Surfaces, treeDir(repo, d.Base, d.Head, pp.prefix))
	for _, f := range files {
		f, inside := pp.rel(f)
		if inside && bookkeeping(f) {
			d.Bookkeeping++
			continue
		}
		d.Changed = append(d.Changed, f)
		if !inside {
			d.Outside = append(d.Outside, f)
			continue
		}
		covered, err := surf.covers(f)
		switch {
		case err != nil:
			return nil, fmt.Errorf("tell whether %s is inside the surfaces: %w", f, err)
		case covered:
			d.InSurfaces = append(d.InSurfaces, f)
		case matchesAny(f, shared):
			d.Shared = append(d.Shared, f)
		default:
			d.Outside = append(d.Outside, f)
		}
	}
	for _, l := range [][]string{d.Changed, d.InSurfaces, d.Shared, d.Outside} {
		slices.Sort(l) // a path outside the project ("../b") sorts apart from the repository's order
	}
	return d, nil
}

// RulesChanges names each field that differs between pinned and current rules (as rules_changed
// names them: `eval_commands[0]: "go test ./..." → "true"`), for a command that approves rules to
// show what its approval changes besides what it was asked to.
func RulesChanges(pinned, current map[string]any) []string {
	return rulesDiff(pinned, current)
}
