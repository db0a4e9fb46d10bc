// Command wtcheck does, once, what a gate run does to compare the working tree with the head
// (SPEC §5.1): open the repository, resolve HEAD and run internal/git's working-tree check with the
// bookkeeping paths exempt. bench/worktree.sh times it as a whole process, start-up included,
// against `git status --porcelain`.
//
//	wtcheck REPO
//
// It prints "entries=N hashed=N differ=N".
package main

import (
	"fmt"
	"os"

	"github.com/geas-dev/geas/internal/git"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wtcheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: wtcheck REPO")
	}
	repo, err := git.Open(args[0])
	if err != nil {
		return err
	}
	defer repo.Close()
	head, err := repo.Resolve("HEAD")
	if err != nil {
		return err
	}
	rep, err := repo.CheckWorktree(head, []string{".geas/missions/", ".geas/state/", ".geas/memory/", ".geas/recovery/", ".geas/rules.md"})
	if err != nil {
		return err
	}
	fmt.Printf("entries=%d hashed=%d differ=%d\n", rep.Entries, rep.Hashed, len(rep.Paths))
	return nil
}
