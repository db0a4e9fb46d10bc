package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
)

type taskRevalidateOptions struct {
	mission, task, base, by, reason string
}

func newTaskRevalidateCmd(g *globalOptions) *cobra.Command {
	var o taskRevalidateOptions
	c := &cobra.Command{
		Use:   "revalidate --task T [--base REV --by AUTHORITY --reason TEXT]",
		Short: "Report the drift since a task's pinned base; with --base, re-pin it and approve (authorities only)",
		Long: `Without --base, report the drift since the task's pinned base: the base (as the pinned
rules hold it, or the contract's when nothing is pinned yet), the head the gate judges
(integration.json's commit when it names one, else HEAD), and the files changed between
them (renames count both paths; relative to the project root), sorted as the scope check
sorts them: inside the surfaces, outside but shared, outside. The orchestration's
bookkeeping is counted apart. Nothing is written.

With --base REV --by AUTHORITY --reason TEXT, re-pin the base in one step: REV is
resolved to the full SHA of the commit it names (a SHA, a branch, a tag, HEAD~1), the
contract's base_snapshot is set to it (the contract validated before it is written), and
the rules it makes are approved exactly as geas task approve approves them (an approval
entry in the gate history, contract.pinned.json, an approval event; with GEAS_GATE_KEY
the approval carries the key's MAC), so the next gate run sees no rules_changed. Each
field the approval changes in the pinned rules is printed (approved: base_snapshot: ...),
any other field changed since the pin included: it is approved too.

Both writes are made under the task's lock. A command cut short between them leaves a
base the pin does not hold: the next gate run blocks with rules_changed naming
base_snapshot, and the same command run again approves it.

Use it when the base a task was created with no longer fits: the work of earlier tasks
landed after it was pinned, and the scope check counts their files against this task.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runTaskRevalidate(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.task, "id", "", "task id (same as --task, as geas v1 spells it)")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.base, "base", "", "re-pin the base to the commit REV names (with --by and --reason)")
	c.Flags().StringVar(&o.by, "by", "", "the authority re-pinning the base, e.g. orchestration-authority")
	c.Flags().StringVar(&o.reason, "reason", "", "why the base moves")
	return c
}

// revalidateOutput is what geas task revalidate prints with --format json.
type revalidateOutput struct {
	MissionID       string   `json:"mission_id"`
	TaskID          string   `json:"task_id"`
	PinnedBase      string   `json:"pinned_base,omitempty"`
	PinnedCommit    string   `json:"pinned_commit,omitempty"`
	PinnedBy        string   `json:"pinned_by,omitempty"`
	ContractBase    string   `json:"contract_base,omitempty"`
	Base            string   `json:"base"`
	Head            string   `json:"head"`
	HeadFrom        string   `json:"head_from"`
	BaseIsAncestor  bool     `json:"base_is_ancestor"`
	Changed         []string `json:"changed"`
	InSurfaces      []string `json:"in_surfaces"`
	Shared          []string `json:"shared"`
	OutsideSurfaces []string `json:"outside_surfaces"`
	Bookkeeping     int      `json:"bookkeeping"`
	// The re-pin, with --base.
	NewBase       string   `json:"new_base,omitempty"`
	BaseWritten   *bool    `json:"base_written,omitempty"`
	By            string   `json:"by,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	RulesSHA256   string   `json:"rules_sha256,omitempty"`
	PreviousRules string   `json:"previous_rules_sha256,omitempty"`
	Pinned        string   `json:"pinned,omitempty"`
	Hash          string   `json:"hash,omitempty"`
	Changes       []string `json:"changes,omitempty"`
	Notes         []string `json:"notes"`
}

func runTaskRevalidate(c *cobra.Command, g *globalOptions, o taskRevalidateOptions) error {
	switch {
	case o.task == "":
		return usagef("--task is required")
	case o.base == "" && (o.by != "" || o.reason != ""):
		return usagef("--by and --reason approve a new base: give it with --base REV")
	case o.base != "" && o.by == "":
		return usagef("--base needs --by AUTHORITY: only an authority re-pins a task's base")
	case o.base != "" && strings.TrimSpace(o.reason) == "":
		return usagef("--reason is required with --base")
	}
	if o.base != "" {
		if err := checkAuthority(o.by, "re-pin a task's base"); err != nil {
			return err
		}
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	done, err := gate.Revalidate(c.Context(), t.ref(), gate.Revalidation{Base: o.base, By: o.by, Reason: o.reason})
	g.printNotes(t.task, done.Notes)
	if err != nil {
		return err
	}
	out := revalidateOutputOf(t.mission, t.task, o, done)
	return g.output(out, func(w io.Writer) { printRevalidate(w, out) })
}

func revalidateOutputOf(mission, task string, o taskRevalidateOptions, done *gate.Revalidated) revalidateOutput {
	out := revalidateOutput{MissionID: mission, TaskID: task, PinnedBase: done.PinnedBase, PinnedCommit: done.PinnedCommit,
		PinnedBy: done.PinnedBy, ContractBase: done.ContractBase, Notes: orEmpty(done.Notes)}
	if d := done.Drift; d != nil {
		out.Base, out.Head, out.HeadFrom, out.BaseIsAncestor = d.Base, d.Head, d.HeadFrom, d.Ancestor
		out.Changed, out.InSurfaces, out.Shared, out.OutsideSurfaces = orEmpty(d.Changed), orEmpty(d.InSurfaces), orEmpty(d.Shared), orEmpty(d.Outside)
		out.Bookkeeping = d.Bookkeeping
	}
	if a := done.Approved; a != nil {
		written := done.BaseWritten
		out.NewBase, out.BaseWritten, out.By, out.Reason = done.NewBase, &written, o.by, o.reason
		out.RulesSHA256, out.Pinned, out.Hash = a.RulesSHA256, ".geas/"+a.Pinned, a.Hash
		if a.HadPin {
			out.PreviousRules = a.Previous
		}
		out.Changes = done.Changes
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printRevalidate prints the drift (and the re-pin) as text.
func printRevalidate(w io.Writer, o revalidateOutput) {
	if o.NewBase != "" {
		how := "base_snapshot set to"
		if o.BaseWritten != nil && !*o.BaseWritten {
			how = "base_snapshot already"
		}
		fmt.Fprintf(w, "task %s: %s %s; rules pinned at rules_sha256 %s (approved by %s)\n", o.TaskID, how, o.NewBase, o.RulesSHA256, o.By)
		if o.PreviousRules != "" && o.PreviousRules != o.RulesSHA256 {
			fmt.Fprintf(w, "  replaces the pin %s\n", o.PreviousRules)
		}
		for _, c := range o.Changes {
			fmt.Fprintf(w, "  approved: %s\n", c)
		}
		fmt.Fprintf(w, "  drift since the new base:\n")
	} else {
		pinned := "the contract's base (nothing pinned yet)"
		if o.PinnedBy != "" {
			pinned = "pinned by " + o.PinnedBy
		}
		fmt.Fprintf(w, "task %s: drift since base_snapshot %s (%s)\n", o.TaskID, o.PinnedBase, pinned)
		if o.ContractBase != "" {
			fmt.Fprintf(w, "  the contract names base_snapshot %s, not approved\n", o.ContractBase)
		}
	}
	fmt.Fprintf(w, "  base: %s\n", o.Base)
	fmt.Fprintf(w, "  head: %s (%s)\n", o.Head, o.HeadFrom)
	if !o.BaseIsAncestor {
		fmt.Fprintf(w, "  the base is not an ancestor of the head\n")
	}
	files := "files"
	if len(o.Changed) == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "  %d %s changed since the base", len(o.Changed), files)
	if o.Bookkeeping > 0 {
		fmt.Fprintf(w, " (and %d of the orchestration's bookkeeping, not counted)", o.Bookkeeping)
	}
	fmt.Fprintln(w)
	for _, l := range []struct {
		what  string
		files []string
	}{{"in surfaces ", o.InSurfaces}, {"shared      ", o.Shared}, {"outside     ", o.OutsideSurfaces}} {
		for _, f := range l.files {
			fmt.Fprintf(w, "    %s %s\n", l.what, f)
		}
	}
	if o.NewBase == "" && len(o.OutsideSurfaces) > 0 {
		fmt.Fprintf(w, "  %d outside the surfaces: the scope check fails on them; if they are earlier tasks' work, re-pin the base past it:\n", len(o.OutsideSurfaces))
		fmt.Fprintf(w, "    geas task revalidate --task %s --base REV --by AUTHORITY --reason TEXT\n", o.TaskID)
	}
}
