package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/schemas"
)

func newSchemaCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [NAME]",
		Short: "List the embedded JSON Schemas, or print one",
		Long: `Without NAME, list the embedded schemas. With NAME (task-contract, record, evidence,
debt-register, decision, event, gate-policy; "contract" also works; _defs, the shared definitions
the others refer to), print that schema.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("schema takes at most one NAME, got %d", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runSchema(g, args) },
	}
}

func runSchema(g *globalOptions, args []string) error {
	if len(args) == 0 {
		kinds := schemas.Printable()
		return g.output(map[string]any{"schemas": kinds}, func(w io.Writer) {
			for _, k := range kinds {
				fmt.Fprintln(w, k)
			}
		})
	}
	k, ok := schemas.ParsePrintable(args[0])
	if !ok {
		return usagef("unknown schema %q; known: %v", args[0], schemas.Printable())
	}
	src, err := schemas.Source(k)
	if err != nil {
		return err
	}
	if g.format == formatJSON && !json.Valid(src) {
		return fmt.Errorf("embedded schema %s is not valid JSON", k)
	}
	_, err = g.stdout.Write(src)
	return err
}
