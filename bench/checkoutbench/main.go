// Command checkoutbench makes, once, the isolated checkout a gate run makes (git.Repo.Checkout):
// open the repository, check COMMIT out into a new temporary directory ($TMPDIR) and print the
// directory. With -overlay BASE PATHSFILE it then replaces the paths listed in PATHSFILE (one a
// line, slash-separated) with their versions at BASE (Checkout.Overlay), as
// `git checkout BASE -- PATHS` does in a worktree. The checkout is left in place: bench/checkout.sh
// times this as a whole process, start-up included, and removes the directory between pairs.
// With -cpuprofile FILE it writes a CPU profile of the checkout.
//
//	checkoutbench [-cpuprofile FILE] REPO COMMIT [-overlay BASE PATHSFILE]
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/geas-dev/geas/internal/git"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "checkoutbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var profile string
	if len(args) > 1 && args[0] == "-cpuprofile" {
		profile, args = args[1], args[2:]
	}
	var base, pathsFile string
	if len(args) == 5 && args[2] == "-overlay" {
		base, pathsFile, args = args[3], args[4], args[:2]
	}
	if len(args) != 2 {
		return fmt.Errorf("usage: checkoutbench [-cpuprofile FILE] REPO COMMIT [-overlay BASE PATHSFILE]")
	}
	var paths []string
	if pathsFile != "" {
		data, err := os.ReadFile(pathsFile)
		if err != nil {
			return err
		}
		for line := range strings.Lines(string(data)) {
			if line = strings.TrimRight(line, "\n"); line != "" {
				paths = append(paths, line)
			}
		}
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	repo, err := git.Open(args[0])
	if err != nil {
		return err
	}
	defer repo.Close()
	head, err := repo.Resolve(args[1])
	if err != nil {
		return err
	}
	co, err := repo.Checkout(head)
	if err != nil {
		return err
	}
	if base != "" {
		b, err := repo.Resolve(base)
		if err != nil {
			return err
		}
		if err := co.Overlay(repo, b, paths); err != nil {
			return err
		}
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, co.Dir)
	return w.Flush()
}
