// Command pairtime times two sides, each a sequence of whole processes, interleaved pair by pair
// so that both see the same machine load, and prints one line a pair: for side A then side B the
// wall time and the CPU time (user + system, from each process's rusage) in microseconds, and
// the largest peak RSS of the side's processes in KiB. The side that runs first alternates. A
// process may exit 0 to MAX (default 1: git merge-base --is-ancestor answers with 1; 3 for a gate,
// whose exit code is its verdict); any other exit stops it. -between SCRIPT runs `sh -c SCRIPT`,
// untimed, after each side (bench/checkout.sh removes the checkout a side made).
// bench/gitgit.sh and bench/gate_vs_git.sh use it.
//
//	pairtime [-exit MAX] [-between SCRIPT] PAIRS A1 ARGS... [-- A2 ARGS...] == B1 ARGS... [-- B2 ARGS...]
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pairtime:", err)
		os.Exit(1)
	}
}

// sample is one side's cost in one pair.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// maxExit is the largest exit code a timed process may end with.
var maxExit = 1

// between is the shell script run, untimed, after each side; "" for none.
var between string

func run(args []string) error {
	if len(args) > 2 && args[0] == "-exit" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 || n > 255 {
			return fmt.Errorf("-exit %q is not an exit code", args[1])
		}
		maxExit, args = n, args[2:]
	}
	if len(args) > 2 && args[0] == "-between" {
		between, args = args[1], args[2:]
	}
	if len(args) < 4 {
		return fmt.Errorf("usage: pairtime [-exit MAX] [-between SCRIPT] PAIRS A1 ARGS... [-- A2 ARGS...] == B1 ARGS... [-- B2 ARGS...]")
	}
	pairs, err := strconv.Atoi(args[0])
	if err != nil || pairs < 1 {
		return fmt.Errorf("PAIRS %q is not a positive number", args[0])
	}
	i := slices.Index(args, "==")
	if i < 2 || i == len(args)-1 {
		return fmt.Errorf("want commands on both sides of ==")
	}
	sides := [2][][]string{split(args[1:i]), split(args[i+1:])}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	for p := range pairs {
		var got [2]sample
		for k := range 2 {
			s := (p + k) % 2 // A first in even pairs, B first in odd ones
			if got[s], err = runSide(sides[s], devnull); err != nil {
				return err
			}
			if between != "" {
				if _, _, err := runOne([]string{"sh", "-c", between}, devnull); err != nil {
					return err
				}
			}
		}
		fmt.Printf("%d %d %d %d %d %d\n", got[0].wall.Microseconds(), got[0].cpu.Microseconds(), got[0].rssKiB,
			got[1].wall.Microseconds(), got[1].cpu.Microseconds(), got[1].rssKiB)
	}
	return nil
}

// split cuts a side's arguments at each "--" into commands.
func split(args []string) [][]string {
	var cmds [][]string
	for len(args) > 0 {
		i := slices.Index(args, "--")
		if i < 0 {
			i = len(args)
		}
		if i > 0 {
			cmds = append(cmds, args[:i])
		}
		args = args[min(i+1, len(args)):]
	}
	return cmds
}

// runSide runs the commands one after the other, output to out, and returns their total cost.
func runSide(cmds [][]string, out *os.File) (sample, error) {
	var s sample
	start := time.Now()
	for _, c := range cmds {
		cpu, rss, err := runOne(c, out)
		if err != nil {
			return s, err
		}
		s.cpu += cpu
		s.rssKiB = max(s.rssKiB, rss)
	}
	s.wall = time.Since(start)
	return s, nil
}

// lookPath finds a command the way a shell would, for names without a slash.
func lookPath(name string) (string, error) {
	if strings.ContainsRune(name, '/') {
		return name, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH", name)
}
