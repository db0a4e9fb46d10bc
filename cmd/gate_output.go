package cmd

import (
	"github.com/geas-dev/geas/tiers"
)

// writeGate prints gate results in the chosen format: text (the compact report of each), json (the
// result document; one object for one task), junit or github.
func (g *globalOptions) writeGate(results []*tiers.Result) error {
	switch g.format {
	case formatJSON:
		if len(results) == 1 {
			return writeJSON(g.stdout, results[0])
		}
		return writeJSON(g.stdout, results)
	case formatText:
		for _, res := range results {
			tiers.WriteText(g.stdout, res)
		}
		return nil
	}
	return writeGateFormat(g, results)
}

// writeGateFormat renders the junit and github formats.
func writeGateFormat(g *globalOptions, results []*tiers.Result) error {
	return usagef("--format %s: %v", g.format, errNotBuilt)
}
