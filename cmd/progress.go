package cmd

import "github.com/geas-dev/geas/tiers"

// progress returns the live progress reporter for eval commands on stderr, or nil when quiet.
func (g *globalOptions) progress(quiet bool) tiers.Progress {
	return nil
}
