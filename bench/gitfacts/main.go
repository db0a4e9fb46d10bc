// Command gitfacts does, once, what a gate run does with git: open the repository, resolve two
// revisions, decide whether the first is an ancestor of the second and list the files changed
// between them. bench/gitgit.sh times it as a whole process, start-up included, against the two
// git processes that give the same facts.
//
//	gitfacts [-z] REPO BASE HEAD
//
// It prints "ancestor=true|false files=N"; with -z, "ancestor=true|false" and a newline, then the
// changed files each followed by a NUL byte, as `git diff --name-only -z --no-renames` lists them.
package main

import (
	"bufio"
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
	names := len(args) > 0 && args[0] == "-z"
	if names {
		args = args[1:]
	}
	if len(args) != 3 {
		return fmt.Errorf("usage: gitfacts [-z] REPO BASE HEAD")
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
	if !names {
		fmt.Printf("ancestor=%v files=%d\n", ok, len(files))
		return nil
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "ancestor=%v\n", ok)
	for _, f := range files {
		w.WriteString(f)
		w.WriteByte(0)
	}
	return w.Flush()
}
