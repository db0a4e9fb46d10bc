//go:build !unix

package main

import (
	"errors"
	"os"
	"time"
)

// runOne needs rusage: on this system pairtime does not run.
func runOne([]string, *os.File) (time.Duration, int64, error) {
	return 0, 0, errors.New("pairtime needs a unix system (rusage)")
}
