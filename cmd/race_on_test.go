//go:build race

package cmd

// raceEnabled: this test binary (and the geas it runs as a subprocess, which is the same binary)
// is built with the race detector, which takes several times the memory and time of a normal
// build, so memory bounds measured here say nothing about geas. They are checked by bench/rss.sh
// on a normal build instead.
const raceEnabled = true
