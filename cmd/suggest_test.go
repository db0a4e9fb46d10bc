package cmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDidYouMeanNamesEverySuggestion: none, one, two and three suggestions, each quoted.
func TestDidYouMeanNamesEverySuggestion(t *testing.T) {
	assert.Equal(t, "", didYouMean(nil))
	assert.Equal(t, `; did you mean "gate"?`, didYouMean([]string{"gate"}))
	assert.Equal(t, `; did you mean "validate" or "version"?`, didYouMean([]string{"validate", "version"}))
	assert.Equal(t, `; did you mean "a", "b" or "c"?`, didYouMean([]string{"a", "b", "c"}))
}

// TestUnknownCommandOnlyForGroups: a command without subcommands, or no argument, is not an
// unknown-command error; a typo of a subcommand is, with the suggestion.
func TestUnknownCommandOnlyForGroups(t *testing.T) {
	root := newRootCmd(&globalOptions{})
	version, _, err := root.Find([]string{"version"})
	assert.NoError(t, err)
	assert.NoError(t, unknownCommand(version, []string{"x"}))
	assert.NoError(t, unknownCommand(root, nil))
	assert.EqualError(t, unknownCommand(root, []string{"gat"}), `unknown command "gat" for "geas"; did you mean "gate"?`)
	assert.Equal(t, ExitUsage, exitCode(unknownCommand(root, []string{"zzz"})))
}
