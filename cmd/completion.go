package cmd

import "github.com/spf13/cobra"

func registerCompletions(root *cobra.Command, g *globalOptions) {}
