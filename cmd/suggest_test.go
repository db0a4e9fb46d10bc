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

// TestHarnessNamesSuggestCloseOnes: --harness takes the four names (any letter case, once each);
// a typo is a usage error that names the close ones, and a name close to none suggests nothing.
func TestHarnessNamesSuggestCloseOnes(t *testing.T) {
	got, err := harnessNames([]string{"Claude", " cursor", "claude"}, true)
	assert.NoError(t, err)
	assert.Equal(t, []string{"claude", "cursor"}, got)
	got, err = harnessNames(nil, false)
	assert.NoError(t, err)
	assert.Empty(t, got)
	_, err = harnessNames([]string{"copliot"}, true)
	assert.EqualError(t, err, `--harness "copliot": geas installs hooks for claude, codex, copilot, cursor; did you mean "copilot"?`)
	assert.Equal(t, ExitUsage, exitCode(err))
	_, err = harnessNames([]string{"co"}, true)
	assert.ErrorContains(t, err, `did you mean "codex" or "copilot"?`)
	_, err = harnessNames([]string{"windsurf"}, true)
	assert.NotContains(t, err.Error(), "did you mean")
	_, err = harnessNames(nil, true)
	assert.Equal(t, ExitUsage, exitCode(err))
}
