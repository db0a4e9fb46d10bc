package cmd

import "github.com/spf13/cobra"

func newGateVerifyCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "verify [--task T | --all] [--apply]",
		Short: "Re-evaluate passed tasks against fresh evidence and check their history chains",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return usagef("gate verify: %v", errNotBuilt) },
	}
}
