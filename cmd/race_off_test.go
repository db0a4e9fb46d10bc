//go:build !race

package cmd

// raceEnabled: see race_on_test.go.
const raceEnabled = false
