package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/gate"
)

// TestEveryInstalledHookIsACommand: each hook `geas init --harness` writes, for every harness,
// runs a `geas hook` subcommand that exists, so no install points a harness at a command that
// would fail at every stop (a failing hook lets the agent stop).
func TestEveryInstalledHookIsACommand(t *testing.T) {
	dir := t.TempDir()
	_, err := gate.InitWithHooks(dir, "m1", gate.Harnesses())
	require.NoError(t, err)
	hook, _, err := newRootCmd(&globalOptions{}).Find([]string{"hook"})
	require.NoError(t, err)
	known := map[string]bool{}
	for _, c := range hook.Commands() {
		known[c.Name()] = true
	}
	line := regexp.MustCompile(`geas hook ([a-z-]+)`)
	seen := map[string]bool{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range line.FindAllStringSubmatch(string(b), -1) {
			require.True(t, known[m[1]], "%s installs `geas hook %s`, which is not a command", path, m[1])
			seen[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	for _, want := range []string{"claude-stop", "claude-task-completed", "claude-pre-tool-use", "codex-stop", "copilot-stop", "cursor-stop"} {
		require.True(t, seen[want], "no harness installs `geas hook %s`", want)
	}
}
