package cmd

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/report"
	"github.com/geas-dev/geas/schemas"
)

// versionInfo is what geas version prints: the build, and the file formats this gate reads.
type versionInfo struct {
	// Version is the module version ("v1.2.3"), or "(devel)" for a build from a checkout.
	Version string `json:"version"`
	// Short is the one-word version the MCP server reports too: the module version, or for a
	// build from a checkout "devel" with the commit and "-dirty" when the tree was modified.
	Short    string `json:"short"`
	Module   string `json:"module"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"revision_time,omitempty"`
	Modified *bool  `json:"modified,omitempty"`
	// Note, for a build that carries neither a module version nor a commit, says how to get one.
	Note     string          `json:"note,omitempty"`
	Go       string          `json:"go"`
	Platform string          `json:"platform"`
	Formats  []formatVersion `json:"formats"`
}

// formatVersion is one geas file format the gate reads, with the version its files carry.
type formatVersion struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
}

// modulePath is the module geas is built from, shown when the build info has none.
const modulePath = "github.com/geas-dev/geas"

// buildVersion reads the build from debug.ReadBuildInfo: the module version, and for a build from
// a checkout (version "(devel)") the vcs revision, time and modified flag the go command stamped.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Module: modulePath, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.Main.Path != "" {
			v.Module = bi.Main.Path
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				m := s.Value == "true"
				v.Modified = &m
			}
		}
	}
	v.Short = shortVersion(v)
	v.Note = unstampedNote(v)
	return v
}

// unstampedNote says how to get a build that names its version, for one that names none: a
// "(devel)" build without a vcs revision (go run, go test, a copy without .git, -buildvcs=false).
func unstampedNote(v versionInfo) string {
	if v.Version != "(devel)" || v.Revision != "" {
		return ""
	}
	return "this build names no version or commit: install a release with `go install " + v.Module + "/cmd/geas@latest` " +
		"(or @vX.Y.Z), or build in a git clone with `go install ./cmd/geas` (without -buildvcs=false) to stamp the commit"
}

// Version is the one-word version geas version prints first: the module version, or
// "devel[-REV12][-dirty]" for a build from a checkout (the man pages name their source with it).
func Version() string { return buildVersion().Short }

// shortVersion is the module version, or "devel[-REV12][-dirty]" for a build from a checkout
// (report.ShortVersion, which names the version in SARIF logs too).
func shortVersion(v versionInfo) string {
	return report.ShortVersion(v.Version, v.Revision, v.Modified != nil && *v.Modified)
}

// readFormats lists the geas file formats the gate reads, each kind once per geas release whose
// files it reads (schemas.FormatVersions: geas v1.0, and v1.4.0 for the kinds that read both),
// the older release's first.
func readFormats() []formatVersion {
	var out, later []formatVersion
	for _, k := range schemas.Kinds() {
		for i, fv := range schemas.FormatVersions(k) {
			if i == 0 {
				out = append(out, formatVersion{Schema: string(k), Version: fv})
			} else {
				later = append(later, formatVersion{Schema: string(k), Version: fv})
			}
		}
	}
	return append(out, later...)
}

func newVersionCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the geas version, the Go version, and the geas file formats it reads",
		Long: `Print the module version geas was built at (from the build info; "(devel)" for a build
from a checkout, with the commit, its time and whether the tree was modified), the Go version,
and the version of each geas file format it reads (geas v1.0 and, for contracts, records,
evidence and debt registers, geas v1.4.0). geas --version prints the same. A build that
names neither a version nor a commit (go run, a copy without .git, -buildvcs=false) says how to
get one that does.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runVersion(g) },
	}
}

// addVersionFlag gives the root command --version, which prints what geas version prints (cobra's
// own version flag prints a fixed template, which knows no --format json).
func addVersionFlag(root *cobra.Command, g *globalOptions) {
	var show bool
	root.Flags().BoolVar(&show, "version", false, "print the version (as geas version does)")
	next := root.RunE
	root.RunE = func(c *cobra.Command, args []string) error {
		if show {
			return runVersion(g)
		}
		return next(c, args)
	}
}

func runVersion(g *globalOptions) error {
	v := buildVersion()
	v.Formats = readFormats()
	return g.output(v, func(w io.Writer) { writeVersionText(w, v) })
}

func writeVersionText(w io.Writer, v versionInfo) {
	fmt.Fprintf(w, "geas %s\n", v.Short)
	fmt.Fprintf(w, "  module    %s %s\n", v.Module, v.Version)
	if v.Revision != "" {
		var notes []string
		if v.Time != "" {
			notes = append(notes, v.Time)
		}
		if v.Modified != nil && *v.Modified {
			notes = append(notes, "modified")
		}
		rev := v.Revision
		if len(notes) > 0 {
			rev += " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "  revision  %s\n", rev)
	}
	if v.Note != "" {
		fmt.Fprintf(w, "  note      %s\n", v.Note)
	}
	fmt.Fprintf(w, "  go        %s %s\n", v.Go, v.Platform)
	byVersion := map[string][]string{}
	var order []string
	for _, f := range v.Formats {
		if _, seen := byVersion[f.Version]; !seen {
			order = append(order, f.Version)
		}
		byVersion[f.Version] = append(byVersion[f.Version], f.Schema)
	}
	for _, ver := range order {
		fmt.Fprintf(w, "  reads     geas v%s files: %s\n", ver, strings.Join(byVersion[ver], ", "))
	}
}
