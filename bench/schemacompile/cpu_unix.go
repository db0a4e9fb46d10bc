//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpu is the process's CPU time so far, user and system.
func cpu() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
