// Command gitfacts does, once, what a gate run does with git: open the repository, resolve two
// revisions, decide whether the first is an ancestor of the second and list the files changed
// between them. bench/gitspeed.sh times it as a whole process, start-up included, against the two
// git processes that give the same facts.
//
//	gitfacts REPO BASE HEAD
//
// It prints "ancestor=true|false files=N".
package main

import (
	"fmt"
	"os"

	"github.com/geas-dev/geas/internal/git"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gitfacts:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: gitfacts REPO BASE HEAD")
	}
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
	ok, err := repo.IsAncestor(base, head)
	if err != nil {
		return err
	}
	files, err := repo.ChangedFiles(base, head)
	if err != nil {
		return err
	}
	fmt.Printf("ancestor=%v files=%d\n", ok, len(files))
	return nil
}
