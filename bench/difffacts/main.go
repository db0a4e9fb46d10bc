// Command difffacts does, once, the diff work of a gate run that scans added lines: open the
// repository, resolve two revisions, list the files changed between them and read every line the
// diff adds. Timed as a whole process against `git diff --name-only --no-renames` and
// `git diff -U0` (see bench/README.md).
//
//	difffacts REPO BASE HEAD [-dump]
//
// It prints "files=N lines=M binary=B"; with -dump first every changed file ("file PATH") and
// every added line ("line PATH:N:TEXT"), to compare two builds or the git CLI.
package main

import (
	"fmt"
	"os"

	"github.com/geas-dev/geas/internal/git"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "difffacts:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 && (len(args) != 4 || args[3] != "-dump") {
		return fmt.Errorf("usage: difffacts REPO BASE HEAD [-dump]")
	}
	dump := len(args) == 4
	repo, err := git.Open(args[0])
	if err != nil {
		return err
	}
	defer repo.Close()
	base, err := repo.Resolve(args[1])
	if err != nil {
		return err
	}
	head, err := repo.Resolve(args[2])
	if err != nil {
		return err
	}
	files, err := repo.ChangedFiles(base, head)
	if err != nil {
		return err
	}
	if dump {
		for _, f := range files {
			fmt.Printf("file %s\n", f)
		}
	}
	scan, err := repo.ScanAdded(base, head, func(l git.AddedLine) error {
		if dump {
			fmt.Printf("line %s:%d:%s\n", l.Path, l.Line, l.Text)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("files=%d lines=%d binary=%d\n", len(files), scan.Lines, len(scan.Binary))
	return nil
}
