package cmd

import "github.com/spf13/cobra"

// runGateAll gates every gate-eligible task of the mission.
func runGateAll(c *cobra.Command, g *globalOptions, o gateOptions) error {
	return usagef("--all: %v", errNotBuilt)
}
