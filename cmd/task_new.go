package cmd

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/vocab"
)

type taskNewOptions struct {
	mission, task, title, goal, profile, risk, base, worker, from string
	criteria, evals, surfaces, reviewers, dimensions              []string
	retryBudget                                                   int
}

func newTaskNewCmd(g *globalOptions) *cobra.Command {
	var o taskNewOptions
	c := &cobra.Command{
		Use:   "new --task T [--profile P] [--risk R] [--criterion TEXT]... [--eval CMD]... [--surface GLOB]... [--from FILE]",
		Short: "Write a new task's contract.json: a valid skeleton in state drafted, its base pinned to HEAD",
		Long: `Write .geas/missions/M/tasks/T/contract.json: a contract that geas validate accepts, in state
drafted, with geas v1's boilerplate filled in (version, artifact_type, artifact_id, producer_type,
task_kind, vote_round_policy) so that only what the gate reads is yours to write.

base_snapshot is pinned to the full SHA of HEAD (or of --base REV). An implementation_change task
needs it: outside a git repository, or before the first commit, the command refuses. An
artifact_only or closure_ready task is then written without a base (the gate judges the
implementer's files_changed instead), and the command says so.

The flags set the fields the gate reads, so no editor is needed: --criterion, --eval and --surface
may be repeated (each value is one item, commas included). --from FILE adds the items of a
markdown list as criteria (and its first "# heading" as the title). Without --criterion the
contract holds one placeholder criterion that nothing satisfies until you replace it; without
--eval, eval_commands is empty (tier 1 is skipped); without --surface, scope.surfaces is empty
(every changed file is out of scope). An existing task is never overwritten.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskNew(g, o) },
	}
	f := c.Flags()
	f.StringVar(&o.task, "task", "", "task id of the new task")
	f.StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json, or the only mission)")
	f.StringVar(&o.title, "title", "", "title (default: \"Task T\", or the --from file's first heading)")
	f.StringVar(&o.goal, "goal", "", "goal (default: the title)")
	f.StringVar(&o.profile, "profile", string(vocab.ImplementationChange), "gate profile: implementation_change, artifact_only or closure_ready")
	f.StringVar(&o.risk, "risk", string(vocab.RiskNormal), "risk level: low, normal, high or critical")
	f.StringArrayVar(&o.criteria, "criterion", nil, "an acceptance criterion (repeatable)")
	f.StringArrayVar(&o.evals, "eval", nil, "an eval command, run with sh -c in the project root (repeatable)")
	f.StringArrayVar(&o.surfaces, "surface", nil, "a scope surface: a glob, or a directory ending in / (repeatable)")
	f.StringArrayVar(&o.reviewers, "reviewer", nil, "a required reviewer's agent type (repeatable; default "+gate.DefaultReviewer+")")
	f.StringArrayVar(&o.dimensions, "dimension", nil, "a rubric dimension NAME=THRESHOLD, threshold 1..5 (repeatable; default code_quality=3, output_quality=3 for artifacts)")
	f.StringVar(&o.worker, "worker", gate.DefaultWorker, "routing.primary_worker_type: the implementer's agent type")
	f.IntVar(&o.retryBudget, "retry-budget", gate.DefaultBudget, "retry_budget: fails allowed before the task escalates")
	f.StringVar(&o.base, "base", "HEAD", "the revision base_snapshot pins (recorded as its full SHA)")
	f.StringVar(&o.from, "from", "", "a markdown file whose list items are added as acceptance criteria")
	return c
}

// taskNewResult is what geas task new prints with --format json.
type taskNewResult struct {
	MissionID    string   `json:"mission_id"`
	TaskID       string   `json:"task_id"`
	Contract     string   `json:"contract"`
	Status       string   `json:"status"`
	GateProfile  string   `json:"gate_profile"`
	BaseSnapshot string   `json:"base_snapshot"`
	Notes        []string `json:"notes"`
}

func runTaskNew(g *globalOptions, o taskNewOptions) error {
	s, err := o.skeleton()
	if err != nil {
		return err
	}
	p, mission, err := g.openMission(o.mission)
	if err != nil {
		return err
	}
	defer p.Close()
	res := taskNewResult{MissionID: mission, TaskID: o.task, Status: string(vocab.Drafted), GateProfile: string(s.Profile), Notes: []string{}}
	created, err := gate.CreateTask(p, mission, s, o.base)
	if err != nil {
		return err
	}
	base := created.Base
	res.Contract, res.BaseSnapshot = created.Contract, base
	res.Notes = append(res.Notes, created.Notes...)
	res.Notes = append(res.Notes, skeletonNotes(o)...)
	return g.output(res, func(w io.Writer) {
		fmt.Fprintf(w, "created %s: task %s of mission %s, %s, state drafted", res.Contract, o.task, mission, s.Profile)
		if base != "" {
			fmt.Fprintf(w, ", base %s", base[:12])
		}
		fmt.Fprintln(w)
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		fmt.Fprintf(w, "  next: geas task transition --id %s --to ready (drafted -> ready -> implementing -> reviewed%s), then geas gate --task %s\n",
			o.task, map[bool]string{true: " -> integrated", false: ""}[s.Profile == vocab.ImplementationChange], o.task)
	})
}

// skeleton checks the flags and turns them into a gate.Skeleton (ids, profile, risk and
// dimensions are usage errors; the rest is checked by the contract's own validation).
func (o taskNewOptions) skeleton() (gate.Skeleton, error) {
	if o.task == "" {
		return gate.Skeleton{}, usagef("--task is required")
	}
	if err := project.ValidateID("task", o.task); err != nil {
		return gate.Skeleton{}, err
	}
	s := gate.Skeleton{
		TaskID: o.task, Title: o.title, Goal: o.goal, Profile: vocab.Profile(o.profile), Risk: vocab.Risk(o.risk),
		Criteria: o.criteria, Evals: o.evals, Surfaces: o.surfaces, Worker: o.worker, Reviewers: o.reviewers,
		RetryBudget: o.retryBudget, CreatedAt: time.Now(),
	}
	switch s.Profile {
	case vocab.ImplementationChange, vocab.ArtifactOnly, vocab.ClosureReady:
	default:
		return s, usagef("--profile %q: want implementation_change, artifact_only or closure_ready", o.profile)
	}
	switch s.Risk {
	case vocab.RiskLow, vocab.RiskNormal, vocab.RiskHigh, vocab.RiskCritical:
	default:
		return s, usagef("--risk %q: want low, normal, high or critical", o.risk)
	}
	for _, d := range o.dimensions {
		name, n, ok := strings.Cut(d, "=")
		th, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || th < 1 || th > 5 {
			return s, usagef("--dimension %q: want NAME=THRESHOLD with a threshold 1..5, e.g. code_quality=3", d)
		}
		s.Dimensions = append(s.Dimensions, gate.Dimension{Name: name, Threshold: th})
	}
	if o.from != "" {
		title, items, err := readCriteriaFile(o.from)
		if err != nil {
			return s, err
		}
		s.Criteria = append(s.Criteria, items...)
		if s.Title == "" {
			s.Title = title
		}
	}
	return s, nil
}

// skeletonNotes say which fields still hold a placeholder or are empty.
func skeletonNotes(o taskNewOptions) []string {
	var notes []string
	if len(o.criteria) == 0 && o.from == "" {
		notes = append(notes, "acceptance_criteria holds a placeholder that nothing satisfies: replace it (or use --criterion)")
	}
	if len(o.evals) == 0 && o.profile == string(vocab.ImplementationChange) {
		notes = append(notes, "eval_commands is empty: tier 1 will be skipped (add them, or use --eval)")
	}
	if len(o.surfaces) == 0 {
		notes = append(notes, "scope.surfaces is empty: every changed file will be out of scope (add them, or use --surface)")
	}
	return notes
}

// listItem is one markdown list item: "- x", "* x", "+ x", "1. x", "1) x", with an optional
// task-list box "[ ]" or "[x]".
var listItem = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$`)

// maxFromBytes bounds a --from file (a contract is at most 4 MiB).
const maxFromBytes = 1 << 20

// readCriteriaFile reads a markdown file: its first "# " heading and its list items, in order.
func readCriteriaFile(name string) (title string, items []string, err error) {
	f, err := os.Open(name)
	if err != nil {
		return "", nil, usagef("--from: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFromBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("--from %s: %w", name, err)
	}
	if len(b) > maxFromBytes {
		return "", nil, usagef("--from %s: larger than %d bytes", name, maxFromBytes)
	}
	if !utf8.Valid(b) {
		return "", nil, usagef("--from %s: not UTF-8 text", name)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), maxFromBytes)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "# "); ok && title == "" && len(items) == 0 {
			title = strings.TrimSpace(h)
			continue
		}
		if m := listItem.FindStringSubmatch(line); m != nil {
			items = append(items, m[1])
		}
	}
	if len(items) == 0 {
		return "", nil, usagef("--from %s: no list items (- item, * item or 1. item) to take as criteria", name)
	}
	return title, items, sc.Err()
}
