// Command geasdocs writes geas's command reference, one Markdown file per command, into DIR
// (default docs/cli, from the repository root):
//
//	go run ./cmd/geasdocs [DIR]
//
// It is a command of its own, not a geas subcommand, so that cobra's doc generator and the
// Markdown renderer it links stay out of the geas binary (their package inits ran at every gate
// start-up).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"

	"github.com/geas-dev/geas/cmd"
)

func main() {
	dir := cmd.DefaultCLIDocsDir
	switch len(os.Args) {
	case 1:
	case 2:
		dir = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/geasdocs [DIR]")
		os.Exit(64)
	}
	if err := cmd.WriteCLIDocs(dir, doc.GenMarkdownTree); err != nil {
		fmt.Fprintln(os.Stderr, "geasdocs:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote the command reference to %s\n", dir)
}
