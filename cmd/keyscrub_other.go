//go:build !linux

package cmd

// scrubSigningKey does nothing where there is no /proc/PID/environ to wipe (see keyscrub_linux.go).
func scrubSigningKey() {}
