package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// suggestionDistance is the edit distance within which a subcommand is suggested for an unknown
// one (cobra's default, which its SuggestionsFor applies only when cobra reports the error itself).
const suggestionDistance = 2

// unknownCommand is the usage error for args given to c, a command that only holds subcommands:
// args[0] names none of them, with the subcommands close to it; nil when c has no subcommands or
// no args were given.
func unknownCommand(c *cobra.Command, args []string) error {
	if !c.HasSubCommands() || len(args) == 0 {
		return nil
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = suggestionDistance
	}
	return usagef("unknown command %q for %q%s", args[0], c.CommandPath(), didYouMean(c.SuggestionsFor(args[0])))
}

// didYouMean is the end of an unknown-command error: `; did you mean "gate"?` for the commands
// cobra finds close to what was typed (SuggestionsFor: a case-insensitive edit distance of at
// most 2, or a prefix), or nothing when none is.
func didYouMean(suggestions []string) string {
	if len(suggestions) == 0 {
		return ""
	}
	quoted := make([]string, len(suggestions))
	for i, s := range suggestions {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	if len(quoted) == 1 {
		return "; did you mean " + quoted[0] + "?"
	}
	return "; did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?"
}

// closeNames returns the names close to typed by the rule cobra suggests subcommands with (a
// case-insensitive edit distance of at most 2, or a prefix), for a flag that takes one of a few
// names (geas init --harness).
func closeNames(typed string, names []string) []string {
	parent := &cobra.Command{Use: "x", SuggestionsMinimumDistance: suggestionDistance}
	for _, n := range names {
		parent.AddCommand(&cobra.Command{Use: n, Run: func(*cobra.Command, []string) {}})
	}
	return parent.SuggestionsFor(typed)
}
