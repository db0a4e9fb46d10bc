package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/report"
)

// defaultFormats are what --format takes on every command not named in commandFormats.
var defaultFormats = []string{formatText, formatJSON}

// reportFormats are the renderers of package report: geas gate, gate --all and gate verify print
// their documents in each.
var reportFormats = []string{report.Text, report.JSON, report.JUnit, report.GitHub, report.SARIF}

// commandFormats is the one place that says which --format values a command accepts beyond the
// default text and json, by its command path. The --format help of each command, the refusal of
// a value it does not take, and -o (which only these commands have) all read it.
var commandFormats = map[string][]string{
	"geas gate":        reportFormats,
	"geas gate verify": reportFormats,
}

// acceptedFormats are the --format values c accepts: what its help names, what checkFormats
// lets through, and what a completion of --format should offer.
func acceptedFormats(c *cobra.Command) []string {
	if f, ok := commandFormats[c.CommandPath()]; ok {
		return f
	}
	return defaultFormats
}

// formatList is "a, b or c".
func formatList(formats []string) string {
	if len(formats) < 2 {
		return strings.Join(formats, "")
	}
	return strings.Join(formats[:len(formats)-1], ", ") + " or " + formats[len(formats)-1]
}

// formatUsage is the help of a --format flag that accepts formats.
func formatUsage(formats []string) string { return "output format: " + formatList(formats) }

// addFormatFlags gives each command of commandFormats a --format flag of its own, bound to the
// same option as the root's persistent one, whose help names what that command accepts (a local
// flag hides the inherited one in help and in the generated reference), and -o FORMAT=FILE.
// The root's persistent flag is described from defaultFormats.
func addFormatFlags(g *globalOptions, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f, ok := commandFormats[c.CommandPath()]; ok {
			c.Flags().StringVar(&g.format, "format", formatText, formatUsage(f))
			c.Flags().StringArrayVarP(&g.outputs, "output", "o", nil,
				"also write the report in `FORMAT=FILE` (repeatable; FORMAT one of --format's; FILE replaced atomically, relative to the current directory)")
		}
		for _, sc := range c.Commands() {
			walk(sc)
		}
	}
	walk(root)
}

// checkFormats refuses, before anything runs, a --format value c does not accept and any -o that
// could not be written after the run: a format c does not accept, a FILE that is empty or -,
// given twice, inside the project's .geas directory, a directory, or in a directory that is
// missing or where no file can be created. A recorded run therefore never loses an output it was
// asked for, short of the disk failing between this check and the write (then the verdict, its
// exit code and the other outputs stand, and stderr names the file that was lost).
func (g *globalOptions) checkFormats(c *cobra.Command) error {
	accepted := acceptedFormats(c)
	if !slices.Contains(accepted, g.format) {
		return usagef("--format %q: %s accepts %s", g.format, c.CommandPath(), formatList(accepted))
	}
	g.outFiles = nil
	seen := map[string]bool{}
	for _, o := range g.outputs {
		format, file, ok := strings.Cut(o, "=")
		switch {
		case !ok || format == "" || file == "":
			return usagef("-o %q: want FORMAT=FILE, e.g. -o junit=report.xml", o)
		case !slices.Contains(accepted, format):
			return usagef("-o %q: format %q: %s accepts %s", o, format, c.CommandPath(), formatList(accepted))
		case file == "-":
			return usagef("-o %q: standard output is --format's; give a file", o)
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return usagef("-o %q: %v", o, err)
		}
		if seen[abs] {
			return usagef("-o %q: %s is given twice", o, file)
		}
		seen[abs] = true
		if err := g.checkOutputFile(abs); err != nil {
			return usagef("-o %q: %v", o, err)
		}
		g.outFiles = append(g.outFiles, outputFile{format: format, path: abs, shown: file})
	}
	return nil
}

// outputFile is one -o FORMAT=FILE, checked.
type outputFile struct {
	format string
	path   string // absolute
	shown  string // as given
}

// checkOutputFile checks that abs can be replaced atomically: its directory exists and takes a
// new file, abs is not a directory, and it is not inside the project's .geas (whose files only
// geas's own validated writers write).
func (g *globalOptions) checkOutputFile(abs string) error {
	if err := g.outsideGeas(abs); err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", abs)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(dir, ".geas-output-check-*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// outsideGeas refuses an output file whose directory, its symbolic links resolved, is inside the
// project's .geas directory (whose files only geas's own validated writers write).
func (g *globalOptions) outsideGeas(abs string) error {
	dir := filepath.Dir(abs)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if p, err := g.openProject(); err == nil {
		geas, gerr := filepath.EvalSymlinks(filepath.Join(p.Dir, ".geas"))
		p.Close()
		rel, rerr := filepath.Rel(geas, realDir)
		inside := gerr == nil && rerr == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		if inside || (gerr == nil && underDir(geas, realDir)) {
			return fmt.Errorf("%s is inside the project's .geas directory, which only geas's own commands write", abs)
		}
	}
	return nil
}

// underDir reports whether dir or one of its ancestors is the directory top, compared as files
// (os.SameFile), not as names: on a case-insensitive file system (macOS, Windows) .GEAS is .geas,
// and a link's target keeps the case it was written in.
func underDir(top, dir string) bool {
	want, err := os.Stat(top)
	if err != nil {
		return false
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && os.SameFile(fi, want) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// writeOutputs writes each -o file with render, atomically (write to a temporary file, fsync,
// rename). A file that cannot be written is reported on stderr and the others are still
// written; the exit code stays the verdict's, which is what was recorded (SPEC §7.3).
func (g *globalOptions) writeOutputs(render func(r report.Renderer, w, diag io.Writer) error) {
	for _, o := range g.outFiles {
		var buf bytes.Buffer
		err := render(report.For(o.format), &buf, io.Discard)
		if err == nil {
			// Checked again: the run's eval commands (the agents' build) may have replaced the
			// directory with a link into .geas since checkFormats looked.
			err = g.outsideGeas(o.path)
		}
		if err == nil {
			err = gate.WriteOutputFile(o.path, buf.Bytes())
		}
		if err != nil {
			fmt.Fprintf(g.stderr, "geas: -o %s=%s was not written: %v\n", o.format, o.shown, err)
		}
	}
}
