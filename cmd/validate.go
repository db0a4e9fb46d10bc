package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/schemas"
)

type validateOptions struct {
	kind string
}

func newValidateCmd(g *globalOptions) *cobra.Command {
	var o validateOptions
	c := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate files against the embedded schemas",
		Long: `Validate each FILE against its schema. The kind comes from --kind, else from the file's
name and place: contract.json, record.json, evidence/*.json, debt-register.json,
gate-policy.json, decisions/**.json, *.event.json. Contracts also get the checks the
schema cannot express (durations, regexes, paths that must stay inside the project).
Exit 1 if any file is invalid.

Contracts, records, evidence and debt registers of geas v1.0 and of geas v1.4.0 are both
valid; which one a valid file is, is told by its shape and reported ("format" in --format
json; "geas v1.4.0" after the kind in text): a contract whose routing names a slot, evidence
with artifact_refs or revision_ref, a record whose self_check says unverified_cases, or a
file without the version geas v1.0 requires, is geas v1.4.0's.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("validate needs at least one FILE")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runValidate(g, o, args) },
	}
	c.Flags().StringVar(&o.kind, "kind", "", "schema of every FILE: task-contract, record, evidence, debt-register, decision, event, gate-policy")
	return c
}

type fileValidation struct {
	File  string `json:"file"`
	Kind  string `json:"kind"`
	Valid bool   `json:"valid"`
	// Format is the geas release whose format a valid file is ("1.0" or "1.4.0"; none for a
	// kind of the gate's own).
	Format string   `json:"format,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

func runValidate(g *globalOptions, o validateOptions, files []string) error {
	kinds := make([]schemas.Kind, len(files))
	for i, f := range files {
		k, ok := schemas.Kind(""), false
		if o.kind != "" {
			if k, ok = schemas.ParseKind(o.kind); !ok {
				return usagef("unknown --kind %q; known: %v", o.kind, schemas.Kinds())
			}
		} else if k, ok = schemas.KindForFile(f); !ok {
			return usagef("cannot tell the kind of %s from its name: pass --kind", f)
		}
		kinds[i] = k
	}
	results := make([]fileValidation, len(files))
	allValid := true
	for i, f := range files {
		r := fileValidation{File: f, Kind: string(kinds[i]), Valid: true}
		format, err := gate.ValidateFileFormat(kinds[i], f)
		if err != nil {
			r.Valid, allValid = false, false
			r.Errors = strings.Split(err.Error(), "\n")
		}
		r.Format = format
		results[i] = r
	}
	err := g.output(map[string]any{"valid": allValid, "files": results}, func(w io.Writer) {
		for _, r := range results {
			if r.Valid && r.Format == schemas.GeasV14 {
				fmt.Fprintf(w, "ok       %s (%s, geas v%s)\n", r.File, r.Kind, r.Format)
				continue
			}
			if r.Valid {
				fmt.Fprintf(w, "ok       %s (%s)\n", r.File, r.Kind)
				continue
			}
			fmt.Fprintf(w, "invalid  %s (%s)\n", r.File, r.Kind)
			for _, e := range r.Errors {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
	})
	if err != nil {
		return err
	}
	if !allValid {
		return &exitError{code: ExitRefused, silent: true}
	}
	return nil
}
