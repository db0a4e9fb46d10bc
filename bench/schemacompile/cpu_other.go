//go:build !unix

package main

import (
	"errors"
	"time"
)

func cpu() (time.Duration, error) {
	return 0, errors.New("the CPU time is read with getrusage, which this platform lacks")
}
