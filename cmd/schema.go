package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/schemas"
)

func newSchemaCmd(g *globalOptions) *cobra.Command {
	var writeDir string
	c := &cobra.Command{
		Use:   "schema [NAME]",
		Short: "List the embedded JSON Schemas, or print one",
		Long: `Without NAME, list the embedded schemas. With NAME (task-contract, record, evidence,
debt-register, decision, event, gate-policy; "contract" also works; _defs, the shared definitions
the others refer to), print that schema.

The task-contract, record, evidence and debt-register schemas each read the files of geas v1.0
and of geas v1.4.0 (one schema, the union of both; the shape of a file tells its version, see
geas validate); --format json lists the geas versions each schema reads under "formats".

With --write DIR, write every schema into DIR as NAME.schema.json: their $ids and $refs resolve
one another there, so a file whose "$schema" names DIR/task-contract.schema.json (contract, gate
policy, evidence, decision and debt register accept a top-level "$schema"; the gate ignores it)
is checked by an editor offline.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("schema takes at most one NAME, got %d", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("write") {
				return runSchemaWrite(g, writeDir, args)
			}
			return runSchema(g, args)
		},
	}
	c.Flags().StringVar(&writeDir, "write", "", "write every schema into `DIR` as NAME.schema.json, for editors to bind offline")
	return c
}

func runSchemaWrite(g *globalOptions, dir string, args []string) error {
	if len(args) > 0 {
		return usagef("schema --write writes every schema; it takes no NAME, got %q", args[0])
	}
	if dir == "" {
		return usagef("schema --write needs a directory")
	}
	written, err := schemas.WriteDir(dir)
	if err != nil {
		return err
	}
	return g.output(map[string]any{"written": written}, func(w io.Writer) {
		for _, p := range written {
			fmt.Fprintln(w, p)
		}
	})
}

func runSchema(g *globalOptions, args []string) error {
	if len(args) == 0 {
		kinds := schemas.Printable()
		formats := map[string][]string{}
		for _, k := range kinds {
			if v := schemas.FormatVersions(k); len(v) > 0 {
				formats[string(k)] = v
			}
		}
		return g.output(map[string]any{"schemas": kinds, "formats": formats}, func(w io.Writer) {
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
