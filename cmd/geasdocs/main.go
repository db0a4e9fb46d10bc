// Command geasdocs writes geas's command reference from the command tree: one Markdown file per
// command into DIR (default docs/cli, from the repository root), or with -man one man page per
// command (section 1) into DIR:
//
//	go run ./cmd/geasdocs [DIR]
//	go run ./cmd/geasdocs -man DIR
//
// It is a command of its own, not a geas subcommand, so that cobra's doc generators and the
// Markdown and roff renderers they link stay out of the geas binary (their package inits ran at
// every gate start-up).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/geas-dev/geas/cmd"
)

// Exit codes: 0 written, 1 could not write, 64 usage.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 64
)

const usage = `usage: go run ./cmd/geasdocs [DIR]       the Markdown reference (default ` + cmd.DefaultCLIDocsDir + `)
       go run ./cmd/geasdocs -man DIR   man pages, one per command (section 1)`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("geasdocs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	manDir := fs.String("man", "", "write man pages into `DIR`")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "geasdocs: %v\n%s\n", err, usage)
		return exitUsage
	}
	var (
		dir  string
		gen  func(*cobra.Command, string) error
		what string
	)
	switch {
	case *manDir != "" && fs.NArg() == 0:
		dir, gen, what = *manDir, manTree, "the man pages"
	case *manDir == "" && fs.NArg() <= 1:
		dir, gen, what = cmd.DefaultCLIDocsDir, doc.GenMarkdownTree, "the command reference"
		if fs.NArg() == 1 {
			dir = fs.Arg(0)
		}
	default:
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	if err := cmd.WriteCLIDocs(dir, gen); err != nil {
		fmt.Fprintln(stderr, "geasdocs:", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s to %s\n", what, dir)
	return exitOK
}

// manTree writes the man pages of c and its subcommands into dir, named geas-task-new.1 and so
// on, with the geas version as their source (SOURCE_DATE_EPOCH, when set, dates them).
func manTree(c *cobra.Command, dir string) error {
	keepIndentedBlocks(c)
	return doc.GenManTree(c, &doc.GenManHeader{Section: "1", Source: "geas " + cmd.Version(), Manual: "geas manual"}, dir)
}

// keepIndentedBlocks makes the tables of the help texts (runs of lines indented by spaces, which
// geas --help prints as they are) Markdown code blocks for the man page renderer, which would
// otherwise run their rows together as one paragraph: each indented line gets two more spaces, so
// at least four, and a blank line before the run. c's tree is WriteCLIDocs' fresh one.
func keepIndentedBlocks(c *cobra.Command) {
	lines := strings.Split(c.Long, "\n")
	out := make([]string, 0, len(lines)+4)
	prevIndented := false
	for _, l := range lines {
		indented := strings.HasPrefix(l, "  ")
		if indented {
			if !prevIndented && len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			l = "  " + l
		}
		out = append(out, l)
		prevIndented = indented
	}
	c.Long = strings.Join(out, "\n")
	for _, sc := range c.Commands() {
		keepIndentedBlocks(sc)
	}
}
